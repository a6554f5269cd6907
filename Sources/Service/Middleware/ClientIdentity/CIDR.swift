import Primitives
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
