import CSystem
import Foundation
import Glibc
import Testing
import TestSupport

/// The executable caps glibc's malloc arenas at one per core it may run on (threads share
/// them, so memory one thread frees another reuses), unless the operator set
/// `MALLOC_ARENA_MAX`; `/metrics` shows how many are in use. (Under TSan, whose allocator
/// serves malloc, the binary built beside these tests has no arenas to cap.)
@Suite(.offPool) struct HeapArenasEndToEndTests {
    private static var underTSan: Bool { dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil }

    /// Requests that put every kind of thread to work: loops, the cooperative pool, libcurl's.
    private func work(_ p: FeedProxyProcess) throws {
        for path in ["/photos", "/podcasts?term=daily", "/loans", "/podcasts?term=history", "/photos?tags=cats"] {
            _ = try RawClient.get(port: p.port, path)
        }
    }

    private func arenas(_ p: FeedProxyProcess) throws -> Int? {
        let text = try RawClient.get(port: p.port, "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix("feedproxy_heap_arenas ") }
        return line.flatMap { Int($0.split(separator: " ")[1]) }
    }

    @Test func theArenasAreCappedAtOnePerCore() throws {
        guard !Self.underTSan else { return }
        let cores = max(1, Int(csys_affinity_cpu_count()))
        let p = try FeedProxyProcess(arguments: ["--fixtures", "Fixtures"])
        defer { p.stop() }
        try work(p)
        let inUse = try #require(try arenas(p))
        #expect(inUse >= 1 && inUse <= cores, "\(inUse) arenas on \(cores) cores")
        #expect(p.logLines.contains { $0.contains("\"msg\":\"listening\"") && $0.contains("\"malloc_arenas\":\(cores)") })
    }

    /// The operator's `MALLOC_ARENA_MAX` stands; at glibc's own ceiling, the same work makes an
    /// arena per thread (more than the cores): what the cap saves.
    @Test func theOperatorsSettingStands() throws {
        guard !Self.underTSan else { return }
        let cores = max(1, Int(csys_affinity_cpu_count()))
        let p = try FeedProxyProcess(arguments: ["--fixtures", "Fixtures"], environment: ["MALLOC_ARENA_MAX": "64"])
        defer { p.stop() }
        try work(p)
        let inUse = try #require(try arenas(p))
        #expect(inUse > cores, "\(inUse) arenas on \(cores) cores")
        #expect(p.logLines.contains { $0.contains("\"malloc_arenas\":\"MALLOC_ARENA_MAX=64\"") })
    }
}
