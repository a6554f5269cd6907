/// The process's own state: draining, log lines it could not write, and its heap's trims.
package struct LifecycleGauges: MetricsPart {
    package var draining = false
    package var droppedLogLines = 0
    package var heapTrims = 0

    package init(draining: Bool = false, droppedLogLines: Int = 0, heapTrims: Int = 0) {
        self.draining = draining
        self.droppedLogLines = droppedLogLines
        self.heapTrims = heapTrims
    }

    package func render(into out: inout String) {
        MetricsText.single("feedproxy_draining", "gauge", "1 while shutting down.", draining ? 1 : 0, into: &out)
        MetricsText.single("feedproxy_log_lines_dropped_total", "counter", "Log lines dropped because stdout could not keep up.", droppedLogLines, into: &out)
        MetricsText.single(
            "feedproxy_heap_trims_total", "counter", "Passes (every 10 s) that gave freed heap pages back to the system.", heapTrims, into: &out)
    }
}
