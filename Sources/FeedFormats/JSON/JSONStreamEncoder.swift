import Primitives

/// An `Encoder` that writes JSON bytes as it goes: no intermediate tree, no key sorting,
/// keys in declaration order. Several times faster than Foundation's JSONEncoder on Linux.
/// An absent optional is written as `null` (the API promises nulls, never missing keys),
/// so the models can use synthesized `Encodable`.
package final class JSONStreamEncoder: Encoder {
    private(set) var bytes: [UInt8] = []
    /// Open containers: whether each is an object, and whether it has a member yet.
    private var open: [(isObject: Bool, hasMember: Bool)] = []
    package var codingPath: [any CodingKey] = []
    package var userInfo: [CodingUserInfoKey: Any] = [:]

    package init(capacity: Int = 4096) {
        bytes.reserveCapacity(capacity)
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        bytes.append(UInt8(ascii: "{"))
        open.append((true, false))
        return KeyedEncodingContainer(Keyed<Key>(encoder: self))
    }

    package func unkeyedContainer() -> any UnkeyedEncodingContainer {
        bytes.append(UInt8(ascii: "["))
        open.append((false, false))
        return Unkeyed(encoder: self)
    }

    package func singleValueContainer() -> any SingleValueEncodingContainer { Single(encoder: self) }

    /// Encodes a value and closes whatever containers it opened.
    package func write<T: Encodable>(_ value: T) throws {
        let depth = open.count
        try value.encode(to: self)
        while open.count > depth { close() }
    }

    /// The bytes written so far.
    package var count: Int { bytes.count }

    /// `body` on the bytes written so far (values written one after another are concatenated).
    package func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try bytes.withUnsafeBufferPointer(body)
    }

    /// The bytes written, handed over (the encoder keeps none: the array is the caller's alone).
    package func take() -> [UInt8] {
        while !open.isEmpty { close() }
        defer { bytes = [] }
        return bytes
    }

    /// The bytes written, without the reserve's spare room: an answer is kept (cached) for its
    /// lifetime, and a 300-byte answer in a 4 KiB reserve made the cache hold 4× its budget.
    package func finish() -> [UInt8] {
        while !open.isEmpty { close() }
        guard bytes.capacity - bytes.count > 256 + bytes.count / 8 else { return bytes }
        return bytes.withUnsafeBufferPointer { Array($0) }
    }

    private func close() {
        guard let top = open.popLast() else { return }
        bytes.append(top.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
    }

    /// Comma before every member but the first of the innermost container.
    fileprivate func separate() {
        guard let i = open.indices.last else { return }
        if open[i].hasMember { bytes.append(UInt8(ascii: ",")) } else { open[i].hasMember = true }
    }

    fileprivate func key(_ key: String) {
        separate()
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    fileprivate func string(_ s: String) {
        // One exclusive access to `bytes` for the whole string, not one per byte.
        JSONBytes.appendQuoted(s, to: &bytes)
    }

    fileprivate func literal(_ text: String) { bytes.append(contentsOf: text.utf8) }

    fileprivate func number(_ d: Double) throws {
        // JSON has no infinity or NaN. Adapters map them to nil where they parse; this is the
        // last guard, so one bad number is a null field, never a failed (500) answer.
        guard d.isFinite else { return literal("null") }
        if d == d.rounded(), abs(d) < 1e15 { literal(String(Int64(d))) } else { literal(String(d)) }
    }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        package let encoder: JSONStreamEncoder
        package var codingPath: [any CodingKey] { encoder.codingPath }

        package mutating func encodeNil(forKey key: Key) throws {
            encoder.key(key.stringValue)
            encoder.literal("null")
        }
        package mutating func encode(_ value: Bool, forKey key: Key) throws {
            encoder.key(key.stringValue)
            encoder.literal(value ? "true" : "false")
        }
        package mutating func encode(_ value: String, forKey key: Key) throws {
            encoder.key(key.stringValue)
            encoder.string(value)
        }
        package mutating func encode(_ value: Double, forKey key: Key) throws {
            encoder.key(key.stringValue)
            try encoder.number(value)
        }
        package mutating func encode(_ value: Int, forKey key: Key) throws {
            encoder.key(key.stringValue)
            encoder.literal(String(value))
        }
        package mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            encoder.key(key.stringValue)
            try encoder.write(value)
        }
        package mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOrNull(value, key) }
        package mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try encodeOrNull(value, key) }

        private mutating func encodeOrNull<T: Encodable>(_ value: T?, _ key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }

        package mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            encoder.key(key.stringValue)
            return encoder.container(keyedBy: keyType)
        }
        package mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder.key(key.stringValue)
            return encoder.unkeyedContainer()
        }
        package mutating func superEncoder() -> any Encoder { encoder }
        package mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
    }

    private struct Unkeyed: UnkeyedEncodingContainer {
        package let encoder: JSONStreamEncoder
        package var codingPath: [any CodingKey] { encoder.codingPath }
        package var count = 0

        package mutating func encodeNil() throws {
            encoder.separate()
            encoder.literal("null")
            count += 1
        }
        package mutating func encode(_ value: String) throws {
            encoder.separate()
            encoder.string(value)
            count += 1
        }
        package mutating func encode<T: Encodable>(_ value: T) throws {
            encoder.separate()
            try encoder.write(value)
            count += 1
        }
        package mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            encoder.separate()
            count += 1
            return encoder.container(keyedBy: keyType)
        }
        package mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            encoder.separate()
            count += 1
            return encoder.unkeyedContainer()
        }
        package mutating func superEncoder() -> any Encoder { encoder }
    }

    private struct Single: SingleValueEncodingContainer {
        package let encoder: JSONStreamEncoder
        package var codingPath: [any CodingKey] { encoder.codingPath }

        package mutating func encodeNil() throws { encoder.literal("null") }
        package mutating func encode(_ value: Bool) throws { encoder.literal(value ? "true" : "false") }
        package mutating func encode(_ value: String) throws { encoder.string(value) }
        package mutating func encode(_ value: Double) throws { try encoder.number(value) }
        package mutating func encode(_ value: Float) throws { try encoder.number(Double(value)) }
        // Every integer width spelled out: one left to the generic overload would come back
        // here through its own `encode(to:)` and recurse until the stack ran out.
        package mutating func encode(_ value: Int) throws { encoder.literal(String(value)) }
        package mutating func encode(_ value: Int8) throws { encoder.literal(String(value)) }
        package mutating func encode(_ value: Int16) throws { encoder.literal(String(value)) }
        package mutating func encode(_ value: Int32) throws { encoder.literal(String(value)) }
        package mutating func encode(_ value: Int64) throws { encoder.literal(String(value)) }
        package mutating func encode(_ value: UInt) throws { encoder.literal(String(value)) }
        package mutating func encode(_ value: UInt8) throws { encoder.literal(String(value)) }
        package mutating func encode(_ value: UInt16) throws { encoder.literal(String(value)) }
        package mutating func encode(_ value: UInt32) throws { encoder.literal(String(value)) }
        package mutating func encode(_ value: UInt64) throws { encoder.literal(String(value)) }
        package mutating func encode<T: Encodable>(_ value: T) throws { try encoder.write(value) }
    }
}
