import Primitives

/// Counters whose label sets are only known at run time (upstream outcomes, rejection
/// reasons, Redis operations): one map of series behind a lock. Only error and miss
/// paths count here; the hit path uses the fixed atomics in `Metrics`.
package final class LabelledCounters: Sendable {
    private let series = Locked<[String: Int]>([:])

    /// `labels` as written in the exposition format: `source="episodes",outcome="ok"`.
    package func add(_ family: String, _ labels: String) {
        series.withLock { $0["\(family){\(labels)}", default: 0] += 1 }
    }

    /// The family's HELP/TYPE lines and its series in label order; `always` writes the
    /// header even before anything was counted.
    package func render(_ family: String, help: String, always: Bool = true, into out: inout String) {
        let prefix = family + "{"
        let lines = series.withLock { $0 }.filter { $0.key.hasPrefix(prefix) }.sorted { $0.key < $1.key }
        guard always || !lines.isEmpty else { return }
        out += "# HELP \(family) \(help)\n# TYPE \(family) counter\n"
        for (key, n) in lines { out += "\(key) \(n)\n" }
    }
}
