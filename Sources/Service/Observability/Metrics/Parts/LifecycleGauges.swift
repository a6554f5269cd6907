/// The process's own state: draining, and log lines it could not write.
struct LifecycleGauges: MetricsPart {
    var draining = false
    var droppedLogLines = 0

    func render(into out: inout String) {
        MetricsText.single("feedproxy_draining", "gauge", "1 while shutting down.", draining ? 1 : 0, into: &out)
        MetricsText.single("feedproxy_log_lines_dropped_total", "counter", "Log lines dropped because stdout could not keep up.", droppedLogLines, into: &out)
    }
}
