import Primitives
import Upstream

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
