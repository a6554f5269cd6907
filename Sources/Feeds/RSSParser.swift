import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Streaming (SAX) parser for podcast feeds: RSS 2.0 with the iTunes namespace, and Atom.
/// External entities are never resolved.
final class RSSParser: NSObject, XMLParserDelegate {
    struct Result {
        var title: String?
        var imageUrl: String?
        var episodes: [Episode]
    }

    private enum Kind { case unknown, rss, atom }

    private static let itunes = "http://www.itunes.com/dtds/podcast-1.0.dtd"
    private static let content = "http://purl.org/rss/1.0/modules/content/"
    private static let atom = "http://www.w3.org/2005/Atom"

    private let limit: Int
    private var kind = Kind.unknown
    private(set) var stack: [String] = []
    private var text = ""
    private var result = Result(title: nil, imageUrl: nil, episodes: [])
    private var current: Episode?
    private var itemDescription: String?
    private var itunesSummary: String?
    private var contentEncoded: String?
    private var reachedLimit = false
    private var notAFeed = false
    private var sawError = false

    private init(limit: Int) {
        self.limit = limit
    }

    /// Parses up to `limit` items; throws for anything that is not a well-formed RSS or Atom feed.
    static func parse(_ data: [UInt8], limit: Int) throws(FeedError) -> Result {
        // FoundationXML traps on element names that are not valid UTF-8 (found by `make fuzz`),
        // and these bytes come from third parties: only well-formed UTF-8 goes in.
        guard String(validating: data, as: UTF8.self) != nil else { throw .badUpstreamResponse("the podcast feed") }
        let delegate = RSSParser(limit: limit)
        let parser = XMLParser(data: Data(data))
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        let ok = parser.parse()
        // A truncated or mismatched document must fail, even if libxml2 recovered from it.
        let complete = delegate.reachedLimit || (ok && !delegate.sawError && delegate.stack.isEmpty)
        guard complete, !delegate.notAFeed, delegate.kind != .unknown else { throw .badUpstreamResponse("the podcast feed") }
        var result = delegate.result
        // The channel image may come after the first items: fill it in at the end.
        for i in result.episodes.indices where result.episodes[i].imageUrl == nil { result.episodes[i].imageUrl = result.imageUrl }
        return result
    }

    // MARK: XMLParserDelegate

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI ns: String?, qualifiedName _: String?, attributes: [String: String] = [:]) {
        if stack.isEmpty {
            switch name.lowercased() {
            case "rss", "rdf": kind = .rss
            case "feed": kind = .atom
            default:
                notAFeed = true
                parser.abortParsing()
                return
            }
        }
        stack.append(name)
        text = ""
        let inItem = current != nil
        switch (kind, name, ns) {
        case (.rss, "item", _), (.atom, "entry", _):
            current = Episode()
            itemDescription = nil
            itunesSummary = nil
            contentEncoded = nil
        case (.rss, "enclosure", _) where inItem:
            current?.audioUrl = attributes["url"]
            current?.audioType = attributes["type"]
            current?.audioBytes = attributes["length"].flatMap { Int($0.trimmingWhitespace()) }.flatMap { $0 > 0 ? $0 : nil }
        case (_, "image", Self.itunes?):
            if let href = attributes["href"] {
                if inItem { current?.imageUrl = href } else if result.imageUrl == nil || stack.count <= 3 { result.imageUrl = href }
            }
        case (.atom, "link", _) where inItem:
            let rel = attributes["rel"] ?? "alternate"
            if rel == "enclosure" {
                current?.audioUrl = attributes["href"]
                current?.audioType = attributes["type"]
                current?.audioBytes = attributes["length"].flatMap { Int($0) }
            } else if rel == "alternate" {
                current?.link = attributes["href"]
            }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        sawError = true
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        text += String(decoding: block, as: UTF8.self)
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI ns: String?, qualifiedName _: String?) {
        defer {
            _ = stack.popLast()  // libxml2 may report an end tag with no start (recovery): never trap
            text = ""
        }
        let value = text.trimmingWhitespace()
        let parent = stack.count >= 2 ? stack[stack.count - 2] : ""
        if current == nil {
            // Channel (or feed) level.
            if name == "title" && ns != Self.itunes && (parent == "channel" || (kind == .atom && parent == "feed")) && result.title == nil {
                result.title = value.isEmpty ? nil : value
            } else if name == "url" && parent == "image" && result.imageUrl == nil {
                result.imageUrl = value.isEmpty ? nil : value
            } else if kind == .atom && (name == "logo" || name == "icon") && result.imageUrl == nil {
                result.imageUrl = value.isEmpty ? nil : value
            }
            return
        }
        if (kind == .rss && name == "item") || (kind == .atom && name == "entry") {
            finishItem(parser)
            return
        }
        guard !value.isEmpty else { return }
        switch (name, ns) {
        case ("title", Self.itunes?):
            if current?.title == nil { current?.title = value }
        case ("title", _): current?.title = value
        case ("guid", _), ("id", Self.atom?): current?.id = value
        case ("pubDate", _), ("published", _), ("date", _):
            current?.published = RFC822Date.parse(value).map(Timestamp.format)
        case ("updated", Self.atom?):
            if current?.published == nil { current?.published = Timestamp.iso8601UTC(value) }
        case ("duration", Self.itunes?): current?.duration = EpisodeDuration.seconds(value)
        case ("episode", Self.itunes?): current?.episode = Int(value)
        case ("season", Self.itunes?): current?.season = Int(value)
        case ("explicit", Self.itunes?):
            switch value.lowercased() {
            case "yes", "true", "explicit": current?.explicit = true
            case "no", "false", "clean": current?.explicit = false
            default: break
            }
        case ("summary", Self.itunes?): itunesSummary = value
        case ("encoded", Self.content?): contentEncoded = value
        case ("description", _), ("summary", Self.atom?), ("content", Self.atom?):
            if itemDescription == nil { itemDescription = value }
        case ("link", _) where kind == .rss: current?.link = value
        default: break
        }
    }

    private func finishItem(_ parser: XMLParser) {
        guard var episode = current else { return }
        current = nil
        if episode.id == nil { episode.id = episode.audioUrl }
        // description and content:encoded carry HTML; itunes:summary is plain text by its spec.
        let plain =
            itemDescription.map(HTMLText.plain)
            ?? itunesSummary.map(HTMLText.collapseWhitespace)
            ?? contentEncoded.map(HTMLText.plain)
        episode.summary = plain?.isEmpty == false ? plain : nil
        result.episodes.append(episode)
        if result.episodes.count >= limit {
            reachedLimit = true
            parser.abortParsing()
        }
    }
}
