/// 64-bit FNV-1a: a fast, stable fingerprint of bytes (not a security hash).
public struct FNV1a: Sendable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    public mutating func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for b in bytes {
            value ^= UInt64(b)
            value = value &* 0x0000_0100_0000_01B3
        }
    }

    /// 16 lowercase hex digits.
    public var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
