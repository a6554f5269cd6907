import Glibc

/// An IP address as one 128-bit value (IPv4 mapped into `::ffff:0:0/96`): compact to
/// keep per connection, cheap to compare and hash. Text is made only when asked for.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address's first and last 64 bits, most significant first.
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    public init(ipv4: UInt32) {
        self.init(high: 0, low: 0xffff_0000_0000 | UInt64(ipv4))
    }

    public var isIPv4: Bool { high == 0 && low >> 32 == 0xffff }

    /// Parses a bare address: dotted-quad IPv4 or any RFC 4291 IPv6 text. Anything else
    /// (ports, brackets, zone ids, garbage) is nil, never a trap.
    public init?(_ text: some StringProtocol) {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 45 else { return nil }
        if let v4 = Self.parseIPv4(utf8) {
            self.init(ipv4: v4)
            return
        }
        guard utf8.contains(UInt8(ascii: ":")),
            utf8.allSatisfy({ c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46) || c == 0x3A || c == 0x2E
            })
        else { return nil }
        var raw = in6_addr()
        let ok = String(text).withCString { inet_pton(AF_INET6, $0, &raw) } == 1
        guard ok else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        withUnsafeBytes(of: raw) { bytes in
            for i in 0..<8 { high = high << 8 | UInt64(bytes[i]) }
            for i in 8..<16 { low = low << 8 | UInt64(bytes[i]) }
        }
        self.init(high: high, low: low)
    }

    private static func parseIPv4(_ utf8: some Collection<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var part: UInt32 = 0
        var digits = 0
        var dots = 0
        for c in utf8 {
            if c == UInt8(ascii: ".") {
                guard digits > 0, dots < 3 else { return nil }
                value = value << 8 | part
                part = 0
                digits = 0
                dots += 1
            } else if c >= 0x30 && c <= 0x39 {
                digits += 1
                guard digits <= 3 else { return nil }
                part = part * 10 + UInt32(c - 0x30)
                guard part <= 255 else { return nil }
            } else {
                return nil
            }
        }
        guard dots == 3, digits > 0 else { return nil }
        return value << 8 | part
    }

    public var description: String {
        if isIPv4 {
            let v = UInt32(truncatingIfNeeded: low)
            return "\(v >> 24).\(v >> 16 & 0xff).\(v >> 8 & 0xff).\(v & 0xff)"
        }
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { bytes in
            for i in 0..<8 { bytes[i] = UInt8(truncatingIfNeeded: high >> UInt64(56 - 8 * i)) }
            for i in 0..<8 { bytes[8 + i] = UInt8(truncatingIfNeeded: low >> UInt64(56 - 8 * i)) }
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        guard inet_ntop(AF_INET6, &raw, &buffer, socklen_t(INET6_ADDRSTRLEN)) != nil else { return "::" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
