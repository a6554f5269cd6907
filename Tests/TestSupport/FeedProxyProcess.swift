import Foundation
import Synchronization
@_exported import Primitives

/// The real `feedproxy` binary, started for a test and stopped with SIGTERM.
public final class FeedProxyProcess: @unchecked Sendable {
    public let process = Process()
    public private(set) var port = 0
    private let output = Locked<[String]>([])
    private let stderrText = Locked<String>("")

    public static var binaryPath: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("feedproxy").path
    }

    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    public enum LaunchError: Error { case didNotStart(String) }

    /// Starts the binary on a free port and waits for its "listening" line.
    public init(arguments: [String] = [], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: Self.binaryPath)
        process.arguments = ["--port", "0", "--threads", "2"] + arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CACHE_") && !$0.key.hasSuffix("_URL") }
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.currentDirectoryURL = Self.repositoryRoot
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let ready = DispatchSemaphore(value: 0)
        let portBox = Locked(0)
        // Logs arrive in batches that a pipe read may cut anywhere: keep the unfinished line.
        let partial = Locked<[UInt8]>([])
        out.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            guard !data.isEmpty else { return }
            let complete = partial.withLock { rest -> [UInt8] in
                rest += data
                guard let end = rest.lastIndex(of: 0x0A) else { return [] }
                defer { rest.removeSubrange(...end) }
                return Array(rest[...end])
            }
            let lines = String(decoding: complete, as: UTF8.self).split(separator: "\n").map(String.init)
            output.withLock { $0 += lines }
            for line in lines where line.contains("\"msg\":\"listening\"") {
                if let range = line.range(of: "\"port\":"), let p = Int(line[range.upperBound...].prefix { $0.isNumber }) {
                    portBox.withLock { $0 = p }
                    ready.signal()
                }
            }
        }
        err.fileHandleForReading.readabilityHandler = { [stderrText] handle in
            let data = handle.availableData
            if !data.isEmpty { stderrText.withLock { $0 += String(decoding: data, as: UTF8.self) } }
        }
        try launchProcess(process)
        guard ready.wait(timeout: .now() + 20) == .success else {
            process.terminate()
            throw LaunchError.didNotStart(stderrText.withLock { $0 })
        }
        port = portBox.withLock { $0 }
    }

    public var logLines: [String] { output.withLock { $0 } }
    public var stderr: String { stderrText.withLock { $0 } }

    /// SIGTERM, then waits; returns the exit status.
    @discardableResult
    public func stop() -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { if process.isRunning { process.terminate() } }

    /// Runs the binary to completion (for --help and configuration errors).
    public static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binaryPath)
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try launchProcess(p)
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }
}
