/// HMAC-SHA256 (RFC 2104) under one key: the padded key's two hash states are computed once,
/// so each signature costs the message's blocks plus two.
public struct HMACSHA256: Sendable {
    let inner: SHA256
    let outer: SHA256

    public init<C: Collection>(key: C) where C.Element == UInt8 {
        var k = key.count > 64 ? SHA256.hash(key) : Array(key)
        k += [UInt8](repeating: 0, count: 64 - k.count)
        var inner = SHA256(), outer = SHA256()
        inner.update(k.map { $0 ^ 0x36 })
        outer.update(k.map { $0 ^ 0x5c })
        self.inner = inner
        self.outer = outer
    }

    public func mac<C: Collection>(_ message: C) -> [UInt8] where C.Element == UInt8 {
        var i = inner
        i.update(message)
        var o = outer
        o.update(i.finish())
        return o.finish()
    }

    /// Compares two MACs in time that depends on their length only (no early exit to time).
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
