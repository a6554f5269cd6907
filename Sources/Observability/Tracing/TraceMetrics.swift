import Primitives
/// What the trace exporter did, for `/metrics` (rendered only when export is configured).
package final class TraceMetrics: Sendable {
    package init() {}

    /// Spans by outcome: exported, dropped_queue_full, dropped_export_failed.
    package let spans = Tally(["exported", "dropped_queue_full", "dropped_export_failed"])
    /// Export requests by outcome: ok, retried, failed.
    package let exports = Tally(["ok", "retried", "failed"])

    package func render(into out: inout String) {
        spans.render("feedproxy_trace_spans_total", "Spans by outcome: exported, or dropped (queue full, or the export failed after its retries).", into: &out)
        exports.render("feedproxy_trace_exports_total", "OTLP export requests by outcome (ok, retried, failed).", into: &out)
    }
}

/// Counters for a fixed set of labels.
package final class Tally: Sendable {
    private let names: [String]
    private let counters: [Counter]

    package init(_ names: [String]) {
        self.names = names
        counters = names.map { _ in Counter() }
    }

    package func add(_ name: String, _ n: Int = 1) {
        if let i = names.firstIndex(of: name) { counters[i].add(n) }
    }

    package func value(_ name: String) -> Int { names.firstIndex(of: name).map { counters[$0].current } ?? 0 }

    package func render(_ family: String, _ help: String, into out: inout String) {
        out += "# HELP \(family) \(help)\n# TYPE \(family) counter\n"
        for (name, counter) in zip(names, counters) { out += "\(family){outcome=\"\(name)\"} \(counter.current)\n" }
    }
}
