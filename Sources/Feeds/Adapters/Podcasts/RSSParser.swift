import FeedFormats
import Primitives

/// Streaming parser for podcast feeds on libexpat: RSS 2.0 with the iTunes namespace, and Atom.
/// Reads any encoding XMLEncoding resolves; no DTD or external entity is ever loaded.
final class RSSParser: XMLStreamHandler {
    struct Result {
        var title: String?
        var imageUrl: String?
        var episodes: [Episode]
        /// The channel's own description (`description`, `itunes:summary`, Atom `subtitle`), as plain text.
        var description: String?
        var author: String?
        var link: String?
        var language: String?
        var podcastGuid: String?
        var locked: Bool?
        var funding: [Funding] = []
        var persons: [Person] = []
        var newFeedUrl: String?
        /// WebSub: the hub the feed names (`atom:link rel="hub"`) and its own URL (`rel="self"`, the topic).
        var hub: String?
        var selfURL: String?
        /// How long the publisher says the feed may be kept before it is read again (RSS `ttl`,
        /// `sy:updatePeriod` / `sy:updateFrequency`), in seconds.
        var ttlSeconds: Int?
        var updatePeriodSeconds: Int?
        var updateFrequency = 1
        /// The feed lists more items than `limit`: the oldest by date were left out.
        var reachedLimit = false
    }

    private enum Kind { case unknown, rss, atom }
    private enum Namespace { case none, itunes, content, atom, podcast, podlove, syndication, other }

    private struct Element {
        let namespace: Namespace
        let name: String
        /// What relative references in and under it resolve against (the feed's URL, or an `xml:base`).
        let base: String?
    }

    /// `xml:base` as expat names it with namespace processing on.
    private static let xmlBase: StaticString = "http://www.w3.org/XML/1998/namespace\u{01}base"

    private static let itunes = Array("http://www.itunes.com/dtds/podcast-1.0.dtd".utf8)
    private static let content = Array("http://purl.org/rss/1.0/modules/content/".utf8)
    private static let atom = Array("http://www.w3.org/2005/Atom".utf8)
    /// The podcastindex.org namespace, and the address early feeds declared it with.
    private static let podcast = Array("https://podcastindex.org/namespace/1.0".utf8)
    private static let podcastEarly = Array("https://github.com/Podcastindex-org/podcast-namespace/blob/main/docs/1.0.md".utf8)
    /// Podlove Simple Chapters (`psc:chapters`), inline in the item.
    private static let podlove = Array("http://podlove.org/simple-chapters".utf8)
    /// RSS 1.0's syndication module (`sy:updatePeriod`), which many feed generators write.
    private static let syndication = Array("http://purl.org/rss/1.0/modules/syndication/".utf8)

    /// The feed's final URL (after redirects): the base of every relative reference in it.
    private let documentBase: String?
    private var kind = Kind.unknown
    private var stack: [Element] = []
    /// Character data since the last start or end tag, as UTF-8 (expat's output).
    private var text: [UInt8] = []
    private var result = Result(title: nil, imageUrl: nil, episodes: [])
    private var current: Episode?
    private var itemDescription: String?
    private var itunesSummary: String?
    private var contentEncoded: String?
    private var itemBase: String?
    private var channelSummary: String?
    /// A `podcast:person`, `soundbite` or `funding` whose text (name, title) is still to come.
    private var pendingPerson: (role: String, group: String, href: String?, img: String?)?
    private var pendingSoundbite: (start: Double, duration: Double)?
    private var pendingFunding: String?
    /// The items kept so far: at most `limit`, the newest by date.
    private var kept: NewestEpisodes
    /// Where a big feed's items are finished as they are read (nil: once the feed is read).
    private var overlap: OverlappedWork<(Episode, ItemTexts), Episode>?
    private var notAFeed = false

    /// Where show notes' images are sent instead (the image proxy); nil: left as they are.
    private let imageSource: (@Sendable (String) -> String)?

    private init(limit: Int, base: String?, imageSource: (@Sendable (String) -> String)?) {
        kept = NewestEpisodes(capacity: limit)
        self.imageSource = imageSource
        documentBase = base.flatMap { URLReference.absolute($0) }
        text.reserveCapacity(4096)
    }

    /// Parses every item and keeps at most `limit`: the newest by date, whatever order the feed
    /// lists them in (`NewestEpisodes`), in the feed's order; throws for anything that is not a
    /// well-formed RSS or Atom feed.
    /// `contentType` is the HTTP header, whose charset applies when the document declares none;
    /// `base` the feed's final URL, against which relative links resolve (none: they are dropped).
    static func parse(
        _ data: [UInt8], limit: Int, contentType: String? = nil, base: String? = nil, imageSource: (@Sendable (String) -> String)? = nil
    ) throws(ClientError) -> Result {
        let encoding = XMLEncoding.resolve(data, contentType: contentType)
        let handler = RSSParser(limit: limit, base: base, imageSource: imageSource)
        guard let parser = ExpatParser(encoding: encoding.parserArgument, handler: handler) else {
            throw ClientError(status: 500, code: "internal_error", message: "the XML parser could not be created")
        }
        // A big feed's items are finished on helper threads while expat reads on.
        let overlap = data.count >= overlapFeedBytes ? itemFinishing(imageSource: imageSource) : nil
        defer { overlap?.abandon() }
        handler.overlap = overlap
        let failure = parser.parse(data)
        if let failure {
            throw FeedParseFailure.error(failure, encoding: encoding, bytes: data)
        }
        guard !handler.notAFeed, handler.kind != .unknown else { throw .badUpstreamResponse("the podcast feed") }
        var result = handler.result
        result.episodes = finished(handler.kept.inFeedOrderWithTexts(), already: overlap?.finish() ?? [:], imageSource: imageSource)
        result.reachedLimit = handler.kept.leftOut
        if result.description == nil { result.description = handler.channelSummary }
        // The channel image may come after the first items: fill it in at the end.
        for i in result.episodes.indices where result.episodes[i].imageUrl == nil { result.episodes[i].imageUrl = result.imageUrl }
        return result
    }

    private static func namespace(_ uri: UnsafeBufferPointer<UInt8>) -> Namespace {
        if uri.isEmpty { return .none }
        if uri.elementsEqual(itunes) { return .itunes }
        if uri.elementsEqual(content) { return .content }
        if uri.elementsEqual(atom) { return .atom }
        if uri.elementsEqual(podcast) || uri.elementsEqual(podcastEarly) { return .podcast }
        if uri.elementsEqual(podlove) { return .podlove }
        if uri.elementsEqual(syndication) { return .syndication }
        return .other
    }

    // MARK: XMLStreamHandler

    func startElement(_ name: XMLName, _ attributes: XMLAttributes) -> Bool {
        let inherited = stack.last?.base ?? documentBase
        let base = attributes[Self.xmlBase].flatMap { URLReference.absolute($0, base: inherited) } ?? inherited
        let element = Element(namespace: Self.namespace(name.uri), name: String(decoding: name.local, as: UTF8.self), base: base)
        // Every URL a feed carries: absolute http(s), resolved against this element's base, or nothing.
        func url(_ attribute: StaticString) -> String? { attributes[attribute].flatMap { URLReference.absolute($0, base: base) } }
        if stack.isEmpty {
            switch element.name.lowercased() {
            case "rss", "rdf": kind = .rss
            case "feed": kind = .atom
            default:
                notAFeed = true
                return false
            }
        }
        stack.append(element)
        text.removeAll(keepingCapacity: true)
        let inItem = current != nil
        switch (kind, element.name, element.namespace) {
        case (.rss, "item", _), (.atom, "entry", _):
            // Every item is read: past the limit, the feed's order says nothing of which are the oldest.
            current = Episode()
            itemBase = base
            itemDescription = nil
            itunesSummary = nil
            contentEncoded = nil
        case (.rss, "enclosure", _) where inItem:
            current?.audioUrl = url("url")
            current?.audioType = attributes["type"]
            current?.audioBytes = attributes["length"].flatMap(FeedNumber.positive)
        case (_, "image", .itunes):
            if let href = url("href") {
                if inItem { current?.imageUrl = href } else if result.imageUrl == nil || stack.count <= 3 { result.imageUrl = href }
            }
        case (_, "transcript", .podcast) where inItem:
            if let u = url("url"), (current?.transcripts.count ?? 0) < NamespaceLimits.perList {
                current?.transcripts.append(
                    Transcript(
                        url: u, type: Self.bounded(attributes["type"]), language: Self.bounded(attributes["language"]), rel: Self.bounded(attributes["rel"])))
            }
        case (_, "chapters", .podcast) where inItem:
            if let u = url("url") { current?.chapters = Chapters(url: u, type: Self.bounded(attributes["type"])) }
        case (_, "chapter", .podlove) where inItem:
            if let start = attributes["start"].flatMap(ClockTime.seconds), (current?.inlineChapters.count ?? 0) < ChapterList.maxChapters {
                current?.inlineChapters.append(
                    ChapterMark(start: start, title: ChapterList.plainTitle(attributes["title"]), url: url("href"), imageUrl: url("image")))
            }
        case (_, "person", .podcast):
            pendingPerson = (
                Self.bounded(attributes["role"])?.lowercased() ?? "host", Self.bounded(attributes["group"])?.lowercased() ?? "cast", url("href"), url("img")
            )
        case (_, "soundbite", .podcast) where inItem:
            if let start = attributes["startTime"].flatMap(Self.seconds), let duration = attributes["duration"].flatMap(Self.seconds) {
                pendingSoundbite = (start, duration)
            }
        case (_, "season", .podcast) where inItem:
            if let name = Self.bounded(attributes["name"]) { current?.seasonName = name }
        case (_, "funding", .podcast) where !inItem:
            pendingFunding = url("url")
        case (_, "link", .atom) where !inItem && stack.count <= 3 && ["hub", "self"].contains(attributes["rel"]?.lowercased()):
            if attributes["rel"]?.lowercased() == "hub" {
                if result.hub == nil { result.hub = url("href") }
            } else if result.selfURL == nil {
                result.selfURL = url("href")
            }
        case (.atom, "link", _) where !inItem && stack.count <= 2:
            if (attributes["rel"] ?? "alternate") == "alternate", result.link == nil { result.link = url("href") }
        case (.atom, "link", _) where inItem:
            let rel = attributes["rel"] ?? "alternate"
            if rel == "enclosure" {
                current?.audioUrl = url("href")
                current?.audioType = attributes["type"]
                current?.audioBytes = attributes["length"].flatMap(FeedNumber.positive)
            } else if rel == "alternate" {
                current?.link = url("href")
            }
        default:
            break
        }
        return true
    }

    func characters(_ utf8: UnsafeBufferPointer<UInt8>) {
        text.append(contentsOf: utf8)
    }

    func endElement() -> Bool {
        defer { text.removeAll(keepingCapacity: true) }
        guard let element = stack.popLast() else { return true }
        let parent = stack.last?.name ?? ""
        let name = element.name, ns = element.namespace
        let base = element.base
        func urlText() -> String? { nonEmptyText().flatMap { URLReference.absolute($0, base: base) } }
        if ns == .podcast, podcastElementEnded(name) { return true }
        if current == nil {
            // Channel (or feed) level.
            let channelLevel = parent == "channel" || (kind == .atom && parent == "feed")
            if name == "title" && ns != .itunes && channelLevel && result.title == nil {
                result.title = nonEmptyText()
            } else if channelLevel && channelField(name, ns, base: base) {
                // taken
            } else if kind == .atom && name == "name" && parent == "author" && stack.count == 2 && result.author == nil {
                result.author = nonEmptyText()  // <feed><author><name>
            } else if name == "url" && parent == "image" && result.imageUrl == nil {
                result.imageUrl = urlText()
            } else if kind == .atom && (name == "logo" || name == "icon") && result.imageUrl == nil {
                result.imageUrl = urlText()
            }
            return true
        }
        if (kind == .rss && name == "item") || (kind == .atom && name == "entry") {
            return finishItem()
        }
        itemField(name, ns, base: base)
        return true
    }

    /// The channel's description, author, link and language; true when `name` was one.
    private func channelField(_ name: String, _ ns: Namespace, base: String?) -> Bool {
        switch (name, ns) {
        case ("description", .none), ("subtitle", .atom):
            if result.description == nil { result.description = nonEmptyText().map(HTMLText.plain) }
        case ("summary", .itunes):
            // Feeds often carry both; the RSS description wins, the iTunes summary fills in (see `parse`).
            if channelSummary == nil { channelSummary = nonEmptyText().map(HTMLText.plain) }
        case ("author", .itunes): if result.author == nil { result.author = nonEmptyText() }
        case ("managingEditor", .none): if result.author == nil { result.author = nonEmptyText() }
        case ("link", .none) where kind == .rss:
            if result.link == nil { result.link = nonEmptyText().flatMap { URLReference.absolute($0, base: base) } }
        case ("language", .none): if result.language == nil { result.language = nonEmptyText() }
        case ("guid", .podcast): if result.podcastGuid == nil { result.podcastGuid = Self.bounded(nonEmptyText()) }
        case ("locked", .podcast):
            switch nonEmptyText()?.lowercased() {
            case "yes", "true": result.locked = true
            case "no", "false": result.locked = false
            default: break
            }
        case ("ttl", .none) where kind == .rss:
            // Minutes, up to a week.
            if result.ttlSeconds == nil, let minutes = nonEmptyText().flatMap(FeedNumber.positive), minutes <= 10_080 { result.ttlSeconds = minutes * 60 }
        case ("updatePeriod", .syndication):
            let periods = ["hourly": 3600, "daily": 86_400, "weekly": 604_800, "monthly": 2_592_000, "yearly": 31_536_000]
            if let period = nonEmptyText().flatMap({ periods[$0.lowercased()] }) { result.updatePeriodSeconds = period }
        case ("updateFrequency", .syndication):
            if let times = nonEmptyText().flatMap(FeedNumber.positive), times <= 1000 { result.updateFrequency = times }
        case ("new-feed-url", .itunes):
            if result.newFeedUrl == nil { result.newFeedUrl = nonEmptyText().flatMap { URLReference.absolute($0, base: base) } }
        default: return false
        }
        return true
    }

    private func itemField(_ name: String, _ ns: Namespace, base: String?) {
        switch (name, ns) {
        case ("title", .itunes):
            if current?.title == nil, let value = nonEmptyText() { current?.title = value }
        case ("title", _): if let value = nonEmptyText() { current?.title = value }
        case ("guid", _), ("id", .atom): if let value = nonEmptyText() { current?.id = value }
        case ("pubDate", _), ("published", _), ("date", _):
            if let value = nonEmptyText() { current?.published = RFC822Date.parse(value).map(Timestamp.format) }
        case ("updated", .atom):
            if current?.published == nil, let value = nonEmptyText() { current?.published = Timestamp.iso8601UTC(value) }
        case ("duration", .itunes): if let value = nonEmptyText() { current?.duration = EpisodeDuration.seconds(value) }
        case ("episode", .itunes): if let value = nonEmptyText() { current?.episode = FeedNumber.positive(value) }
        case ("season", .itunes): if let value = nonEmptyText() { current?.season = FeedNumber.positive(value) }
        case ("explicit", .itunes):
            switch nonEmptyText()?.lowercased() {
            case "yes", "true", "explicit": current?.explicit = true
            case "no", "false", "clean": current?.explicit = false
            default: break
            }
        case ("summary", .itunes): if let value = nonEmptyText() { itunesSummary = value }
        case ("episodeType", .itunes):
            if let value = nonEmptyText()?.lowercased(), ["full", "trailer", "bonus"].contains(value) { current?.episodeType = value }
        case ("encoded", .content): if let value = nonEmptyText() { contentEncoded = value }
        case ("description", _), ("summary", .atom), ("content", .atom):
            if itemDescription == nil { itemDescription = nonEmptyText() }
        case ("link", _) where kind == .rss:
            if let value = nonEmptyText().flatMap({ URLReference.absolute($0, base: base) }) { current?.link = value }
        default: break
        }
    }

    /// `podcast:person`, `soundbite` and `funding` take their text at the end; true when `name` was one.
    private func podcastElementEnded(_ name: String) -> Bool {
        switch name {
        case "person":
            guard let p = pendingPerson else { return true }
            pendingPerson = nil
            guard let name = Self.bounded(nonEmptyText()) else { return true }
            let person = Person(name: name, role: p.role, group: p.group, href: p.href, img: p.img)
            if current != nil {
                if (current?.persons.count ?? 0) < NamespaceLimits.perList { current?.persons.append(person) }
            } else if result.persons.count < NamespaceLimits.perList {
                result.persons.append(person)
            }
        case "soundbite":
            guard let s = pendingSoundbite else { return true }
            pendingSoundbite = nil
            if (current?.soundbites.count ?? 0) < NamespaceLimits.perList {
                current?.soundbites.append(Soundbite(start: s.start, duration: s.duration, title: Self.bounded(nonEmptyText())))
            }
        case "funding":
            guard let url = pendingFunding else { return true }
            pendingFunding = nil
            if result.funding.count < NamespaceLimits.perList { result.funding.append(Funding(url: url, text: Self.bounded(nonEmptyText()))) }
        default:
            return false  // the channel's guid and locked, and tags not read here
        }
        return true
    }

    /// Free text from the feed, cut to `NamespaceLimits.textBytes` on a character boundary.
    static func bounded(_ text: String?) -> String? {
        guard let text = text?.trimmingWhitespace(), !text.isEmpty else { return nil }
        guard text.utf8.count > NamespaceLimits.textBytes else { return text }
        var out = ""
        for c in text {
            guard out.utf8.count + c.utf8.count <= NamespaceLimits.textBytes else { break }
            out.append(c)
        }
        return out
    }

    /// A time in seconds as the namespace writes it (`73.0`): finite, 0 up to about four months.
    static func seconds(_ text: String) -> Double? {
        guard let v = Double(text.trimmingWhitespace()), v.isFinite, v >= 0, v <= 10_000_000 else { return nil }
        return v
    }

    /// The element's text, trimmed; nil when nothing is left. ASCII whitespace is trimmed on
    /// bytes; other Unicode whitespace at either end (rare) goes through the String path.
    private func nonEmptyText() -> String? {
        var start = 0, end = text.count
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }
        while start < end, isSpace(text[start]) { start += 1 }
        while end > start, isSpace(text[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        var value = String(decoding: text[start..<end], as: UTF8.self)
        if text[start] >= 0x80 || text[end - 1] >= 0x80 { value = value.trimmingWhitespace() }
        return value.isEmpty ? nil : value
    }

    private func finishItem() -> Bool {
        guard var episode = current else { return true }
        current = nil
        // Past the limit, an item older than every one kept is left out before its notes are sanitized.
        let date = NewestEpisodes.date(episode.published)
        guard kept.admits(date) else {
            kept.leaveOut()
            return true
        }
        if episode.id == nil { episode.id = episode.audioUrl }
        if !episode.inlineChapters.isEmpty {
            episode.inlineChapters = ChapterList.normalised(episode.inlineChapters, duration: episode.duration.map(Double.init))
        }
        // Its texts are made once the feed is read (only for the items kept, and in parallel),
        // or as it is read for a big feed's first `limit` (those a feed listed newest first keeps).
        let texts = ItemTexts(description: itemDescription, itunesSummary: itunesSummary, contentEncoded: contentEncoded, base: itemBase)
        let order = kept.nextOrder
        kept.offer(episode, texts: texts, date: date)
        if let overlap, order < kept.capacity { overlap.submit(order, (episode, texts)) }
        return true
    }

    /// An item's texts as the feed gives them, made into its summary and notes at the end.
    struct ItemTexts: Sendable {
        let description: String?
        let itunesSummary: String?
        let contentEncoded: String?
        let base: String?

        static let none = ItemTexts(description: nil, itunesSummary: nil, contentEncoded: nil, base: nil)

        var bytes: Int { (description?.utf8.count ?? 0) + (itunesSummary?.utf8.count ?? 0) + (contentEncoded?.utf8.count ?? 0) }
    }

    /// Below this much text the items' texts are made on this thread (a part's hop costs more).
    static let parallelTextBytes = 256 << 10

    /// The kept items with their summaries and sanitized notes: the most of a big feed's work
    /// (3,000 episodes with 6 KB of marked-up notes each: 40 % of its parse), spread over the
    /// cores once the feed is read.
    /// `already`: items finished as the feed was read, by their order in it.
    static func finished(
        _ items: [(order: Int, episode: Episode, texts: ItemTexts)], already: [Int: Episode], imageSource: (@Sendable (String) -> String)?
    ) -> [Episode] {
        let left = items.filter { already[$0.order] == nil }
        let finish: @Sendable (Int) -> Episode = { i in finished(left[i].episode, left[i].texts, imageSource: imageSource) }
        let bytes = left.reduce(0) { $0 + $1.texts.bytes }
        let made = bytes < parallelTextBytes ? left.indices.map(finish) : ParallelWork.map(left.count, finish)
        var byOrder = already
        for (item, episode) in zip(left, made) { byOrder[item.order] = episode }
        return items.map { byOrder[$0.order] ?? $0.episode }
    }

    /// One item with its summary and sanitized notes.
    static func finished(_ item: Episode, _ texts: ItemTexts, imageSource: (@Sendable (String) -> String)?) -> Episode {
        var episode = item
        // description and content:encoded carry HTML; itunes:summary is plain text by its spec.
        let plain =
            texts.description.map(HTMLText.plain)
            ?? texts.itunesSummary.map(HTMLText.collapseWhitespace)
            ?? texts.contentEncoded.map(HTMLText.plain)
        episode.summary = plain?.isEmpty == false ? plain : nil
        // Show notes as sanitized HTML: content:encoded, else the description (or Atom content).
        episode.notesHtml = (texts.contentEncoded ?? texts.description).flatMap { HTMLSanitizer.sanitize($0, base: texts.base, imageSource: imageSource) }
        return episode
    }

    /// From this size on, a feed's items are finished as it is read: expat reads on one core
    /// while the others sanitize (3,000 episodes with 6 KB of notes: expat took 70 ms, the
    /// notes 70 to 115 ms more, one after the other).
    static let overlapFeedBytes = 1 << 20

    private static func itemFinishing(imageSource: (@Sendable (String) -> String)?) -> OverlappedWork<(Episode, ItemTexts), Episode> {
        OverlappedWork(helpers: max(1, NativeThread.processorCount - 1), name: "fp-items") { item in
            finished(item.0, item.1, imageSource: imageSource)
        }
    }
}

/// The items a feed's cap keeps, read as a stream: at most `capacity`, the newest by date
/// whatever order the feed lists them in, so a feed listed oldest first (a serial show) loses
/// its oldest items, not its newest. Undated items count as the oldest (nothing says they are
/// recent; `since` leaves them out and `/episodes` lists them last); among equal dates (all
/// undated, say) the earlier in the feed is kept, as the cut by feed order did for a feed
/// listed newest first. A min-heap whose root is the item to leave out next: never more than
/// `capacity` held, whatever the feed's length.
struct NewestEpisodes {
    private struct Kept {
        let date: Int64
        let order: Int
        let episode: Episode
        let texts: RSSParser.ItemTexts

        /// Left out before `other`: older, or as old and later in the feed.
        func goesBefore(_ other: Kept) -> Bool { date != other.date ? date < other.date : order > other.order }
    }

    let capacity: Int
    private var heap: [Kept] = []
    private var offered = 0
    /// Some item was left out.
    private(set) var leftOut = false

    init(capacity: Int) { self.capacity = max(0, capacity) }

    /// An episode's date as the cap ranks it (and `EpisodeFeedData` stores it): Unix seconds,
    /// `EpisodeFeedData.undated` (the lowest) when it has none.
    static func date(_ published: String?) -> Int64 {
        published.flatMap(Timestamp.parseISO8601).map(Int64.init) ?? EpisodeFeedData.undated
    }

    /// Whether the feed's next item, of this date, would be kept.
    func admits(_ date: Int64) -> Bool {
        heap.count < capacity || (capacity > 0 && date > heap[0].date)
    }

    /// The feed's next item is left out without being offered (`admits` said no).
    mutating func leaveOut() {
        offered += 1
        leftOut = true
    }

    /// The feed's next item: kept (leaving out the oldest kept when full), or left out.
    mutating func offer(_ episode: Episode, texts: RSSParser.ItemTexts = .none, date: Int64) {
        guard admits(date) else { return leaveOut() }
        let item = Kept(date: date, order: offered, episode: episode, texts: texts)
        offered += 1
        if heap.count < capacity {
            heap.append(item)
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard heap[i].goesBefore(heap[parent]) else { break }
                heap.swapAt(i, parent)
                i = parent
            }
            return
        }
        leftOut = true
        heap[0] = item
        var i = 0
        while true {
            let left = 2 * i + 1, right = left + 1
            var first = i
            if left < heap.count, heap[left].goesBefore(heap[first]) { first = left }
            if right < heap.count, heap[right].goesBefore(heap[first]) { first = right }
            guard first != i else { break }
            heap.swapAt(i, first)
            i = first
        }
    }

    /// The kept items, in the feed's order.
    func inFeedOrder() -> [Episode] {
        heap.sorted { $0.order < $1.order }.map(\.episode)
    }

    /// The kept items with their order in the feed and the texts they were offered with, in
    /// the feed's order.
    func inFeedOrderWithTexts() -> [(order: Int, episode: Episode, texts: RSSParser.ItemTexts)] {
        heap.sorted { $0.order < $1.order }.map { ($0.order, $0.episode, $0.texts) }
    }

    /// The order the next item offered (or left out) has in the feed.
    var nextOrder: Int { offered }
}
