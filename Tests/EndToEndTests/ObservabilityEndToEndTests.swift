import Foundation
import Glibc
import Testing
import TestSupport

/// Issue 24 against the real binary: trace context in the access log, process metrics.
@Suite(.offPool) struct ObservabilityEndToEndTests {
    @Test func theAccessLogCarriesTheContinuedTrace() async throws {
        try await offPool {
            let h = try Harness()
            let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
            #expect(try h.get("/photos?limit=1", headers: ["traceparent: \(traceparent)", "X-Request-ID: traced-1"]).status == 200)
            #expect(try h.get("/photos?limit=1", headers: ["X-Request-ID: untraced-1"]).status == 200)
            #expect(
                waitUntil {
                    ["traced-1", "untraced-1"].allSatisfy { id in h.proxy.logLines.contains { $0.contains("\"request_id\":\"\(id)\"") } }
                })
            func fields(_ id: String) throws -> [String: Any] {
                let line = try #require(h.proxy.logLines.first { $0.contains("\"request_id\":\"\(id)\"") })
                return (try JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
            }
            let traced = try fields("traced-1"), untraced = try fields("untraced-1")
            #expect(traced["trace_id"] as? String == "0af7651916cd43dd8448eb211c80319c")
            let span = traced["span_id"] as? String ?? ""
            #expect(span.count == 16 && span != "b7ad6b7169203331" && span != "0000000000000000")
            let fresh = untraced["trace_id"] as? String ?? ""
            #expect(fresh.count == 32 && fresh != "0af7651916cd43dd8448eb211c80319c" && fresh != String(repeating: "0", count: 32))
        }
    }

    @Test func metricsCarryProcessFiguresAndBuildInfo() async throws {
        try await offPool {
            let h = try Harness()
            let text = try h.get("/metrics").text
            for family in ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds", "process_start_time_seconds"] {
                #expect(text.contains("\n\(family) "), "\(family) missing")
            }
            #expect(text.contains("feedproxy_build_info{version=\"1.0.0\",swift_version=\""))
            // The figure is the replica's own, not this test's.
            let rss = text.split(separator: "\n").first { $0.hasPrefix("process_resident_memory_bytes ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
            let status = (try? String(contentsOfFile: "/proc/\(h.proxy.process.processIdentifier)/status", encoding: .utf8)) ?? ""
            let kib = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
            #expect(kib > 0 && abs(rss - kib * 1024) < 16 << 20, "\(rss) vs \(kib) KiB")
        }
    }
}
