import HTTPServer
import Upstream

/// An address range, `10.0.0.0/8` or `2001:db8::/32`; a bare address is a range of one.
public struct CIDR: Sendable, Equatable, CustomStringConvertible {
    public let address: IPAddress
    /// Prefix length over the 128-bit form (an IPv4 `/n` is `96 + n`).
    public let prefixLength: Int

    public init?(_ text: some StringProtocol) {
        let trimmed = text.trimmingASCIIWhitespace()
        var addressText = trimmed
        var prefix: Int?
        if let slash = trimmed.firstIndex(of: "/") {
            addressText = trimmed[..<slash]
            let digits = trimmed[trimmed.index(after: slash)...]
            guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(digits) else { return nil }
            prefix = n
        }
        guard let address = IPAddress(addressText) else { return nil }
        let isV4Text = !addressText.contains(":")
        let length: Int
        if let prefix {
            guard prefix <= (isV4Text ? 32 : 128) else { return nil }
            length = isV4Text ? 96 + prefix : prefix
        } else {
            length = 128
        }
        self.prefixLength = length
        self.address = Self.masked(address, length)
    }

    public func contains(_ ip: IPAddress) -> Bool { Self.masked(ip, prefixLength) == address }

    public var description: String {
        address.isIPv4 && prefixLength >= 96 ? "\(address)/\(prefixLength - 96)" : "\(address)/\(prefixLength)"
    }

    static func masked(_ ip: IPAddress, _ length: Int) -> IPAddress {
        func mask(_ bits: Int) -> UInt64 { bits <= 0 ? 0 : bits >= 64 ? .max : ~(UInt64.max >> UInt64(bits)) }
        return IPAddress(high: ip.high & mask(length), low: ip.low & mask(length - 64))
    }
}

/// The proxies whose `X-Forwarded-For` is believed (`TRUSTED_PROXIES`); empty trusts nobody.
public struct TrustedProxies: Sendable, Equatable, CustomStringConvertible {
    public let ranges: [CIDR]

    public init(_ ranges: [CIDR] = []) { self.ranges = ranges }

    /// A comma- or space-separated CIDR list; a bad entry is an error naming it.
    public static func parse(_ text: String) -> Result<TrustedProxies, ConfigurationError> {
        var ranges: [CIDR] = []
        for item in text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            guard let range = CIDR(item) else {
                return .failure(
                    ConfigurationError(description: "TRUSTED_PROXIES must be a comma-separated list of CIDR ranges such as 10.0.0.0/8, got \"\(item)\""))
            }
            ranges.append(range)
        }
        return .success(TrustedProxies(ranges))
    }

    public var isEmpty: Bool { ranges.isEmpty }

    public func contains(_ ip: IPAddress) -> Bool { ranges.contains { $0.contains(ip) } }

    public var description: String { ranges.map(\.description).joined(separator: ",") }
}

/// Who the client is: the peer, or behind trusted proxies the right-most untrusted
/// address of `X-Forwarded-For` (as nginx `real_ip_recursive` and Envoy's trusted hops).
/// Called on the miss path and by the access log for every logged request (hits too): it
/// costs one comparison unless the peer is a trusted proxy, then one pass over the header.
struct ClientResolver: Sendable {
    /// Hops examined at most; a longer header is not walked further.
    static let maxHops = 32

    let trusted: TrustedProxies

    func client(peer: IPAddress?, headers: HTTPHeaders) -> IPAddress? {
        guard let peer else { return nil }
        guard !trusted.isEmpty, trusted.contains(peer) else { return peer }
        var client = peer
        var hops = 0
        for value in headers.values("x-forwarded-for").reversed() {
            for entry in value.split(separator: ",", omittingEmptySubsequences: false).reversed() {
                hops += 1
                // Garbage, or too deep to be worth walking: the last hop we could trust stands.
                guard hops <= Self.maxHops, let ip = Self.forwardedAddress(entry) else { return client }
                client = ip
                if !trusted.contains(ip) { return ip }
            }
        }
        return client
    }

    /// One `X-Forwarded-For` element: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1` or `[2001:db8::1]:443`.
    static func forwardedAddress(_ raw: Substring) -> IPAddress? {
        var text = raw.trimmingASCIIWhitespace()
        if text.hasPrefix("\"") && text.hasSuffix("\"") && text.count >= 2 { text = text.dropFirst().dropLast() }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }) else { return nil }
            return IPAddress(text[text.index(after: text.startIndex)..<close])
        }
        if let colon = text.firstIndex(of: ":"), text.lastIndex(of: ":") == colon {
            let port = text[text.index(after: colon)...]
            guard port.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return IPAddress(text[..<colon])
        }
        return IPAddress(text)
    }

    static func key(_ ip: IPAddress) -> ClientKey { ClientKey(high: ip.high, low: ip.low) }
}
