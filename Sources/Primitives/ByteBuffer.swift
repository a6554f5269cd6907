/// A growable byte buffer for output rendered on every request. An array append goes through
/// the generic sequence path, a uniqueness check and a capacity check (70-odd instructions
/// for a 2-byte literal); here it is a bounds test and a copy. Non-copyable, so two owners
/// can never write into one allocation; empty until the first append (an idle connection
/// owns no memory for it).
public struct ByteBuffer: ~Copyable, ByteSink {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>?
    @usableFromInline var used = 0
    @usableFromInline var allocated = 0

    public init() { base = nil }

    deinit { base?.deallocate() }

    public var count: Int { used }
    public var isEmpty: Bool { used == 0 }
    public var capacity: Int { allocated }

    @inlinable public mutating func append(_ byte: UInt8) {
        if _slowPath(used == allocated) { grow(toHold: used + 1) }
        guard let base else { return }
        base[used] = byte
        used &+= 1
    }

    @inlinable public mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if _slowPath(allocated &- used < bytes.count) { grow(toHold: used + bytes.count) }
        guard let base else { return }
        UnsafeMutableRawPointer(base + used).copyMemory(from: source, byteCount: bytes.count)
        used &+= bytes.count
    }

    @inlinable public mutating func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append(bytes: $0) }
    }

    @inlinable public mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        append(bytes: bytes)
    }

    /// A string's UTF-8 (native strings are contiguous: no copy on the way).
    @inlinable public mutating func append(utf8 string: String) {
        if string.utf8.withContiguousStorageIfAvailable({ append(bytes: $0) }) != nil { return }
        var copy = string
        copy.withUTF8 { append(bytes: $0) }
    }

    /// The digits written in place, last first, after one capacity check.
    @inlinable public mutating func append(decimal value: UInt) {
        // Status codes, octets and small counts: no loop.
        if value < 1000 && allocated &- used >= 3, let base {
            let hundreds = UInt8(truncatingIfNeeded: value / 100), rest = UInt8(truncatingIfNeeded: value % 100)
            let tens = rest / 10, ones = rest % 10
            if hundreds > 0 {
                base[used] = 0x30 &+ hundreds
                base[used &+ 1] = 0x30 &+ tens
                base[used &+ 2] = 0x30 &+ ones
                used &+= 3
            } else if tens > 0 {
                base[used] = 0x30 &+ tens
                base[used &+ 1] = 0x30 &+ ones
                used &+= 2
            } else {
                base[used] = 0x30 &+ ones
                used &+= 1
            }
            return
        }
        var digits = 1
        var limit: UInt = 10
        while digits < 20 && value >= limit {  // UInt.max has 20 digits
            digits &+= 1
            limit = limit &* 10
        }
        if _slowPath(allocated &- used < digits) { grow(toHold: used + digits) }
        guard let base else { return }
        var n = value
        var i = used &+ digits
        repeat {
            i &-= 1
            base[i] = 0x30 &+ UInt8(truncatingIfNeeded: n % 10)
            n /= 10
        } while n > 0
        used &+= digits
    }

    /// Hands the bytes and their allocation over, leaving this buffer empty (no copy).
    public mutating func take() -> ByteBuffer {
        var taken = ByteBuffer()
        (taken.base, taken.used, taken.allocated) = (base, used, allocated)
        (base, used, allocated) = (nil, 0, 0)
        return taken
    }

    public mutating func reserveCapacity(_ minimum: Int) {
        if minimum > allocated { grow(toHold: minimum) }
    }

    /// Forgets the bytes; keeps the allocation for the next ones unless told otherwise.
    public mutating func removeAll(keepingCapacity: Bool) {
        used = 0
        guard !keepingCapacity else { return }
        base?.deallocate()
        base = nil
        allocated = 0
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: used))
    }

    /// A copy of the bytes as an array.
    public var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: used)) }

    /// At least doubling, so appends stay amortised O(1).
    @usableFromInline mutating func grow(toHold minimum: Int) {
        let size = Swift.max(minimum, allocated * 2, 256)
        let new = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        if let base {
            new.initialize(from: base, count: used)
            base.deallocate()
        }
        base = new
        allocated = size
    }
}

/// One owner at a time (it cannot be copied), so handing it to another thread is safe.
extension ByteBuffer: @unchecked Sendable {}
