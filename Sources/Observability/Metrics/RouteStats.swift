import Primitives
import Synchronization

/// Request counters and latency for one route, keyed by status without locks.
package final class RouteStats: Sendable {
    // 499: the client closed the connection before its answer (as nginx records it).
    package static let statuses = [200, 204, 304, 400, 404, 405, 408, 413, 414, 417, 429, 431, 499, 500, 501, 502, 503, 504, 505]
    /// One counter per status above, then one for any other status.
    private let byStatus = StripedCounters(count: RouteStats.statuses.count + 1)
    package let latency = Histogram()

    package func record(status: Int, seconds: Double) {
        byStatus.add(Self.statuses.firstIndex(of: status) ?? Self.statuses.count)
        latency.observe(seconds)
    }

    package func counts() -> [(String, Int)] {
        var out = Self.statuses.indices.map { ("\(Self.statuses[$0])", byStatus.value($0)) }.filter { $0.1 > 0 }
        let other = byStatus.value(Self.statuses.count)
        if other > 0 { out.append(("other", other)) }
        return out
    }
}
