import Observability
import ResponseCache

/// The response cache's size, and the waits on its loads that hold a timer.
struct CacheGauges: MetricsPart {
    var bytes = 0
    var entries = 0
    var deadlineWaits = 0

    init(bytes: Int = 0, entries: Int = 0, deadlineWaits: Int = 0) {
        self.bytes = bytes
        self.entries = entries
        self.deadlineWaits = deadlineWaits
    }

    init(_ cache: ResponseCache) {
        self.init(bytes: cache.byteCount, entries: cache.entryCount, deadlineWaits: cache.waitingWithDeadline)
    }

    func render(into out: inout String) {
        MetricsText.single("feedproxy_cache_bytes", "gauge", "Bytes held by the response cache.", bytes, into: &out)
        MetricsText.single("feedproxy_cache_entries", "gauge", "Entries in the response cache.", entries, into: &out)
        MetricsText.single(
            "feedproxy_cache_deadline_waits", "gauge", "Requests waiting on a cache load with a deadline (each holds a timer; 0 when idle).",
            deadlineWaits, into: &out)
    }
}
