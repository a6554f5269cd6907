/// The process's own state: draining, and log lines it could not write.
package struct LifecycleGauges: MetricsPart {
    package var draining = false
    package var droppedLogLines = 0

    package init(draining: Bool = false, droppedLogLines: Int = 0) {
        self.draining = draining
        self.droppedLogLines = droppedLogLines
    }

    package func render(into out: inout String) {
        MetricsText.single("feedproxy_draining", "gauge", "1 while shutting down.", draining ? 1 : 0, into: &out)
        MetricsText.single("feedproxy_log_lines_dropped_total", "counter", "Log lines dropped because stdout could not keep up.", droppedLogLines, into: &out)
    }
}
