import Primitives
import Synchronization
import Upstream

/// A Prometheus histogram with fixed buckets; all atomics.
final class Histogram: Sendable {
    static let defaultBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    let bounds: [Double]
    private let buckets: [Counter]
    private let sumMicros = Counter()
    private let count = Counter()

    init(bounds: [Double] = Histogram.defaultBuckets) {
        self.bounds = bounds
        buckets = bounds.map { _ in Counter() }
    }

    func observe(_ seconds: Double) {
        for (i, bound) in bounds.enumerated() where seconds <= bound {
            buckets[i].add()
            break
        }
        sumMicros.add(Int(max(0, seconds) * 1_000_000))
        count.add()
    }

    /// Lines for one labelled series; `labels` is like `route="/photos"`.
    func render(_ name: String, labels: String, into out: inout String) {
        var cumulative = 0
        for (i, bound) in bounds.enumerated() {
            cumulative += buckets[i].current
            out += "\(name)_bucket{\(labels),le=\"\(bound)\"} \(cumulative)\n"
        }
        out += "\(name)_bucket{\(labels),le=\"+Inf\"} \(count.current)\n"
        out += "\(name)_sum{\(labels)} \(Double(sumMicros.current) / 1_000_000)\n"
        out += "\(name)_count{\(labels)} \(count.current)\n"
    }
}
