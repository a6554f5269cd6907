/// The process's own state: draining, log lines it could not write, its heap's trims and arenas.
package struct LifecycleGauges: MetricsPart {
    package var draining = false
    package var droppedLogLines = 0
    package var heapTrims = 0
    /// nil: malloc cannot say (the gauge is left out).
    package var heapArenas: Int?

    package init(draining: Bool = false, droppedLogLines: Int = 0, heapTrims: Int = 0, heapArenas: Int? = nil) {
        self.draining = draining
        self.droppedLogLines = droppedLogLines
        self.heapTrims = heapTrims
        self.heapArenas = heapArenas
    }

    package func render(into out: inout String) {
        MetricsText.single("feedproxy_draining", "gauge", "1 while shutting down.", draining ? 1 : 0, into: &out)
        MetricsText.single("feedproxy_log_lines_dropped_total", "counter", "Log lines dropped because stdout could not keep up.", droppedLogLines, into: &out)
        MetricsText.single(
            "feedproxy_heap_trims_total", "counter", "Passes (every 10 s) that gave freed heap pages back to the system.", heapTrims, into: &out)
        if let heapArenas {
            MetricsText.single(
                "feedproxy_heap_arenas", "gauge", "malloc arenas in use (capped at one per core unless MALLOC_ARENA_MAX says).", heapArenas, into: &out)
        }
    }
}
