import Glibc

/// Which IP addresses count as public internet (SSRF defence for third-party URLs).
public enum AddressPolicy {
    /// False for loopback, private, link-local, CGNAT, multicast, reserved and
    /// unspecified addresses, in IPv4 and IPv6 (including IPv4-mapped IPv6).
    public static func isPublic(_ text: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return isPublicV4(UInt32(bigEndian: v4.s_addr))
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return false }
        let b = withUnsafeBytes(of: v6) { Array($0) }
        guard b.count == 16 else { return false }
        // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): judge the IPv4 part.
        if b[0..<10].allSatisfy({ $0 == 0 }) && ((b[10] == 0xFF && b[11] == 0xFF) || (b[10] == 0 && b[11] == 0)) {
            let v = UInt32(b[12]) << 24 | UInt32(b[13]) << 16 | UInt32(b[14]) << 8 | UInt32(b[15])
            return isPublicV4(v)
        }
        if b.allSatisfy({ $0 == 0 }) { return false }  // ::
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return false }  // ::1
        if b[0] == 0xFF { return false }  // multicast
        if b[0] == 0xFE && (b[1] & 0xC0) == 0x80 { return false }  // fe80::/10 link-local
        if b[0] == 0xFE && (b[1] & 0xC0) == 0xC0 { return false }  // fec0::/10 site-local
        if (b[0] & 0xFE) == 0xFC { return false }  // fc00::/7 unique local
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8 { return false }  // documentation
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B { return false }  // NAT64
        return true
    }

    static func isPublicV4(_ a: UInt32) -> Bool {
        func inRange(_ base: UInt32, _ bits: UInt32) -> Bool {
            let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
            return a & mask == base & mask
        }
        let blocked: [(UInt32, UInt32)] = [
            (0x0000_0000, 8),  // 0.0.0.0/8 "this network"
            (0x0A00_0000, 8),  // 10/8
            (0x6440_0000, 10),  // 100.64/10 CGNAT
            (0x7F00_0000, 8),  // 127/8 loopback
            (0xA9FE_0000, 16),  // 169.254/16 link-local (cloud metadata)
            (0xAC10_0000, 12),  // 172.16/12
            (0xC000_0000, 24),  // 192.0.0/24 IETF
            (0xC000_0200, 24),  // 192.0.2/24 TEST-NET-1
            (0xC0A8_0000, 16),  // 192.168/16
            (0xC612_0000, 15),  // 198.18/15 benchmarking
            (0xC633_6400, 24),  // 198.51.100/24 TEST-NET-2
            (0xCB00_7100, 24),  // 203.0.113/24 TEST-NET-3
            (0xE000_0000, 4),  // multicast
            (0xF000_0000, 4),  // reserved + broadcast
        ]
        return !blocked.contains { inRange($0.0, $0.1) }
    }
}
