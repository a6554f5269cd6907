import Primitives

/// Request ids: the client's when well formed, else a short process-unique one.
public final class RequestIDGenerator: Sendable {
    /// Striped by CPU: the loops' cores do not share one line for it (`StripedCounters`).
    private let counter = StripedCounters(count: 1)
    private let prefix: UInt64

    init() {
        prefix = UInt64.random(in: 0...0xFFFFFF)
    }

    /// A new id, as its number: written as hex where it is sent or logged (no String made for it).
    func next() -> UInt64 { prefix << 36 | counter.next() }

    /// How many lowercase hex digits `id` takes without leading zeros (at most 15).
    @inlinable public static func digits(_ id: UInt64) -> Int { max(1, (67 - id.leadingZeroBitCount) / 4) }

    /// `id` as text: at most 15 UTF-8 bytes, so Swift stores it inline (no allocation).
    static func text(_ id: UInt64) -> String {
        let digits = digits(id)
        var text = HexDigits.ascii(id)
        return withUnsafeBytes(of: &text) { raw in
            String(unsafeUninitializedCapacity: digits) { out in
                UnsafeMutableRawBufferPointer(out).copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[(16 - digits)...]))
                return digits
            }
        }
    }

    /// Accepts 1–128 characters of `[A-Za-z0-9._:-]`; anything else is replaced.
    static func isValid(_ id: String) -> Bool {
        let utf8 = id.utf8
        guard !utf8.isEmpty, utf8.count <= 128 else { return false }
        return utf8.allSatisfy { b in
            (48...57).contains(b) || (65...90).contains(b) || (97...122).contains(b) || b == 0x2E || b == 0x5F || b == 0x2D || b == 0x3A
        }
    }
}
