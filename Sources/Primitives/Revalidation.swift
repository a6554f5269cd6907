/// What a conditional refresh needs from an earlier answer (RFC 9110 §13): the address the
/// resource was listed under, where it lives now (after permanent redirects, RFC 9110
/// §15.4.2/§15.4.9), and the validators the upstream sent with it. Kept with each cached
/// entry (L1 and L2), so every refresh — by this replica or another — can be conditional.
public struct Revalidation: Sendable, Equatable {
    /// The address as the caller knows it (a podcast's feed URL as its directory lists it).
    public var listedURL: String
    /// Where to ask: `listedURL`, or the target of a permanent redirect from it.
    public var url: String
    public var etag: String?
    public var lastModified: String?

    public init(listedURL: String, url: String, etag: String?, lastModified: String?) {
        self.listedURL = listedURL
        self.url = Self.isAbsoluteHTTP(url) ? url : listedURL
        self.etag = etag.flatMap(Self.validator)
        self.lastModified = lastModified.flatMap(Self.validator)
    }

    /// A validator worth sending back: something to compare, or a moved address to remember.
    public var isUseful: Bool { etag != nil || lastModified != nil || url != listedURL }

    /// The request header fields that make a refresh conditional.
    public var conditionalHeaders: [(String, String)] {
        var fields: [(String, String)] = []
        if let etag { fields.append(("If-None-Match", etag)) }
        if let lastModified { fields.append(("If-Modified-Since", lastModified)) }
        return fields
    }

    /// A header value sent back as is: visible ASCII and spaces only (no CR/LF to inject
    /// fields), bounded (an ETag is short; a feed's 4 KiB "validator" is not one).
    static func validator(_ text: String) -> String? {
        let trimmed = text.trimmingASCIIWhitespace()
        guard !trimmed.isEmpty, trimmed.utf8.count <= 256, trimmed.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(trimmed)
    }

    /// Read on every load, so without a lowercased copy of the URL.
    static func isAbsoluteHTTP(_ url: String) -> Bool {
        let bytes = url.utf8
        guard bytes.count > 8, bytes.count <= 4096, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return false }
        // `| 0x20` lowercases a letter and keeps `:` and `/`; no other visible byte becomes one of these.
        func starts(with scheme: String) -> Bool { zip(bytes, scheme.utf8).allSatisfy { $0 | 0x20 == $1 } }
        return starts(with: "http://") || starts(with: "https://")
    }

    /// One line per field, for a shared tier: `listed \n url \n etag \n last-modified`.
    public var serialized: String { [listedURL, url, etag ?? "", lastModified ?? ""].joined(separator: "\n") }

    /// `serialized` read back, validated like network input: anything else is none.
    public init?(serialized text: String) {
        guard text.utf8.count <= 9 * 1024 else { return nil }
        let parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, Self.isAbsoluteHTTP(parts[0]), Self.isAbsoluteHTTP(parts[1]) else { return nil }
        self.init(listedURL: parts[0], url: parts[1], etag: parts[2].isEmpty ? nil : parts[2], lastModified: parts[3].isEmpty ? nil : parts[3])
    }
}

extension Revalidation {
    /// After a `304`: a validator the new answer left out is still the one that matched
    /// (RFC 9111 §4.3.4 updates only the fields a 304 carries).
    public func keepingValidators(of previous: Revalidation) -> Revalidation {
        var merged = self
        if merged.etag == nil { merged.etag = previous.etag }
        if merged.lastModified == nil { merged.lastModified = previous.lastModified }
        return merged
    }
}
