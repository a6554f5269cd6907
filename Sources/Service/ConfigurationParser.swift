import FoundationEssentials
import HTTPServer

/// Parses environment and command line into a `Configuration`, strictly: a bad
/// value stops startup with a message naming the setting.
public enum ConfigurationParser {
    public enum Outcome {
        case run(Configuration)
        case help(String)
        case version(String)
        /// `--healthcheck`: probe the server configured on this port, then exit.
        case healthcheck(Configuration)
    }

    public static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Outcome {
        var config = Configuration()
        for option in options {
            if let value = environment[option.env] { try option.apply(&config, value) }
        }
        var probe = false
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if arg == "--help" || arg == "-h" { return .help(helpText()) }
            if arg == "--version" { return .version("feedproxy \(Configuration.version)") }
            if arg == "--healthcheck" {
                probe = true
                continue
            }
            if arg == "--fixtures" {
                if i < arguments.count, !arguments[i].hasPrefix("--") {
                    config.fixturesDirectory = arguments[i]
                    i += 1
                } else {
                    config.fixturesDirectory = defaultFixturesDirectory()
                }
                continue
            }
            var name = arg
            var value: String?
            if let eq = arg.firstIndex(of: "=") {
                name = String(arg[..<eq])
                value = String(arg[arg.index(after: eq)...])
            }
            guard let option = options.first(where: { $0.flag == name }) else {
                throw ConfigurationError(description: "unknown option \(arg) (see --help)")
            }
            if value == nil {
                guard i < arguments.count else { throw ConfigurationError(description: "\(name) needs a value") }
                value = arguments[i]
                i += 1
            }
            try option.apply(&config, value ?? "")
        }
        return probe ? .healthcheck(config) : .run(config)
    }

    /// `Fixtures/` in the working directory, the container's copy, or next to the executable.
    static func defaultFixturesDirectory() -> String {
        let cwd = FileManager.default.currentDirectoryPath + "/Fixtures"
        if FileManager.default.fileExists(atPath: cwd) { return cwd }
        if FileManager.default.fileExists(atPath: "/usr/share/feedproxy/Fixtures") { return "/usr/share/feedproxy/Fixtures" }
        let exe = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
        for candidate in [exe.appendingPathComponent("Fixtures").path, exe.appendingPathComponent("../../../Fixtures").standardized.path]
        where FileManager.default.fileExists(atPath: candidate) {
            return candidate
        }
        return cwd
    }

    public static func helpText() -> String {
        var lines = [
            "feedproxy \(Configuration.version) — one small JSON API over Flickr, iTunes and Kiva.",
            "",
            "Usage: feedproxy [options]",
            "",
            "Every option can also be set by its environment variable; flags win.",
            "",
        ]
        let defaults = Configuration()
        let width = options.map { $0.flag.count + $0.env.count + 3 }.max() ?? 40
        for o in options {
            let left = "\(o.flag) (\(o.env))"
            lines.append("  " + left.paddedRight(to: width) + "  \(o.help) [default: \(o.defaultText(defaults))]")
        }
        lines.append(
            "  " + "--fixtures [DIR]".paddedRight(to: width)
                + "  serve recorded payloads from DIR (default ./Fixtures) through a loopback upstream: no internet needed")
        lines.append(
            "  " + "--healthcheck".paddedRight(to: width)
                + "  exit 0 if the server on PORT answers /healthz, else 1 (container HEALTHCHECK)")
        lines.append("  " + "--help, --version".paddedRight(to: width) + "  print this help or the version")
        return lines.joined(separator: "\n")
    }

    // MARK: value parsers

    static func int(_ name: String, _ value: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let v = Int(value.trimmingASCIIWhitespace()), range.contains(v) else {
            throw ConfigurationError(description: "\(name) must be an integer between \(range.lowerBound) and \(range.upperBound), got \"\(value)\"")
        }
        return v
    }

    static func seconds(_ name: String, _ value: String, allowZero: Bool = true) throws(ConfigurationError) -> Double {
        guard let v = Double(value.trimmingASCIIWhitespace()), v.isFinite, allowZero ? v >= 0 : v > 0 else {
            throw ConfigurationError(description: "\(name) must be a \(allowZero ? "non-negative" : "positive") number of seconds, got \"\(value)\"")
        }
        return v
    }

    static func url(_ name: String, _ value: String) throws(ConfigurationError) -> String {
        guard let c = URLComponents(string: value), let scheme = c.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = c.host, !host.isEmpty
        else { throw ConfigurationError(description: "\(name) must be an http(s) URL, got \"\(value)\"") }
        return value
    }

    static func bool(_ name: String, _ value: String) throws(ConfigurationError) -> Bool {
        switch value.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationError(description: "\(name) must be true or false, got \"\(value)\"")
        }
    }
}

extension String {
    /// Left-aligned in a column of `width` characters (help text).
    func paddedRight(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
