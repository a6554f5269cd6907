import Primitives

/// Where the next page of an episode list starts: the index after the last episode sent and
/// that episode's anchor (a hash of its id), so a walk over a feed that gained episodes
/// meanwhile finds its place again. Opaque to clients: unpadded base64url of 17 bytes
/// (version, index, anchor, a check tied to the list it came from), so a cursor from another
/// list, or a mangled one, is a clear 400 rather than a silent jump.
public struct EpisodeCursor: Sendable, Equatable {
    public var index: Int
    public var anchor: UInt64

    static let version: UInt8 = 1
    /// The most episodes a list can have: a cursor past it is not one we wrote.
    static let maxIndex = 1_000_000

    public init(index: Int, anchor: UInt64) {
        self.index = index
        self.anchor = anchor
    }

    /// `scope` names the list (a podcast id, or a batch's ids): a cursor is valid for it only.
    public func encoded(scope: String) -> String {
        var bytes: [UInt8] = [Self.version]
        bytes += Self.bigEndian(UInt64(index), count: 4)
        bytes += Self.bigEndian(anchor, count: 8)
        bytes += Self.bigEndian(Self.check(bytes, scope: scope), count: 4)
        return Base64URL.encode(bytes)
    }

    public static func decode(_ text: String, scope: String) throws(ClientError) -> EpisodeCursor {
        let invalid = ClientError.invalidParameter("cursor is not one this list gave out; start again without it")
        guard text.utf8.count == 23, let bytes = Base64URL.decode(text), bytes.count == 17, bytes[0] == version else { throw invalid }
        let body = Array(bytes[0..<13])
        guard number(bytes[13..<17]) == check(body, scope: scope) else { throw invalid }
        let index = Int(number(bytes[1..<5]))
        guard (1...maxIndex).contains(index) else { throw invalid }
        return EpisodeCursor(index: index, anchor: number(bytes[5..<13]))
    }

    static func check(_ bytes: [UInt8], scope: String) -> UInt64 {
        var h = XXH64.Hasher()
        h.add("episodes-cursor|\(scope)|".utf8)
        h.add(bytes)
        return h.value & 0xFFFF_FFFF
    }

    static func bigEndian(_ value: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(count - 1 - $0))) }
    }

    static func number(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The anchor of an episode: its id, or its JSON where the feed gives none.
    public static func anchor(id: String?, json: ArraySlice<UInt8>) -> UInt64 {
        var h = XXH64.Hasher()
        if let id { h.add(id.utf8) } else { h.add(json) }
        return h.value
    }
}

/// `since`: an ISO 8601 time or Unix seconds; only episodes published after it.
public enum EpisodeSince {
    public static func parse(_ p: QueryParameters) throws(ClientError) -> Int? {
        try p.time("since")
    }
}
