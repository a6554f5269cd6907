import CSystem
import Dispatch
import Glibc
import Primitives
import Synchronization

/// A child process the tests start (redis-server, redis-cli, feedproxy), through
/// posix_spawn with only fds 0-2 passed on. Foundation's `Process.run()` is not used: on
/// Linux it over-reads `/proc/self/fd` entries and crashes now and then (more often the more
/// fds a parallel test run holds open).
public final class Spawned: @unchecked Sendable {
    public let processIdentifier: Int32
    private let exit = Locked<Int32?>(nil)
    private let reaping = Locked(())
    private let stdoutText = Locked<[UInt8]>([])
    private let stderrText = Locked<[UInt8]>([])
    /// Signalled by each output reader when its stream ends.
    private let readerEnded = DispatchSemaphore(value: 0)
    private let readers = Locked(0)

    public enum Failure: Error { case cannotSpawn(String, Int32) }

    /// `onOutput` sees stdout as it arrives (when `capture`); both streams are kept.
    public init(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil, capture: Bool = false,
        onOutput: (@Sendable ([UInt8]) -> Void)? = nil
    ) throws {
        var out: [Int32] = [-1, -1], err: [Int32] = [-1, -1]
        if capture {
            // No CLOEXEC needed: every child started here gets only fds 0-2 (closefrom 3).
            guard pipe(&out) == 0, pipe(&err) == 0 else { throw Failure.cannotSpawn(path, errno) }
        }
        let env = (environment ?? Self.currentEnvironment).map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let rc = Self.withCStrings([path] + arguments) { argv in
            Self.withCStrings(env) { envp in
                if let directory {
                    return directory.withCString { csys_spawn(&pid, path, argv, envp, $0, out[1], err[1]) }
                }
                return csys_spawn(&pid, path, argv, envp, nil, out[1], err[1])
            }
        }
        if capture {
            close(out[1])
            close(err[1])
        }
        guard rc == 0 else {
            if capture {
                close(out[0])
                close(err[0])
            }
            throw Failure.cannotSpawn(path, rc)
        }
        processIdentifier = pid
        if capture {
            readers.withLock { $0 = 2 }
            Self.drain(out[0], into: stdoutText, onData: onOutput, done: readerEnded)
            Self.drain(err[0], into: stderrText, onData: nil, done: readerEnded)
        }
    }

    public var isRunning: Bool { reap(blocking: false) == nil }

    public func waitUntilExit() { _ = reap(blocking: true) }

    /// The exit code, or 128 + the signal that ended it; 0 while running.
    public var terminationStatus: Int32 { exit.withLock { $0 } ?? 0 }

    public func terminate() { kill(processIdentifier, SIGTERM) }

    /// Everything the child wrote, once it closed its ends (waits for that).
    public func output() -> (stdout: [UInt8], stderr: [UInt8]) {
        while readers.withLock({ n -> Bool in
            defer { if n > 0 { n -= 1 } }
            return n > 0
        }) { readerEnded.wait() }
        return (stdoutText.withLock { $0 }, stderrText.withLock { $0 })
    }

    public var stderrSoFar: [UInt8] { stderrText.withLock { $0 } }

    /// Runs to completion and returns its status and output.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (
        status: Int32, stdout: [UInt8], stderr: [UInt8]
    ) {
        let child = try Spawned(path, arguments, environment: environment, capture: true)
        let (out, err) = child.output()
        child.waitUntilExit()
        return (child.terminationStatus, out, err)
    }

    private func reap(blocking: Bool) -> Int32? {
        reaping.withLock { _ in
            if let status = exit.withLock({ $0 }) { return status }
            var raw: Int32 = 0
            let r = waitpid(processIdentifier, &raw, blocking ? 0 : WNOHANG)
            guard r == processIdentifier else { return nil }
            let signal = raw & 0x7F
            let status = signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
            exit.withLock { $0 = status }
            return status
        }
    }

    static var currentEnvironment: [String: String] {
        var env: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") { env[String(text[..<eq])] = String(text[text.index(after: eq)...]) }
            p += 1
        }
        return env
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for p in pointers { free(p) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    private static func drain(_ fd: Int32, into buffer: Locked<[UInt8]>, onData: (@Sendable ([UInt8]) -> Void)?, done: DispatchSemaphore) {
        let started = NativeThread.start(name: "test-child-io") {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(fd, &chunk, chunk.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                let data = Array(chunk[0..<n])
                buffer.withLock { $0 += data }
                onData?(data)
            }
            close(fd)
            done.signal()
        }
        if !started {
            close(fd)
            done.signal()
        }
    }
}
