import Foundation
import Glibc

/// A real `redis-server --sentinel` on a free loopback port, monitoring one primary.
public final class SentinelProcess: @unchecked Sendable {
    public let port: Int
    public let masterName: String
    private let directory: URL
    private var pid: Int32 = 0

    public init(monitoring primaryPort: Int, masterName: String = "mymaster", downAfterMs: Int = 1000) throws {
        port = try RedisServerProcess.freePort()
        self.masterName = masterName
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sentinel-\(port)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = """
            port \(port)
            bind 127.0.0.1
            dir \(directory.path)
            sentinel resolve-hostnames no
            sentinel monitor \(masterName) 127.0.0.1 \(primaryPort) 1
            sentinel down-after-milliseconds \(masterName) \(downAfterMs)
            sentinel failover-timeout \(masterName) 5000
            """
        let file = directory.appendingPathComponent("sentinel.conf")
        try config.write(to: file, atomically: true, encoding: .utf8)
        pid = try RedisServerProcess.launch([file.path, "--sentinel"], port: port)
    }

    /// `host port` of the primary the sentinel names now.
    public var primaryPort: Int? {
        let lines = ((try? cli("SENTINEL", "get-master-addr-by-name", masterName)) ?? "").split(separator: "\n")
        return lines.count == 2 ? Int(lines[1]) : nil
    }

    @discardableResult
    public func cli(_ args: String...) throws -> String { try redisCLI(port: port, args) }

    deinit {
        // A pid of 0 (a sentinel that did not start) would signal the test runner's whole group.
        if pid > 0 {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
