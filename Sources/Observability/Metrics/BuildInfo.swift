import Glibc

/// `feedproxy_build_info`: which version a replica runs, as a constant 1 with labels.
package enum BuildInfo {
    /// The compiler that built this binary, as precisely as `#if compiler` can say.
    package static let swiftVersion: String = {
        #if compiler(>=6.4)
            return "6.4"
        #elseif compiler(>=6.3.1)
            return "6.3.1"
        #elseif compiler(>=6.3)
            return "6.3"
        #elseif compiler(>=6.2)
            return "6.2"
        #else
            return "6.0"
        #endif
    }()

    package static func render(version: String, into out: inout String) {
        out += "# HELP feedproxy_build_info A constant 1, labelled with the version this replica runs and the Swift compiler that built it.\n"
        out += "# TYPE feedproxy_build_info gauge\n"
        out += "feedproxy_build_info{version=\"\(Metrics.labelValue(version))\",swift_version=\"\(swiftVersion)\"} 1\n"
    }
}
