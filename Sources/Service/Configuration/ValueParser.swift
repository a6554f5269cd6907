import Observability
import Primitives
import FoundationEssentials
import RedisTier

/// How one kind of setting is read from its text and shown as a default in `--help`.
/// Each parser is named for what it parses; its message names the setting.
struct ValueParser<Value>: Sendable {
    let parse: @Sendable (_ name: String, _ text: String) throws(ConfigurationError) -> Value
    let show: @Sendable (Value) -> String
    /// An empty value is no value: the setting keeps what another one gave it (an empty
    /// `REDIS_PASSWORD_FILE` must not erase `REDIS_PASSWORD`).
    var emptyLeavesValue = false
}

extension ValueParser where Value == Int {
    static func integer(_ range: ClosedRange<Int>) -> Self {
        Self(
            parse: { name, text throws(ConfigurationError) in
                guard let v = Int(text.trimmingASCIIWhitespace()), range.contains(v) else {
                    throw ConfigurationError(description: "\(name) must be an integer between \(range.lowerBound) and \(range.upperBound), got \"\(text)\"")
                }
                return v
            }, show: { "\($0)" })
    }

    /// A size in bytes (a plain integer within `range`).
    static func bytes(_ range: ClosedRange<Int>) -> Self { integer(range) }
}

extension ValueParser where Value == Double {
    /// Longest duration any setting takes: a year. Beyond it derived figures (milliseconds,
    /// TTL × factor, deadlines) stop meaning anything.
    static let maxSeconds = 31_536_000.0

    static func seconds(allowZero: Bool = true) -> Self {
        Self(
            parse: { name, text throws(ConfigurationError) in
                guard let v = Double(text.trimmingASCIIWhitespace()), v.isFinite, allowZero ? v >= 0 : v > 0, v <= maxSeconds else {
                    throw ConfigurationError(
                        description:
                            "\(name) must be a \(allowZero ? "non-negative" : "positive") number of seconds up to \(Int(maxSeconds)), got \"\(text)\"")
                }
                return v
            }, show: wholeNumber)
    }

    /// Requests per minute: 0.01 (one every 100 minutes) up to a million; 0 only where it means off.
    /// Below the floor a token takes so long that Retry-After and wait estimates are absurd.
    static func rate(allowZero: Bool = false) -> Self {
        Self(
            parse: { name, text throws(ConfigurationError) in
                guard let v = Double(text.trimmingASCIIWhitespace()), v.isFinite, (allowZero && v == 0) || (0.01...1_000_000).contains(v) else {
                    throw ConfigurationError(
                        description: "\(name) must be a number of requests per minute from 0.01 to 1000000\(allowZero ? " (0: off)" : ""), got \"\(text)\"")
                }
                return v
            }, show: wholeNumber)
    }

    /// A plain multiplier within `range` (the stale-while-revalidate window per TTL).
    static func factor(_ range: ClosedRange<Double>) -> Self {
        Self(
            parse: { name, text throws(ConfigurationError) in
                guard let v = Double(text.trimmingASCIIWhitespace()), v.isFinite, range.contains(v) else {
                    throw ConfigurationError(description: "\(name) must be a number from \(Int(range.lowerBound)) to \(Int(range.upperBound)), got \"\(text)\"")
                }
                return v
            }, show: wholeNumber)
    }

    private static let wholeNumber: @Sendable (Double) -> String = { $0 == $0.rounded() && abs($0) < 1e15 ? "\(Int($0))" : "\($0)" }
}

extension ValueParser where Value == Bool {
    static let bool = Self(
        parse: { name, text throws(ConfigurationError) in
            switch text.lowercased() {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default: throw ConfigurationError(description: "\(name) must be true or false, got \"\(text)\"")
            }
        }, show: { "\($0)" })
}

extension ValueParser where Value == String {
    static let httpURL = Self(parse: { name, text throws(ConfigurationError) in try checkedURL(name, text) }, show: { $0 })

    static let ipv4 = Self(
        parse: { name, text throws(ConfigurationError) in
            let parts = text.split(separator: ".")
            guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else {
                throw ConfigurationError(description: "\(name) must be an IPv4 address, got \"\(text)\"")
            }
            return text
        }, show: { $0 })

    /// One line of header text (no CR or LF); `allowEmpty` where empty means "none".
    static func headerLine(allowEmpty: Bool) -> Self {
        Self(
            parse: { name, text throws(ConfigurationError) in
                guard allowEmpty || !text.isEmpty, !text.contains("\r"), !text.contains("\n") else {
                    throw ConfigurationError(description: allowEmpty ? "\(name) must be one line" : "\(name) must be one non-empty line")
                }
                return text
            }, show: { $0 })
    }

    static func checkedURL(_ name: String, _ text: String) throws(ConfigurationError) -> String {
        guard let c = URLComponents(string: text), let scheme = c.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = c.host, !host.isEmpty
        else { throw ConfigurationError(description: "\(name) must be an http(s) URL, got \"\(text)\"") }
        return text
    }
}

extension ValueParser where Value == Double? {
    /// Seconds as `seconds(allowZero:)` reads them; unset (empty) follows another setting,
    /// named in `--help` as the default.
    static func optionalSeconds(unsetFollows other: String) -> Self {
        let seconds = ValueParser<Double>.seconds(allowZero: false)
        return Self(
            parse: { name, text throws(ConfigurationError) in text.isEmpty ? nil : try seconds.parse(name, text) },
            show: { $0.map(seconds.show) ?? "as \(other)" })
    }
}

extension ValueParser where Value == String? {
    /// An http(s) URL, or empty for unset.
    static let optionalHTTPURL = Self(
        parse: { name, text throws(ConfigurationError) in text.isEmpty ? nil : try ValueParser<String>.checkedURL(name, text) }, show: { $0 ?? "unset" })

    /// A proxy URL libcurl takes (http, https, socks5, socks5h), or empty for none.
    static let proxyURL = Self(
        parse: { name, text throws(ConfigurationError) in
            guard !text.isEmpty else { return nil }
            let scheme = text.split(separator: ":", maxSplits: 1).first?.lowercased() ?? ""
            guard ["http", "https", "socks5", "socks5h"].contains(scheme), text.contains("://"), !text.contains("\r"), !text.contains("\n") else {
                throw ConfigurationError(description: "\(name) must be an http://, https://, socks5:// or socks5h:// URL, got \"\(text)\"")
            }
            return text
        }, show: { $0 ?? "unset" })
}

extension ValueParser where Value == TrustedProxies {
    static let cidrList = Self(
        parse: { _, text throws(ConfigurationError) in try TrustedProxies.parse(text).get() }, show: { $0.isEmpty ? "unset" : $0.description })
}

extension ValueParser where Value == RedisEndpoint? {
    /// `redis://…`, parsed once here into the endpoint the tier connects to; empty for none.
    static let redisURL = Self(
        parse: { _, text throws(ConfigurationError) in
            guard !text.isEmpty else { return nil }
            do throws(RedisEndpoint.InvalidURL) { return try RedisEndpoint(url: text) } catch { throw ConfigurationError(description: error.description) }
        }, show: { $0 == nil ? "unset" : "set" })
}

extension ValueParser where Value == LogLevel {
    static let logLevel = Self(
        parse: { name, text throws(ConfigurationError) in
            guard let level = LogLevel(rawValue: text.lowercased()) else {
                throw ConfigurationError(description: "\(name) must be debug, info, warn or error, got \"\(text)\"")
            }
            return level
        }, show: { $0.rawValue })
}

extension ValueParser where Value == [RedisAddress] {
    static let addressList = Self(
        parse: { name, text throws(ConfigurationError) in
            let parts = text.split(separator: ",").map { $0.trimmingASCIIWhitespace() }.filter { !$0.isEmpty }
            var out: [RedisAddress] = []
            for part in parts {
                guard let address = RedisAddress(part) else { throw ConfigurationError(description: "\(name) must be host:port entries, got \"\(part)\"") }
                out.append(address)
            }
            return out
        }, show: { $0.isEmpty ? "unset" : $0.map(\.description).joined(separator: ",") })
}

extension ValueParser where Value == String? {
    /// A name of letters, digits and `._-` (a Sentinel master name); empty for unset.
    static let optionalName = Self(
        parse: { name, text throws(ConfigurationError) in
            guard !text.isEmpty else { return nil }
            guard text.utf8.count <= 128, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw ConfigurationError(description: "\(name) must be a name without spaces")
            }
            return text
        }, show: { $0 ?? "unset" })

    /// A file system path (one line); empty for unset.
    static let optionalPath = Self(
        parse: { name, text throws(ConfigurationError) in
            guard !text.isEmpty else { return nil }
            guard text.utf8.count <= 1024, !text.utf8.contains(where: { $0 < 0x20 }) else {
                throw ConfigurationError(description: "\(name) must be a path of at most 1024 printable characters")
            }
            return text
        }, show: { $0 ?? "unset" })

    /// A secret given directly; never shown (help prints "unset").
    static let optionalSecret = Self(
        parse: { name, text throws(ConfigurationError) in
            guard !text.contains("\r"), !text.contains("\n") else { throw ConfigurationError(description: "\(name) must be one line") }
            return text.isEmpty ? nil : text
        }, show: { $0 == nil ? "unset" : "set" })

    /// A secret read from a file (a mounted Kubernetes Secret): its content, one trailing newline dropped.
    static let secretFile = Self(
        parse: { name, path throws(ConfigurationError) in
            guard let data = FileManager.default.contents(atPath: path), data.count <= 4096 else {
                throw ConfigurationError(description: "\(name): cannot read \(path)")
            }
            var text = String(decoding: data, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            if text.hasSuffix("\r") { text.removeLast() }
            guard !text.isEmpty, !text.contains("\n") else { throw ConfigurationError(description: "\(name): \(path) must hold one line") }
            return text
        }, show: { $0 == nil ? "unset" : "set" }, emptyLeavesValue: true)
}

extension ValueParser where Value == String {
    static let keyPrefix = Self(
        parse: { name, text throws(ConfigurationError) in
            guard !text.isEmpty, text.utf8.count <= 64, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw ConfigurationError(description: "\(name) must be 1–64 printable characters without spaces")
            }
            return text
        }, show: { $0 })
}

extension ValueParser where Value == String {
    /// One of `allowed` (case-insensitive; kept lowercased).
    static func choice(_ allowed: [String]) -> Self {
        Self(
            parse: { name, text throws(ConfigurationError) in
                let value = text.trimmingASCIIWhitespace().lowercased()
                guard allowed.contains(value) else {
                    throw ConfigurationError(description: "\(name) must be one of \(allowed.joined(separator: ", ")), got \"\(text)\"")
                }
                return value
            }, show: { $0 })
    }
}

extension ValueParser where Value == [KeyValuePair] {
    /// OpenTelemetry's `key=value,key2=value2` (W3C Baggage-like): keys trimmed, values
    /// percent-decoded. `secret`: `--help` shows only whether it is set.
    static func keyValueList(secret: Bool) -> Self {
        Self(
            parse: { name, text throws(ConfigurationError) in
                var out: [KeyValuePair] = []
                for item in text.split(separator: ",") where !item.trimmingASCIIWhitespace().isEmpty {
                    let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    let key = parts[0].trimmingASCIIWhitespace()
                    guard parts.count == 2, !key.isEmpty, let value = percentDecoded(parts[1].trimmingASCIIWhitespace()),
                        !value.contains("\r"), !value.contains("\n"), key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") })
                    else { throw ConfigurationError(description: "\(name) must be key=value pairs separated by commas") }
                    out.append(KeyValuePair(key: String(key), value: value))
                }
                return out
            }, show: { $0.isEmpty ? "unset" : secret ? "set" : $0.map { "\($0.key)=\($0.value)" }.joined(separator: ",") })
    }
}

/// `%XX` decoded; nil for a broken escape or bytes that are not UTF-8.
private func percentDecoded(_ text: Substring) -> String? {
    var out: [UInt8] = []
    var bytes = text.utf8.makeIterator()
    func hex(_ b: UInt8?) -> UInt8? {
        switch b {
        case (0x30...0x39)?: return b.map { $0 - 0x30 }
        case (0x41...0x46)?: return b.map { $0 - 0x41 + 10 }
        case (0x61...0x66)?: return b.map { $0 - 0x61 + 10 }
        default: return nil
        }
    }
    while let b = bytes.next() {
        if b == UInt8(ascii: "%") {
            guard let high = hex(bytes.next()), let low = hex(bytes.next()) else { return nil }
            out.append(high << 4 | low)
        } else {
            out.append(b)
        }
    }
    return String(validating: out, as: UTF8.self)
}
