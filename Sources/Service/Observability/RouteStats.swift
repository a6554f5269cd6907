import Primitives
import Synchronization
import Upstream

/// Request counters and latency for one route, keyed by status without locks.
final class RouteStats: Sendable {
    // 499: the client closed the connection before its answer (as nginx records it).
    static let statuses = [200, 204, 304, 400, 404, 405, 408, 413, 414, 417, 429, 431, 499, 500, 501, 502, 503, 504, 505]
    private let byStatus: [Counter]
    private let other = Counter()
    let latency = Histogram()

    init() {
        byStatus = Self.statuses.map { _ in Counter() }
    }

    func record(status: Int, seconds: Double) {
        if let i = Self.statuses.firstIndex(of: status) { byStatus[i].add() } else { other.add() }
        latency.observe(seconds)
    }

    func counts() -> [(String, Int)] {
        var out = zip(Self.statuses, byStatus).map { ("\($0.0)", $0.1.current) }.filter { $0.1 > 0 }
        if other.current > 0 { out.append(("other", other.current)) }
        return out
    }
}
