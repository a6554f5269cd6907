import Primitives
import Synchronization
import Upstream

/// The span sink when an OTLP endpoint is configured: the sampler's decisions, a bounded
/// queue, and one background thread that encodes batches and posts them (gzip) to the
/// collector. Nothing here can slow a request: a full queue drops the span (counted), a
/// collector that is down, slow or paused costs dropped batches after the retries the
/// OTLP specification allows (429/502/503/504, `Retry-After` honoured), within the export
/// timeout. Failures are logged at most once a minute.
package final class SpanExporter: SpanSink {
    package struct Settings: Sendable {
        package var url: String
        package var headers: [(String, String)]
        package var gzip: Bool
        package var timeoutMs: Int
        package var exportTimeoutMs: Int
        package var scheduleDelayMs: Int
        package var maxQueue: Int
        package var maxBatch: Int
        package var sampler: TraceSampler
        package var resource: [(String, Span.Value)]
        /// The service's version: the instrumentation scope's and the User-Agent's.
        package var version: String

        package init(
            url: String, headers: [(String, String)], gzip: Bool, timeoutMs: Int, exportTimeoutMs: Int, scheduleDelayMs: Int, maxQueue: Int,
            maxBatch: Int, sampler: TraceSampler, resource: [(String, Span.Value)], version: String
        ) {
            self.url = url
            self.headers = headers
            self.gzip = gzip
            self.timeoutMs = timeoutMs
            self.exportTimeoutMs = exportTimeoutMs
            self.scheduleDelayMs = scheduleDelayMs
            self.maxQueue = maxQueue
            self.maxBatch = maxBatch
            self.sampler = sampler
            self.resource = resource
            self.version = version
        }
    }

    package let settings: Settings
    package let metrics: TraceMetrics
    private let logger: Logger
    private let queue = Mutex<[Span]>([])
    private let wake = WakeSignal()
    private let stopping = Atomic<Bool>(false)
    private let done = WakeSignal()
    private let lastLog = Mutex<Double>(-.infinity)

    package init(settings: Settings, metrics: TraceMetrics, logger: Logger) {
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        let started = NativeThread.start(name: "otlp-export") { [self] in run() }
        if !started { logger.warn("trace export thread could not start: spans are dropped", []) }
    }

    package func decide(_ trace: TraceContext) -> TraceContext { settings.sampler.decide(trace) }

    package func record(_ span: Span) {
        let (kept, full) = queue.withLock { q -> (Bool, Bool) in
            guard q.count < settings.maxQueue else { return (false, false) }
            q.append(span)
            return (true, q.count >= settings.maxBatch)
        }
        guard kept else {
            metrics.spans.add("dropped_queue_full")
            return
        }
        if full { wake.signal() }
    }

    /// Sends what is queued, one attempt per batch, and stops the thread; waits at most 5 s
    /// (or the export timeout), so a dead collector never stretches a shutdown.
    package func shutdown() {
        stopping.store(true, ordering: .relaxed)
        wake.signal()
        done.wait(timeout: min(Double(settings.exportTimeoutMs) / 1000, 5))
    }

    private func run() {
        guard let post = CurlPost() else { return }
        let delay = Double(settings.scheduleDelayMs) / 1000
        while true {
            let stop = stopping.load(ordering: .relaxed)
            if !stop { wake.wait(timeout: delay) }
            while true {
                let batch = queue.withLock { q -> [Span] in
                    let n = min(q.count, settings.maxBatch)
                    defer { q.removeFirst(n) }
                    return Array(q.prefix(n))
                }
                if batch.isEmpty { break }
                export(batch, with: post)
                // A partial batch waits for the next tick, unless stopping.
                if !stopping.load(ordering: .relaxed), queue.withLock({ $0.count }) < settings.maxBatch { break }
            }
            if stop { break }
        }
        done.signal()
    }

    /// One batch: encoded once, posted until accepted, refused for good, or out of time.
    package func export(_ batch: [Span], with post: CurlPost) {
        var body = OTLPEncoding.request(batch, resource: settings.resource, scopeVersion: settings.version)
        var headers = settings.headers + [("Content-Type", "application/x-protobuf"), ("User-Agent", "FeedProxy/\(settings.version)")]
        if settings.gzip, let compressed = Gzip.compress(body) {
            body = compressed
            headers.append(("Content-Encoding", "gzip"))
        }
        let deadline = NativeThread.monotonicSeconds() + Double(settings.exportTimeoutMs) / 1000
        var backoff = 1.0
        while true {
            let left = deadline - NativeThread.monotonicSeconds()
            let result = post.send(url: settings.url, headers: headers, body: body, timeoutMs: max(1, min(settings.timeoutMs, Int(left * 1000))))
            var retryAfter: Double?
            let reason: String
            switch result {
            case .success(let answer) where (200..<300).contains(answer.status):
                metrics.spans.add("exported", batch.count)
                metrics.exports.add("ok")
                return
            case .success(let answer):
                reason = "HTTP \(answer.status)"
                // The OTLP/HTTP retryable statuses; any other is final.
                guard [429, 502, 503, 504].contains(answer.status) else { return fail(batch, reason) }
                retryAfter = answer.retryAfter
            case .failure(.timeout): reason = "timed out"
            case .failure(.unreachable(let why)): reason = why
            }
            let wait = min(retryAfter ?? backoff, 30)
            guard !stopping.load(ordering: .relaxed), NativeThread.monotonicSeconds() + wait < deadline else { return fail(batch, reason) }
            metrics.exports.add("retried")
            NativeThread.sleep(seconds: wait)
            backoff = min(backoff * 2, 30)
        }
    }

    private func fail(_ batch: [Span], _ reason: String) {
        metrics.spans.add("dropped_export_failed", batch.count)
        metrics.exports.add("failed")
        let now = NativeThread.monotonicSeconds()
        let due = lastLog.withLock { last -> Bool in
            guard now - last >= 60 else { return false }
            last = now
            return true
        }
        if due {
            logger.warn("trace export failed: spans dropped (logged at most once a minute)", [("reason", .string(reason)), ("spans", .int(batch.count))])
        }
    }
}
