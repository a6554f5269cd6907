import Primitives
import HTTPServer
import Upstream

/// Who the client is: the peer, or behind trusted proxies the right-most untrusted
/// address of `X-Forwarded-For` (as nginx `real_ip_recursive` and Envoy's trusted hops).
/// Called on the miss path and by the access log for every logged request (hits too): it
/// costs one comparison unless the peer is a trusted proxy, then one pass over the header.
struct ClientResolver: Sendable {
    /// Hops examined at most; a longer header is not walked further.
    static let maxHops = 32

    let trusted: TrustedProxies

    func client(peer: IPAddress?, headers: RequestHeaders) -> IPAddress? {
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
