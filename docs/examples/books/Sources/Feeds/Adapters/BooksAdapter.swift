import FeedFormats
import Primitives
import Upstream

extension SourceName {
    /// Open Library's Books API (editions by their OLID): `/books/{id}`, `POST /books`.
    public static let books = "books"
}

/// Editions by their Open Library id → `/books/{id}` (one) and `POST /books` (`ids`, up to 20).
public struct BooksAdapter: FeedAdapter {
    public let source = SourceName.books
    let url: String
    let asking: Asking

    /// What a route names its editions by: one in the path (`id`), or several in a form (`ids`).
    public enum Asking: Sendable {
        case one
        case several
    }

    /// An edition's Open Library id (`OL7353617M`).
    package static let idPattern = "^OL[1-9][0-9]{0,9}M$"
    package static let maxIDs = 20

    public init(url: String, asking: Asking) {
        self.url = url
        self.asking = asking
    }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        let ids: [String]
        switch asking {
        case .one: ids = p.value("id").map { [$0] } ?? []
        case .several: ids = p.list("ids")
        }
        guard !ids.isEmpty else { throw .missingParameter(asking == .one ? "id" : "ids") }
        guard ids.count <= Self.maxIDs else { throw .invalidParameter("ids takes at most \(Self.maxIDs) editions (\(ids.count) given)") }
        for id in ids where !Self.isEditionID(id) { throw .invalidParameter("\(id) is not an edition's Open Library id (OL…M)") }
        // One cache entry per set of editions, whatever their order or repeats.
        let keys = Array(Set(ids)).sorted()
        let bibkeys = keys.map { "OLID:\($0)" }.joined(separator: ",")
        let request = UpstreamRequest(
            upstream: source, url: url.addingQuery("bibkeys=\(bibkeys)&format=json&jscmd=data"), headers: [("Accept", "application/json")])
        return PreparedFeed(
            source: source, cacheKey: "books|ids=\(keys.joined(separator: ","))", upstreamRequest: request,
            render: { body throws(ClientError) in Representation(try FeedJSON.encode(try Self.normalise(body, ids: keys))) })
    }

    static func isEditionID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard bytes.count >= 4, bytes.count <= 13, bytes.prefix(2) == [0x4F, 0x4C], bytes.last == 0x4D, bytes[2] != 0x30 else { return false }
        return bytes.dropFirst(2).dropLast().allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    struct Answer: Decodable {
        struct Author: Decodable { let name: String? }
        struct Cover: Decodable { let large: String? }
        let title: String?
        let authors: [Author]?
        let publish_date: String?
        let number_of_pages: Int?
        let cover: Cover?
        let url: String?
    }

    /// Each asked edition the answer names → `Book`, in the order asked; the others are left out.
    /// Every URL absolute http(s) or nothing, a page count in range or nothing.
    public static func normalise(_ body: [UInt8], ids: [String]) throws(ClientError) -> FeedEnvelope<Book> {
        let answer = try FeedJSON.decode([String: Answer].self, from: body, source: SourceName.books)
        let books = ids.compactMap { id -> Book? in
            guard let edition = answer["OLID:\(id)"] else { return nil }
            return Book(
                id: id, title: edition.title, authors: (edition.authors ?? []).prefix(20).compactMap(\.name),
                published: edition.publish_date, pages: edition.number_of_pages.flatMap { (1...100_000).contains($0) ? $0 : nil },
                coverUrl: edition.cover?.large.flatMap { URLReference.absolute($0) }, url: edition.url.flatMap { URLReference.absolute($0) })
        }
        return FeedEnvelope(source: SourceName.books, title: nil, updated: nil, items: books, page: nil)
    }
}

extension BooksAdapter {
    /// `make fuzz`: a body end to end, as the route renders it (never a trap).
    package static func fuzz(_ body: [UInt8]) -> FuzzRun {
        var run = FuzzRun()
        run.read(try? normalise(body, ids: ["OL7353617M", "OL1M"]).encodedCount())
        return run
    }
}

/// One edition.
public struct Book: Codable, Sendable, Equatable {
    public var id: String
    public var title: String?
    public var authors: [String]
    public var published: String?
    public var pages: Int?
    public var coverUrl: String?
    public var url: String?
}
