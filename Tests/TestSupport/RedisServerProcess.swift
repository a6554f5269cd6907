import Foundation
import Glibc

/// A real `redis-server` on a free loopback port, without persistence, for one test.
public final class RedisServerProcess: @unchecked Sendable {
    public let port: Int
    public private(set) var pid: Int32 = 0
    private let extraArguments: [String]

    public enum Failure: Error { case notInstalled, didNotStart }

    public init(arguments: [String] = []) throws {
        extraArguments = arguments
        port = try Self.freePort()
        try start()
    }

    public var url: String { "redis://127.0.0.1:\(port)/0" }

    /// (Re)starts the server on the same port, empty.
    public func start() throws {
        // A replica writes the RDB of its first sync into its directory: never the repository.
        pid = try Self.launch(
            ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning", "--dir", NSTemporaryDirectory()]
                + extraArguments, port: port)
    }

    /// Starts `redis-server` with these arguments and waits until `port` answers PING (up to
    /// 10 s: a loaded machine, `make test-under-load`, starts it slowly).
    static func launch(_ arguments: [String], port: Int) throws -> Int32 {
        let binary = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let binary else { throw Failure.notInstalled }
        let p = try Spawned(binary, arguments)
        for _ in 0..<500 {
            if (try? redisCLI(port: port, ["PING"])) == "PONG" { return p.processIdentifier }
            usleep(20_000)
        }
        kill(p.processIdentifier, SIGKILL)
        waitpid(p.processIdentifier, nil, 0)
        throw Failure.didNotStart
    }

    /// Signals the server, never anything else: a pid of 0 (a server that did not start) would
    /// signal this process's whole group, the test runner with it (a silent end of the run).
    private func signal(_ number: Int32) {
        guard pid > 0 else { return }
        kill(pid, number)
    }

    public func kill9() {
        guard pid > 0 else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0  // reaped: its pid may be another process's by now
    }

    public func pause() { signal(SIGSTOP) }
    public func resume() { signal(SIGCONT) }

    /// Runs redis-cli against this server and returns its trimmed output.
    @discardableResult
    public func cli(_ args: String...) throws -> String { try redisCLI(port: port, args) }

    deinit {
        guard pid > 0 else { return }
        kill(pid, SIGCONT)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Bool in
                bind(fd, p, len) == 0 && getsockname(fd, p, &len) == 0
            }
        }
        guard bound else { throw Failure.didNotStart }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}

/// Runs redis-cli against a server (or a sentinel) on `port`; its trimmed output.
func redisCLI(port: Int, _ args: [String]) throws -> String {
    let result = try Spawned.run("/usr/bin/redis-cli", ["-p", "\(port)"] + args)
    return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
