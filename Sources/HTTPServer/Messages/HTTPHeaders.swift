/// Header fields a response is built with, in order; names compared case-insensitively.
/// (A request's fields are `RequestHeaders`, read from the bytes as they came.)
public struct HTTPHeaders: Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init() {
        fields = []
    }

    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field of that name with one value.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    // Lookups walk the fields by index: a `for field in fields` loop copies (retains and
    // releases) every name and value it passes, and most lookups find nothing.

    /// The first value of the field, if any.
    public subscript(name: String) -> String? {
        for i in fields.indices where fields[i].name.equalsIgnoringASCIICase(name) { return fields[i].value }
        return nil
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}

extension String {
    /// Header names are compared on every lookup of every request: different lengths (the
    /// usual case) answer at once, equal ones are compared as contiguous bytes.
    @inline(__always) func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        let contiguous = a.withContiguousStorageIfAvailable { x in
            b.withContiguousStorageIfAvailable { y in Self.equalIgnoringASCIICase(x, y) }
        }
        if let result = contiguous ?? nil { return result }
        return zip(a, b).allSatisfy { $0 == $1 || ASCII.lower($0) == ASCII.lower($1) }
    }

    private static func equalIgnoringASCIICase(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
        for i in 0..<x.count where x[i] != y[i] && ASCII.lower(x[i]) != ASCII.lower(y[i]) { return false }
        return true
    }
}

enum ASCII {
    @inline(__always) static func lower(_ c: UInt8) -> UInt8 { (c >= 65 && c <= 90) ? c | 0x20 : c }

    /// Whether `bytes`, ASCII case ignored, are the lowercase `word`.
    static func equalsLowercase(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        word.withUTF8Buffer { w in
            guard w.count == bytes.count else { return false }
            for k in 0..<w.count where lower(bytes[k]) != w[k] { return false }
            return true
        }
    }

    /// RFC 9110 `tchar`, from a 128-bit set in two constants (no table to initialise, no
    /// branch per character class): `!#$%&'*+-.^_`|~`, digits, letters.
    @inline(__always) static func isTokenChar(_ c: UInt8) -> Bool {
        let word: UInt64 = c < 64 ? 0x03FF_6CFA_0000_0000 : (c < 128 ? 0x57FF_FFFF_C7FF_FFFE : 0)
        return (word >> UInt64(c & 63)) & 1 != 0
    }
}
