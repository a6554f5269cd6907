import FeedFormats
import Primitives

/// `POST /library/opml`: a subscription list moved in from another app, read (`OPMLReader`)
/// and checked outline by outline: each names a feed by an absolute http(s) URL (the
/// subscribe schemes apps write are read as one), which gets its feed id; a feed named twice is
/// one podcast; an outline that names no usable feed, or one past the library's size, is an
/// error of its own, never the whole file's.
public struct LibraryImport: Sendable {
    /// One outline that named a feed, as the answer lists it.
    public struct Entry: Sendable {
        public let text: String?
        /// The URL as the file gave it, when it is an absolute http(s) URL (a stranger's
        /// `javascript:` or relative link is never handed on as a URL); nil otherwise.
        public let xmlUrl: String?
        /// Its feed's index in `feeds`, or why it has none.
        public let feed: Result<Int, ClientError>
    }

    /// A feed the file names, once.
    public struct Feed: Sendable {
        public let url: String
        public let id: Int
        /// The first outline's text for it.
        public let title: String?
    }

    public let title: String?
    public let entries: [Entry]
    public let feeds: [Feed]
    /// Outlines past `maxOutlines`, not read.
    public let leftOut: Int

    /// The most outlines one file may hold that are read (duplicates and broken ones included).
    public static let maxOutlines = 5_000
    /// The most feeds one library holds: what `/episodes` refreshes in one request.
    public static let maxFeeds = EpisodeBatch.maxPodcasts

    public static let invalidURL = ClientError(
        status: 422, code: "invalid_feed_url", message: "xmlUrl is not an absolute http(s) URL (feed:, itpc: and pcast: links are read as one)")
    public static let tooMany = ClientError(
        status: 413, code: "library_too_large", message: "the file names more than \(maxFeeds) feeds: this one was not imported")

    public init(opml bytes: [UInt8]) throws(ClientError) {
        guard !bytes.isEmpty else {
            throw ClientError(status: 400, code: "invalid_opml", message: "send an OPML document (a podcast app's subscription export) as the body")
        }
        let read: OPMLReader.Result
        switch Result(catching: { () throws(OPMLReader.Failure) in try OPMLReader.read(bytes, maxOutlines: Self.maxOutlines) }) {
        case .success(let result): read = result
        case .failure(.tooDeep):
            throw ClientError(status: 400, code: "invalid_opml", message: "the document nests outlines deeper than \(OPMLReader.maxDepth)")
        case .failure(.notOPML(let why)): throw ClientError(status: 400, code: "invalid_opml", message: why)
        }
        var feeds: [Feed] = []
        var index: [String: Int] = [:]
        var entries: [Entry] = []
        entries.reserveCapacity(read.outlines.count)
        for outline in read.outlines {
            guard let url = FeedID.normalised(outline.xmlUrl) else {
                entries.append(Entry(text: outline.text, xmlUrl: nil, feed: .failure(Self.invalidURL)))
                continue
            }
            let scheme = outline.xmlUrl.utf8.prefix(8).map { $0 | 0x20 }
            let web = scheme.starts(with: Array("http://".utf8)) || scheme.starts(with: Array("https://".utf8))
            let given = web && outline.xmlUrl.utf8.count <= 2048 ? outline.xmlUrl : nil
            if let known = index[url] {
                entries.append(Entry(text: outline.text, xmlUrl: given, feed: .success(known)))
            } else if feeds.count < Self.maxFeeds {
                index[url] = feeds.count
                entries.append(Entry(text: outline.text, xmlUrl: given, feed: .success(feeds.count)))
                feeds.append(Feed(url: url, id: FeedID.id(ofNormalised: url), title: outline.text))
            } else {
                entries.append(Entry(text: outline.text, xmlUrl: given, feed: .failure(Self.tooMany)))
            }
        }
        title = read.title
        self.entries = entries
        self.feeds = feeds
        leftOut = read.leftOut
    }
}
