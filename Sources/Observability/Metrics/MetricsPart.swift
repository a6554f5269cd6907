/// One subsystem's families of `/metrics`, rendered by its own part: `Metrics.render` is the
/// server's own families, then each part in turn (none knows the others).
package protocol MetricsPart: Sendable {
    func render(into out: inout String)
}

/// The Prometheus text format's pieces every part writes.
package enum MetricsText {
    package static func family(_ name: String, _ type: String, _ help: String, into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    /// A family of one unlabelled sample.
    package static func single(_ name: String, _ type: String, _ help: String, _ value: Int, into out: inout String) {
        family(name, type, help, into: &out)
        out += "\(name) \(value)\n"
    }
}
