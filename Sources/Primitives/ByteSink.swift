/// Where rendered bytes go: a `[UInt8]`, or a `ByteBuffer` on the hot paths (response heads,
/// access-log lines). Renderers are written once, generic over it, and specialised.
public protocol ByteSink: ~Copyable {
    mutating func append(_ byte: UInt8)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>)
    /// `value` in decimal (a default for any sink; `ByteBuffer` writes the digits in place).
    mutating func append(decimal value: UInt)
}

extension Array: ByteSink where Element == UInt8 {
    @inlinable public mutating func append(bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }
}
