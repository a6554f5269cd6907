/// A `Decoder` over a parsed `JSONValue`: what `JSONDecoder` does, without its
/// per-field overhead on Linux. Used for upstream bodies, so every mismatch throws.
/// It keeps no coding path: errors become one "unreadable upstream response" anyway,
/// and building a path array for every field was its largest cost.
package struct JSONValueDecoder: Decoder {
    package let value: JSONValue
    package var codingPath: [any CodingKey] { [] }
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package init(_ value: JSONValue) {
        self.value = value
    }

    package static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        try T(from: JSONValueDecoder(try JSONParser.parse(bytes)))
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw Self.mismatch([String: Any].self, value) }
        return KeyedDecodingContainer(Keyed<Key>(members: members))
    }

    package func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw Self.mismatch([Any].self, value) }
        return Unkeyed(elements: elements)
    }

    package func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(value: value) }

    // MARK: scalars

    package static func string(_ v: JSONValue) throws -> String {
        guard case .string(let s) = v else { throw mismatch(String.self, v) }
        return s
    }

    package static func bool(_ v: JSONValue) throws -> Bool {
        guard case .bool(let b) = v else { throw mismatch(Bool.self, v) }
        return b
    }

    package static func double(_ v: JSONValue) throws -> Double {
        guard case .number(let text) = v, let d = Double(text) else { throw mismatch(Double.self, v) }
        return d
    }

    /// Exact integers: `42`, and also `42.0` or `4.2e1`, but never a fraction or an overflow.
    package static func integer<T: FixedWidthInteger>(_ type: T.Type, _ v: JSONValue) throws -> T {
        guard case .number(let text) = v else { throw mismatch(T.self, v) }
        if let n = T(text) { return n }
        guard let d = Double(text), d == d.rounded(), let n = T(exactly: d) else { throw mismatch(T.self, v) }
        return n
    }

    package static func mismatch(_ type: Any.Type, _ v: JSONValue) -> DecodingError {
        .typeMismatch(type, .init(codingPath: [], debugDescription: "found \(v.kind)"))
    }

    // MARK: containers

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        package let members: [(key: String, value: JSONValue)]
        /// Member name → first position, for objects too large to scan per key: a
        /// `[String: T]` decodes every key it lists, which was O(n²) over a linear scan.
        private let index: [String: Int]?
        package var codingPath: [any CodingKey] { [] }

        /// Past this many members a lookup table pays for itself.
        static var indexedFrom: Int { 16 }

        init(members: [(key: String, value: JSONValue)]) {
            self.members = members
            if members.count > Self.indexedFrom {
                var index = [String: Int](minimumCapacity: members.count)
                for (i, m) in members.enumerated() where index[m.key] == nil { index[m.key] = i }
                self.index = index
            } else {
                index = nil
            }
        }

        package var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

        private func find(_ key: Key) -> JSONValue? {
            let name = key.stringValue
            if let index { return index[name].map { members[$0].value } }
            for m in members where m.key == name { return m.value }
            return nil
        }

        private func require(_ key: Key) throws -> JSONValue {
            guard let v = find(key) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no member \(key.stringValue)"))
            }
            return v
        }

        package func contains(_ key: Key) -> Bool { find(key) != nil }

        package func decodeNil(forKey key: Key) throws -> Bool {
            if case .null = try require(key) { return true }
            return false
        }

        package func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try JSONValueDecoder.bool(try require(key)) }
        package func decode(_ type: String.Type, forKey key: Key) throws -> String { try JSONValueDecoder.string(try require(key)) }
        package func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try JSONValueDecoder.double(try require(key)) }
        package func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try JSONValueDecoder.integer(Int.self, try require(key)) }

        package func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try T(from: JSONValueDecoder(try require(key)))
        }

        // The common case for upstream DTOs: absent or null → nil, in one lookup.
        // Optional fields take what real upstreams send where the schema says otherwise:
        // a number where a string belongs is its text; an object, array or boolean is absent.
        // An optional field never fails the whole answer.
        package func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            guard let v = find(key) else { return nil }
            switch v {
            case .string(let text): return text
            case .number(let text): return text
            default: return nil
            }
        }

        // An optional number out of range (a 20-digit count, `1e400`) reads as absent, a count
        // sent as a string (`"12"`) as its value: the field becomes null (or the number) instead
        // of failing the whole answer.
        package func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            guard let v = find(key) else { return nil }
            switch v {
            case .number: return try? JSONValueDecoder.integer(Int.self, v)
            case .string(let text):
                let digits = text.utf8
                guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
                return Int(text)
            default: return nil
            }
        }

        package func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            guard let v = find(key) else { return nil }
            let d: Double?
            switch v {
            case .number(let text), .string(let text): d = text.utf8.count <= 64 ? Double(text) : nil
            default: d = nil
            }
            return d.flatMap { $0.isFinite ? $0 : nil }
        }

        /// An optional nested value of the wrong shape (`"lenders": []` where an object belongs)
        /// is absent too: its fields become null, the rest of the answer stands.
        package func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let v = find(key) else { return nil }
            if case .null = v { return nil }
            return try? T(from: JSONValueDecoder(v))
        }

        package func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try JSONValueDecoder(try require(key)).container(keyedBy: type)
        }

        package func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try JSONValueDecoder(try require(key)).unkeyedContainer()
        }

        package func superDecoder() throws -> any Decoder { JSONValueDecoder(.object(members)) }
        package func superDecoder(forKey key: Key) throws -> any Decoder { JSONValueDecoder(try require(key)) }
    }

    private struct Unkeyed: UnkeyedDecodingContainer {
        package let elements: [JSONValue]
        package var codingPath: [any CodingKey] { [] }
        package var currentIndex = 0

        package init(elements: [JSONValue]) {
            self.elements = elements
        }

        package var count: Int? { elements.count }
        package var isAtEnd: Bool { currentIndex >= elements.count }

        private mutating func next() throws -> JSONValue {
            guard currentIndex < elements.count else {
                throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath, debugDescription: "array is exhausted"))
            }
            defer { currentIndex += 1 }
            return elements[currentIndex]
        }

        package mutating func decodeNil() throws -> Bool {
            guard currentIndex < elements.count else { return false }
            if case .null = elements[currentIndex] {
                currentIndex += 1
                return true
            }
            return false
        }

        package mutating func decode(_ type: String.Type) throws -> String { try JSONValueDecoder.string(try next()) }

        package mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try T(from: JSONValueDecoder(try next()))
        }

        package mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try JSONValueDecoder(try next()).container(keyedBy: type)
        }

        package mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try JSONValueDecoder(try next()).unkeyedContainer()
        }

        package mutating func superDecoder() throws -> any Decoder { JSONValueDecoder(try next()) }
    }

    private struct Single: SingleValueDecodingContainer {
        package let value: JSONValue
        package var codingPath: [any CodingKey] { [] }

        package func decodeNil() -> Bool {
            if case .null = value { return true }
            return false
        }

        package func decode(_ type: Bool.Type) throws -> Bool { try JSONValueDecoder.bool(value) }
        package func decode(_ type: String.Type) throws -> String { try JSONValueDecoder.string(value) }
        package func decode(_ type: Double.Type) throws -> Double { try JSONValueDecoder.double(value) }
        package func decode(_ type: Float.Type) throws -> Float { Float(try JSONValueDecoder.double(value)) }
        // Every primitive needs its own method here: the generic one below would send a
        // primitive's init(from:) straight back to this container, forever.
        package func decode(_ type: Int.Type) throws -> Int { try JSONValueDecoder.integer(Int.self, value) }
        package func decode(_ type: Int8.Type) throws -> Int8 { try JSONValueDecoder.integer(Int8.self, value) }
        package func decode(_ type: Int16.Type) throws -> Int16 { try JSONValueDecoder.integer(Int16.self, value) }
        package func decode(_ type: Int32.Type) throws -> Int32 { try JSONValueDecoder.integer(Int32.self, value) }
        package func decode(_ type: Int64.Type) throws -> Int64 { try JSONValueDecoder.integer(Int64.self, value) }
        package func decode(_ type: UInt.Type) throws -> UInt { try JSONValueDecoder.integer(UInt.self, value) }
        package func decode(_ type: UInt8.Type) throws -> UInt8 { try JSONValueDecoder.integer(UInt8.self, value) }
        package func decode(_ type: UInt16.Type) throws -> UInt16 { try JSONValueDecoder.integer(UInt16.self, value) }
        package func decode(_ type: UInt32.Type) throws -> UInt32 { try JSONValueDecoder.integer(UInt32.self, value) }
        package func decode(_ type: UInt64.Type) throws -> UInt64 { try JSONValueDecoder.integer(UInt64.self, value) }
        package func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: JSONValueDecoder(value)) }
    }
}

extension JSONValue {
    package var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
