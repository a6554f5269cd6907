import CXXHash

/// xxHash64 with seed 0, from libxxhash: a fast, stable fingerprint of bytes (not a security
/// hash). The published algorithm, so every replica, on any CPU, gives the same bytes the
/// same value.
public enum XXH64 {
    public static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { hash($0) }
    }

    public static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        cxxhash_xxh64(bytes.baseAddress, bytes.count)
    }

    /// `value` as 16 lowercase hex digits.
    public static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// A fingerprint of parts added one after another: the same value as `XXH64.hash` of
    /// their concatenation. The parts are small (ids, query fields, an episode's JSON; the API
    /// document once at start), so they are gathered and hashed in one call.
    public struct Hasher: Sendable {
        var bytes: [UInt8] = []

        public init() {}

        public mutating func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
            self.bytes.append(contentsOf: bytes)
        }

        public var value: UInt64 { XXH64.hash(bytes) }

        /// 16 lowercase hex digits.
        public var hex: String { XXH64.hex(value) }
    }
}
