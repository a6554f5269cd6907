/// Fixed-width little-endian integers written into bytes and read back from them with every
/// read bounds-checked: the layout of the records and data a service keeps (episode data, change
/// histories, sync tokens), which come back like network input.
public enum LittleEndianBytes {
    /// `value`'s low `count` bytes, least significant first.
    @inlinable public static func append(_ value: UInt64, _ count: Int, to out: inout [UInt8]) {
        for i in 0..<count { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    /// Bounds-checked reads from the front: nil past the end, never a trap.
    public struct Reader {
        public let bytes: [UInt8]
        public var at = 0

        public init(bytes: [UInt8]) { self.bytes = bytes }

        public mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, count <= bytes.count - at else { return nil }
            defer { at += count }
            return bytes[at..<(at + count)]
        }

        public mutating func uint(_ count: Int) -> UInt64? {
            take(count).map { $0.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        }

        public mutating func int(_ count: Int) -> Int? { uint(count).map { Int($0) } }  // count ≤ 4: always fits

        public mutating func int64() -> Int64? { uint(8).map { Int64(bitPattern: $0) } }

        public mutating func uint32() -> UInt32? { uint(4).map { UInt32(truncatingIfNeeded: $0) } }

        public var rest: ArraySlice<UInt8> { bytes[at...] }
    }
}
