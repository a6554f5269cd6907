import FoundationEssentials

/// Parses environment and command line into a `Configuration`, strictly: a bad
/// value stops startup with a message naming the setting.
public enum ConfigurationParser {
    public enum Outcome {
        case run(Configuration)
        case help(String)
        case version(String)
        /// `--openapi`: the API document, indented (docs/openapi.json).
        case apiDocument(String)
        /// `--healthcheck`: probe the server configured on this port, then exit.
        case healthcheck(Configuration)
    }

    public static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Outcome {
        var config = Configuration()
        for option in options {
            if let value = environment[option.env] { try option.apply(&config, value) }
        }
        var probe = false
        var fixturesUpstream: String?
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if arg == "--help" || arg == "-h" { return .help(helpText()) }
            if arg == "--version" { return .version("feedproxy \(Configuration.version)") }
            if arg == "--openapi" { return .apiDocument(OpenAPIDocument.document().text(indented: true)) }
            if arg == "--healthcheck" {
                probe = true
                continue
            }
            if arg == "--fixtures" {
                if i < arguments.count, !arguments[i].hasPrefix("--") {
                    config.fixturesDirectory = try fixturesDirectory(given: arguments[i])
                    i += 1
                } else {
                    config.fixturesDirectory = try fixturesDirectory(given: nil)
                }
                continue
            }
            if arg == "--fixtures-upstream" || arg.hasPrefix("--fixtures-upstream=") {
                var url = arg.hasPrefix("--fixtures-upstream=") ? String(arg.dropFirst("--fixtures-upstream=".count)) : nil
                if url == nil, i < arguments.count {
                    url = arguments[i]
                    i += 1
                }
                fixturesUpstream = try ValueParser<String>.checkedURL("--fixtures-upstream", url ?? "")
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
        // Last, so that it wins over every endpoint setting given.
        if let fixturesUpstream { config.pointUpstreams(atFixtures: fixturesUpstream) }
        try validateCombinations(config)
        return probe ? .healthcheck(config) : .run(config)
    }

    /// The file that marks a fixtures directory (whatever upstreams it records); its absence
    /// means the wrong directory.
    static let fixtureMarker = "feedproxy-fixtures.txt"

    /// The directory given, or the first of `Fixtures/` in the working directory, the
    /// container's copy and next to the executable that holds the recorded payloads; a
    /// startup error naming where it looked otherwise.
    static func fixturesDirectory(given: String?) throws(ConfigurationError) -> String {
        let candidates: [String]
        if let given {
            candidates = [given]
        } else {
            let exe = URL(fileURLWithPath: CommandLine.arguments.first ?? "").deletingLastPathComponent()
            candidates = [
                FileManager.default.currentDirectoryPath + "/Fixtures", "/usr/share/feedproxy/Fixtures", exe.appendingPathComponent("Fixtures").path,
                exe.appendingPathComponent("../../../Fixtures").standardized.path,
            ]
        }
        if let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0 + "/" + fixtureMarker) }) { return found }
        throw ConfigurationError(
            description: "--fixtures: no recorded payloads (\(fixtureMarker)) in \(candidates.joined(separator: ", ")); "
                + "pass the repository's Fixtures directory: --fixtures /path/to/FeedProxy/Fixtures")
    }

    public static func helpText() -> String {
        var lines = [
            "feedproxy \(Configuration.version) — \(OpenAPIDocument.topics()) from public feeds and APIs as one small JSON API.",
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
            "  " + "--fixtures-upstream URL".paddedRight(to: width)
                + "  every upstream at the fixture upstream another process serves at URL (a --fixtures replica logs it as fixtures_upstream)")
        lines.append(
            "  " + "--healthcheck".paddedRight(to: width)
                + "  exit 0 if the server on PORT answers /healthz, else 1 (container HEALTHCHECK)")
        lines.append("  " + "--help, --version".paddedRight(to: width) + "  print this help or the version")
        lines.append("  " + "--openapi".paddedRight(to: width) + "  print the API document (docs/openapi.json)")
        lines += ["", "Upstreams without a shared rate budget (no RATE_LIMIT_*_PER_MIN), and why:"]
        for upstream in UpstreamCatalog.all {
            if case .none(let reason) = upstream.rateLimit { lines.append("  \(upstream.source): \(reason)") }
        }
        lines += ["", "Upstreams without an endpoint setting of their own, and why:"]
        for upstream in UpstreamCatalog.all {
            if case .none(let reason) = upstream.endpoints { lines.append("  \(upstream.source): \(reason)") }
        }
        return lines.joined(separator: "\n")
    }

    /// Settings that are each valid but wrong together.
    static func validateCombinations(_ c: Configuration) throws(ConfigurationError) {
        if c.redisSentinels.isEmpty != (c.redisSentinelMaster == nil) {
            throw ConfigurationError(description: "REDIS_SENTINELS and REDIS_SENTINEL_MASTER go together: set both, or neither")
        }
        // Through a proxy the address libcurl connects to is the proxy's, so the check that
        // keeps publisher-chosen feed URLs off private addresses would check nothing.
        if c.upstreamProxy != nil, !c.allowPrivateFeedHosts, c.fixturesDirectory == nil {
            throw ConfigurationError(
                description: "UPSTREAM_PROXY hides podcast feeds' addresses from FeedProxy's private-address check; "
                    + "make the proxy refuse loopback, private and link-local destinations, then set ALLOW_PRIVATE_FEED_HOSTS=true to say so")
        }
    }
}

extension String {
    /// Left-aligned in a column of `width` characters (help text).
    func paddedRight(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
