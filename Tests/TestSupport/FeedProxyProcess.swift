import Foundation
import Synchronization
@_exported import Primitives

/// The real `feedproxy` binary, started for a test and stopped with SIGTERM.
public final class FeedProxyProcess: @unchecked Sendable {
    public let process: Spawned
    public private(set) var port = 0
    private let output = Locked<[String]>([])

    public static var binaryPath: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("feedproxy").path
    }

    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    public enum LaunchError: Error { case didNotStart(String) }

    /// Starts the binary on a free port and waits for its "listening" line.
    public init(arguments: [String] = [], environment: [String: String] = [:]) throws {
        var env = Spawned.currentEnvironment.filter { !$0.key.hasPrefix("CACHE_") && !$0.key.hasSuffix("_URL") }
        // Each process its own records (feed ids), unless the test shares them on purpose (a restart).
        env["DATA_DIR"] = FileManager.default.temporaryDirectory.appendingPathComponent("feedproxy-test-\(UUID().uuidString)").path
        for (k, v) in environment { env[k] = v }
        let ready = DispatchSemaphore(value: 0)
        let portBox = Locked(0)
        // Logs arrive in batches that a pipe read may cut anywhere: keep the unfinished line.
        let partial = Locked<[UInt8]>([])
        process = try Spawned(
            Self.binaryPath, ["--port", "0", "--threads", "2"] + arguments, environment: env, directory: Self.repositoryRoot.path, capture: true
        ) { [output] data in
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
        guard ready.wait(timeout: .now() + 20) == .success else {
            process.terminate()
            throw LaunchError.didNotStart(stderr)
        }
        port = portBox.withLock { $0 }
    }

    public var logLines: [String] { output.withLock { $0 } }
    public var stderr: String { String(decoding: process.stderrSoFar, as: UTF8.self) }

    /// SIGTERM, then waits; returns the exit status.
    @discardableResult
    public func stop() -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Runs the binary to completion (for --help and configuration errors).
    public static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        var env = Spawned.currentEnvironment
        for (k, v) in environment { env[k] = v }
        let result = try Spawned.run(binaryPath, arguments, environment: env)
        return (result.status, String(decoding: result.stdout, as: UTF8.self), String(decoding: result.stderr, as: UTF8.self))
    }
}
