import FeedFormats
import Primitives
import Upstream

/// Flickr's public photo feed → `/photos`.
public struct FlickrAdapter: FeedAdapter {
    public let source = SourceName.flickr
    let feedURL: String

    static let languages = ["de-de", "en-us", "es-us", "fr-fr", "it-it", "ko-kr", "pt-br", "zh-hk"]

    public init(feedURL: String) {
        self.feedURL = feedURL
    }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        let tags = try Self.tags(p.string("tags"))
        let tagmode = try p.choice("tagmode", ["all", "any"]) ?? "all"
        let id = try p.value("id").map { v throws(ClientError) in try Self.userID(v, name: "id") }
        var ids: [String] = []
        if let list = p.value("ids") {
            for part in list.split(separator: ",", omittingEmptySubsequences: false) {
                ids.append(try Self.userID(String(part).trimmingWhitespace(), name: "ids"))
            }
            ids = Array(Set(ids)).sorted()
            guard ids.count <= 20 else { throw .invalidParameter("ids may list at most 20 user ids") }
        }
        let lang = try p.choice("lang", Self.languages) ?? "en-us"
        let limit = try p.int("limit", in: 1...Self.maxLimit, default: Self.maxLimit)

        var query = ["format=json", "nojsoncallback=1", "lang=\(lang)"]
        if !tags.isEmpty { query += ["tags=\(tags.joined(separator: ",").formEncoded())", "tagmode=\(tagmode)"] }
        if let id { query.append("id=\(id.formEncoded())") }
        if !ids.isEmpty { query.append("ids=\(ids.joined(separator: ",").formEncoded())") }
        let request = UpstreamRequest(upstream: source, url: feedURL.addingQuery(query.joined(separator: "&")), headers: [("Accept", "application/json")])
        // One feed, one fetch: Flickr sends the same 20 photos whatever the limit, so every
        // limit's answer is cut from one load of them (the data, under the key without a limit,
        // which is also the whole feed's answer: no second entry for it).
        let dataKey =
            "photos|tags=\(tags.joined(separator: ","))|tagmode=\(tags.isEmpty ? "" : tagmode)|id=\(id ?? "")|ids=\(ids.joined(separator: ","))|lang=\(lang)"
        return PreparedFeed(
            source: source, cacheKey: limit == Self.maxLimit ? dataKey : dataKey + "|limit=\(limit)", upstreamRequest: request,
            view: FeedView(dataKey: dataKey, isAnAnswer: true) { data in Self.page(data, limit: limit) },
            render: { body throws(ClientError) in
                Representation(try FeedJSON.encode(try Self.normalise(body, limit: Self.maxLimit)))
            })
    }

    /// The most photos the feed sends, and so the most `limit` asks for.
    static let maxLimit = 20

    /// The first `limit` photos of the normalised feed; nil when `data` is not one.
    static func page(_ data: [UInt8], limit: Int) -> Representation? {
        guard let feed = try? FeedJSON.decode(FeedEnvelope<Photo>.self, from: data, source: SourceName.flickr) else { return nil }
        let page = FeedEnvelope(source: feed.source, title: feed.title, updated: feed.updated, items: Array(feed.items.prefix(limit)), page: nil)
        return (try? FeedJSON.encode(page)).map { Representation($0) }
    }

    static func tags(_ raw: String?) throws(ClientError) -> [String] {
        guard let raw else { return [] }
        let tags = raw.split(separator: ",").map { String($0).trimmingWhitespace().lowercased() }.filter { !$0.isEmpty }
        guard tags.count <= 20 else { throw .invalidParameter("tags may list at most 20 tags") }
        for tag in tags where tag.count > 100 || tag.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .invalidParameter("each tag must be at most 100 printable characters")
        }
        return Array(Set(tags)).sorted()
    }

    /// Flickr NSIDs look like `12345678@N00`.
    static func userID(_ value: String, name: String) throws(ClientError) -> String {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 20, parts[0].allSatisfy(\.isASCIIDigit),
            parts[1].count == 3, parts[1].first == "N", parts[1].dropFirst().allSatisfy(\.isASCIIDigit)
        else { throw .invalidParameter("\(name) must be Flickr user ids like 12345678@N00") }
        return value
    }

    // MARK: decoding

    struct Feed: Decodable {
        let title: String?
        let modified: String?
        let items: [Item]
    }

    struct Item: Decodable {
        struct Media: Decodable { let m: String? }
        let title: String?
        let link: String?
        let media: Media?
        let date_taken: String?
        let description: String?
        let published: String?
        let author: String?
        let author_id: String?
        let tags: String?
    }

    public static func normalise(_ body: [UInt8], limit: Int) throws(ClientError) -> FeedEnvelope<Photo> {
        let repaired = JSONRepair.fixInvalidEscapes(JSONRepair.stripJSONP(body))
        let feed = try FeedJSON.decode(Feed.self, from: repaired, source: SourceName.flickr)
        let photos = feed.items.prefix(limit).map { item in
            // Every URL an app may follow: absolute http(s) or nothing, as for feeds.
            let link = item.link.flatMap { URLReference.absolute($0) }, medium = item.media?.m.flatMap { URLReference.absolute($0) }
            return Photo(
                id: link.flatMap(lastPathSegment),
                title: item.title,
                link: link,
                imageUrl: medium,
                largeImageUrl: medium.map(largeVariant),
                images: medium.flatMap(PhotoImages.from(mediumURL:)),
                author: item.author.flatMap(displayName),
                authorId: item.author_id,
                tags: (item.tags ?? "").split(separator: " ").map(String.init),
                published: Timestamp.iso8601UTC(item.published),
                taken: Timestamp.iso8601UTC(item.date_taken),
                description: item.description)
        }
        return FeedEnvelope(source: SourceName.flickr, title: feed.title, updated: Timestamp.iso8601UTC(feed.modified), items: Array(photos), page: nil)
    }

    static func lastPathSegment(_ link: String) -> String? {
        var path = Substring(link)
        if let q = path.firstIndex(of: "?") { path = path[..<q] }
        while path.last == "/" { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return path.isEmpty ? nil : String(path) }
        let segment = path[path.index(after: slash)...]
        return segment.isEmpty ? nil : String(segment)
    }

    /// `…_m.jpg` is the 240 px rendition; `…_b.jpg` is 1024 px. (A byte search: Foundation's
    /// `range(of:options:)` goes through CFString and cost more than the whole decode.)
    static func largeVariant(_ url: String) -> String {
        var bytes = Array(url.utf8)
        guard bytes.count >= 3 else { return url }
        for i in stride(from: bytes.count - 3, through: 0, by: -1)
        where bytes[i] == UInt8(ascii: "_") && bytes[i + 1] == UInt8(ascii: "m") && bytes[i + 2] == UInt8(ascii: ".") {
            bytes[i + 1] = UInt8(ascii: "b")
            return String(decoding: bytes, as: UTF8.self)
        }
        return url
    }

    /// `nobody@flickr.com ("Jane Doe")` or the older `nobody@flickr.com (Jane Doe)` → `Jane Doe`.
    static func displayName(_ author: String) -> String? {
        guard let open = author.firstIndex(of: "("), let close = author.lastIndex(of: ")"), open < close else { return nil }
        var name = author[author.index(after: open)..<close]
        if name.count >= 2, name.first == "\"", name.last == "\"" { name = name.dropFirst().dropLast() }
        let trimmed = String(name).trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }
}

extension FlickrAdapter {
    /// `make fuzz`: a body end to end, as the route renders it (never a trap).
    package static func fuzz(_ body: [UInt8]) -> FuzzRun {
        var run = FuzzRun()
        run.read(try? normalise(body, limit: 20).encodedCount())
        return run
    }
}
