import Glibc
import Testing
@testable import Service

/// Process metrics against what the kernel says (issue 24).
@Suite struct ProcessMetricsTests {
    @Test func figuresMatchProc() throws {
        let m = ProcessMetrics.read()
        let status = ProcessMetrics.readFile("/proc/self/status") ?? ""
        let rssLine = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        let rssKiB = Int(rssLine.split(separator: " ").dropFirst().first ?? "") ?? 0
        let rss = try #require(m.residentBytes)
        #expect(rssKiB > 0)
        #expect(abs(rss - rssKiB * 1024) < 16 << 20, "\(rss) vs \(rssKiB) KiB")
        let fds = try #require(m.openFDs)
        #expect(fds >= 3)
        #expect(try #require(m.maxFDs) >= fds)
        let start = try #require(m.startTimeSeconds)
        let now = Double(time(nil))
        #expect(start <= now + 1 && start > now - 3600, "\(start) vs \(now)")
        #expect(try #require(m.cpuSeconds) > 0)
        var out = ""
        m.render(into: &out)
        for family in ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds", "process_start_time_seconds"] {
            #expect(out.contains("# TYPE \(family) "))
        }
    }

    @Test func statFieldsSurviveACommandNameWithSpacesAndParentheses() {
        let fields = ProcessMetrics.statFields("42 (a (b) c) S 1 2 3")
        #expect(fields.first == "S")
        #expect(fields.count == 4)
    }
}
