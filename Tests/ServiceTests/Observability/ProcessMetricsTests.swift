import Glibc
import Observability
import TestSupport
import Testing
@testable import Service

/// Process metrics against what the kernel says (issue 24).
@Suite(.offPool) struct ProcessMetricsTests {
    @Test func figuresMatchProc() throws {
        let m = ProcessMetrics.read()
        #expect(try #require(m.residentBytes) > 0)
        // Tests beside this one allocate: the resident set has grown 62 MiB between two reads
        // here. So the figure is read between two of the kernel's, a few times; one of them,
        // at a quieter moment, must agree within 16 MiB.
        var readings: [(rss: Int, before: Int, after: Int)] = []
        for _ in 0..<20 {
            let before = Self.vmRSS(), rss = ProcessMetrics.read().residentBytes ?? 0, after = Self.vmRSS()
            readings.append((rss, before, after))
            if before > 0, rss > min(before, after) - 16 << 20, rss < max(before, after) + 16 << 20 { break }
        }
        let last = try #require(readings.last)
        #expect(last.before > 0 && last.rss > min(last.before, last.after) - 16 << 20 && last.rss < max(last.before, last.after) + 16 << 20, "\(readings)")
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

    /// The kernel's own figure (`VmRSS`, KiB) in bytes; 0 when unreadable.
    static func vmRSS() -> Int {
        let status = ProcessMetrics.readFile("/proc/self/status") ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    @Test func statFieldsSurviveACommandNameWithSpacesAndParentheses() {
        let fields = ProcessMetrics.statFields("42 (a (b) c) S 1 2 3")
        #expect(fields.first == "S")
        #expect(fields.count == 4)
    }
}
