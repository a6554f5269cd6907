/// Where one header field's name and value lie in `RequestHeaders`' text (byte offsets).
struct FieldRange {
    var nameStart: UInt32
    var nameEnd: UInt32
    var valueStart: UInt32
    var valueEnd: UInt32
}

/// A request's header fields as received, in arrival order; names compared
/// case-insensitively. One buffer holds a table of where each name and value lie and the
/// header section's bytes: one allocation per request, names compared as bytes, and a value
/// becomes a `String` only when asked for (a request sends a dozen fields; a handler reads
/// two or three, and most lookups find nothing).
public struct RequestHeaders: @unchecked Sendable, Sequence {  // (storage is written once, in init)
    /// `count` `FieldRange`s, then the text they point into.
    private let storage: HeaderStorage?
    public let count: Int
    /// One bit per name present (`presenceBit`): most lookups ask for a field the request
    /// does not have, and answer from this word without touching the bytes.
    private let presence: UInt64

    private static let entryBytes = MemoryLayout<FieldRange>.stride

    public init() {
        storage = nil
        count = 0
        presence = 0
    }

    /// From name/value pairs (tests and in-process callers), laid out as the parser does.
    public init(_ fields: [(String, String)]) {
        var text: [UInt8] = []
        var ranges: [FieldRange] = []
        for (name, value) in fields {
            let nameStart = UInt32(truncatingIfNeeded: text.count)
            text += name.utf8
            let nameEnd = UInt32(truncatingIfNeeded: text.count)
            text += Array(": ".utf8)
            let valueStart = UInt32(truncatingIfNeeded: text.count)
            text += value.utf8
            ranges.append(FieldRange(nameStart: nameStart, nameEnd: nameEnd, valueStart: valueStart, valueEnd: UInt32(truncatingIfNeeded: text.count)))
            text += Array("\r\n".utf8)
        }
        self = text.withUnsafeBufferPointer { t in ranges.withUnsafeBufferPointer { RequestHeaders(text: t, ranges: $0) } }
    }

    /// The parser's fields: `ranges` are offsets into `text` (the header section).
    init(text: UnsafeBufferPointer<UInt8>, ranges: UnsafeBufferPointer<FieldRange>) {
        let tableBytes = ranges.count * Self.entryBytes
        let total = tableBytes + text.count
        let storage = unsafeDowncast(HeaderStorage.create(minimumCapacity: total) { _ in total }, to: HeaderStorage.self)
        storage.withUnsafeMutablePointerToElements { base in
            if let r = ranges.baseAddress { UnsafeMutableRawPointer(base).copyMemory(from: r, byteCount: tableBytes) }
            if let t = text.baseAddress { (base + tableBytes).initialize(from: t, count: text.count) }
        }
        self.storage = storage
        count = ranges.count
        var presence: UInt64 = 0
        for r in ranges { presence |= Self.presenceBit(length: Int(r.nameEnd) - Int(r.nameStart)) }
        self.presence = presence
    }

    /// A name's bit: its length (header names' lengths are spread out, and a String's UTF-8
    /// count is known without reading it; 63 and longer share the last bit).
    private static func presenceBit(length: Int) -> UInt64 { 1 << UInt64(Swift.min(Swift.max(length, 0), 63)) }

    // MARK: lookups (first match, all matches, exactly one)

    /// The first value of the field, if any.
    public subscript(name: String) -> String? {
        firstIndex(of: name).map(value(at:))
    }

    /// The value of a field that must appear once: nil when absent or repeated.
    public func single(_ name: String) -> String? {
        var found: Int?
        var repeated = false
        forEachIndex(of: name) { i in
            if found != nil { repeated = true }
            found = i
            return !repeated
        }
        return repeated ? nil : found.map(value(at:))
    }

    public func values(_ name: String) -> [String] {
        var indices: [Int] = []
        forEachIndex(of: name) { i in
            indices.append(i)
            return true
        }
        return indices.map(value(at:))
    }

    public func contains(_ name: String) -> Bool { firstIndex(of: name) != nil }

    /// The first value's bytes, for readers that decide without a `String` (Accept-Encoding, Host).
    func withFirstValue<R>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard let i = firstIndex(of: name) else { return nil }
        return withBytes(field: i, value: true, body)
    }

    func firstIndex(of name: String) -> Int? {
        var first: Int?
        forEachIndex(of: name) { i in
            first = i
            return false
        }
        return first
    }

    /// Calls `body` with each field named `name`, in order, while it returns true. One pass
    /// over the table: length first (the usual mismatch), then bytes ignoring ASCII case.
    private func forEachIndex(of name: String, _ body: (Int) -> Bool) {
        guard presence & Self.presenceBit(length: name.utf8.count) != 0 else { return }  // not here: the usual answer, from one word
        var name = name
        name.withUTF8 { wanted in
            withStorage { raw in
                let tableBytes = count * Self.entryBytes
                guard tableBytes <= raw.count, let base = raw.baseAddress else { return }
                let text = base + tableBytes
                for i in 0..<count {
                    let r = raw.loadUnaligned(fromByteOffset: i * Self.entryBytes, as: FieldRange.self)
                    let start = Int(r.nameStart)
                    guard Int(r.nameEnd) - start == wanted.count, tableBytes + Int(r.nameEnd) <= raw.count else { continue }
                    var same = true
                    for k in 0..<wanted.count {
                        let have = text.load(fromByteOffset: start + k, as: UInt8.self)
                        if have != wanted[k] && ASCII.lower(have) != ASCII.lower(wanted[k]) {
                            same = false
                            break
                        }
                    }
                    if same && !body(i) { return }
                }
            }
        }
    }

    /// The fields that framing and routing interpret, told apart by length and bytes.
    enum KnownField { case host, contentLength, transferEncoding, connection, expect }

    func knownField(at i: Int) -> KnownField? {
        withBytes(field: i, value: false) { name in
            switch name.count {
            case 4: return ASCII.equalsLowercase(name, "host") ? .host : nil
            case 6: return ASCII.equalsLowercase(name, "expect") ? .expect : nil
            case 10: return ASCII.equalsLowercase(name, "connection") ? .connection : nil
            case 14: return ASCII.equalsLowercase(name, "content-length") ? .contentLength : nil
            case 17: return ASCII.equalsLowercase(name, "transfer-encoding") ? .transferEncoding : nil
            default: return nil
            }
        }
    }

    /// Field `i`'s value bytes.
    func withValue<R>(at i: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { withBytes(field: i, value: true, body) }

    public func name(at i: Int) -> String { withBytes(field: i, value: false) { String(decoding: $0, as: UTF8.self) } }
    public func value(at i: Int) -> String { withBytes(field: i, value: true) { String(decoding: $0, as: UTF8.self) } }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        (0..<count).map { (name: name(at: $0), value: value(at: $0)) }.makeIterator()
    }

    // MARK: storage

    /// The name or value bytes of field `i` (empty when `i` is out of range or the table is damaged).
    private func withBytes<R>(field i: Int, value: Bool, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        withStorage { raw in
            let tableBytes = count * Self.entryBytes
            guard i >= 0, i < count, tableBytes <= raw.count else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
            let r = raw.loadUnaligned(fromByteOffset: i * Self.entryBytes, as: FieldRange.self)
            let start = tableBytes + Int(value ? r.valueStart : r.nameStart)
            let end = tableBytes + Int(value ? r.valueEnd : r.nameEnd)
            guard start <= end, end <= raw.count else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
            let bytes = UnsafeRawBufferPointer(rebasing: raw[start..<end]).assumingMemoryBound(to: UInt8.self)
            return body(bytes)
        }
    }

    private func withStorage<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let storage else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return storage.withUnsafeMutablePointers { total, bytes in body(UnsafeRawBufferPointer(start: bytes, count: total.pointee)) }
    }
}

/// One allocation: the header is the byte count, the elements the table and the text. A
/// `ManagedBuffer`, not an array: creating a `[UInt8]` of a computed size goes through the
/// standard library's unspecialised path and a run-time metadata lookup (~300 instructions).
/// Written once in `RequestHeaders.init`, only read after: safe to share (hence the
/// `@unchecked Sendable` there; `ManagedBuffer` itself may not be Sendable).
final class HeaderStorage: ManagedBuffer<Int, UInt8> {}
