import HTTPServer
import Observability

/// The server's connections and requests in flight, and how its loops share them.
struct ConnectionGauges: MetricsPart {
    var open = 0
    var inFlight = 0
    var perLoop: [Int] = []
    var moved = 0

    init(open: Int = 0, inFlight: Int = 0, perLoop: [Int] = [], moved: Int = 0) {
        self.open = open
        self.inFlight = inFlight
        self.perLoop = perLoop
        self.moved = moved
    }

    init(_ statistics: ServerStatistics) {
        self.init(open: statistics.open, inFlight: statistics.inFlight, perLoop: statistics.perLoop, moved: statistics.moved)
    }

    func render(into out: inout String) {
        MetricsText.single("feedproxy_open_connections", "gauge", "Client connections currently open.", open, into: &out)
        MetricsText.single(
            "feedproxy_requests_in_flight", "gauge", "Requests whose handler is running (misses, batches; hits are answered on the loop).", inFlight,
            into: &out)
        MetricsText.family("feedproxy_loop_connections", "gauge", "Client connections each event loop owns (balance of the CPU steering).", into: &out)
        for (loop, count) in perLoop.enumerated() { out += "feedproxy_loop_connections{loop=\"\(loop)\"} \(count)\n" }
        MetricsText.single(
            "feedproxy_connections_moved_total", "counter", "Idle connections moved to the loop of the CPU their packets arrive on.", moved, into: &out)
    }
}
