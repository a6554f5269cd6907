import Primitives
import Synchronization

/// A Prometheus histogram with fixed buckets; all atomics.
package final class Histogram: Sendable {
    package static let defaultBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    package let bounds: [Double]
    /// One counter per bucket, then the sum in microseconds, then the count: one striped block.
    private let counters: StripedCounters
    private var sumIndex: Int { bounds.count }
    private var countIndex: Int { bounds.count + 1 }

    package init(bounds: [Double] = Histogram.defaultBuckets) {
        self.bounds = bounds
        counters = StripedCounters(count: bounds.count + 2)
    }

    package func observe(_ seconds: Double) {
        for (i, bound) in bounds.enumerated() where seconds <= bound {
            counters.add(i)
            break
        }
        // A clock step can make a duration negative or absurd: clamped, never trapping.
        counters.add(sumIndex, seconds.isFinite ? Int(min(max(0, seconds), 1e9) * 1_000_000) : 0)
        counters.add(countIndex)
    }

    /// Lines for one labelled series; `labels` is like `route="/photos"`.
    package func render(_ name: String, labels: String, into out: inout String) {
        var cumulative = 0
        let before = labels.isEmpty ? "" : labels + ",", only = labels.isEmpty ? "" : "{\(labels)}"
        for (i, bound) in bounds.enumerated() {
            cumulative += counters.value(i)
            out += "\(name)_bucket{\(before)le=\"\(bound)\"} \(cumulative)\n"
        }
        out += "\(name)_bucket{\(before)le=\"+Inf\"} \(counters.value(countIndex))\n"
        out += "\(name)_sum\(only) \(Double(counters.value(sumIndex)) / 1_000_000)\n"
        out += "\(name)_count\(only) \(counters.value(countIndex))\n"
    }
}
