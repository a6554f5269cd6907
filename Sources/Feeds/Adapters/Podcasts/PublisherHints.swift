import FeedFormats
import Primitives

/// What a publisher says about reading its feed again: the WebSub hub that announces its
/// changes and the topic (its own URL) to subscribe to, and how long it may be kept before it
/// is read again. The HTTP answer's `Link` header comes first (as WebSub's discovery says), the
/// feed's `atom:link` after; the interval is the longest of `Cache-Control: max-age`,
/// `Expires`, RSS `ttl` and `sy:updatePeriod` / `sy:updateFrequency`, at most a day.
public struct PublisherHints: Sendable, Equatable {
    public var hub: String?
    public var topic: String?
    /// Seconds; nil when the publisher says nothing.
    public var interval: Int?

    public static let maxInterval = 86_400

    public init(hub: String? = nil, topic: String? = nil, interval: Int? = nil) {
        self.hub = hub
        self.topic = topic
        self.interval = interval.map { min(max($0, 0), Self.maxInterval) }
    }

    /// From an HTTP answer's headers; `now` in Unix seconds (what `Expires` counts from when
    /// the answer has no `Date`).
    public init(headers: [(String, String)], now: Int = Timestamp.now()) {
        func all(_ name: String) -> [String] { headers.filter { $0.0.lowercased() == name }.map(\.1) }
        var hub: String?, topic: String?
        for value in all("link") {
            for link in Self.links(value) {
                if link.rels.contains("hub"), hub == nil { hub = link.url }
                if link.rels.contains("self"), topic == nil { topic = link.url }
            }
        }
        var seconds: Int?
        let directives = all("cache-control").flatMap { $0.split(separator: ",") }.map { $0.trimmingWhitespace().lowercased() }
        if let maxAge = directives.first(where: { $0.hasPrefix("max-age=") }) {
            seconds = FeedNumber.positive(String(maxAge.dropFirst(8)))
        } else if let expires = all("expires").last.flatMap(RFC822Date.parse) {
            let date = all("date").last.flatMap(RFC822Date.parse) ?? now
            if expires > date { seconds = expires - date }
        }
        self.init(hub: hub, topic: topic, interval: seconds)
    }

    /// These hints, with the feed's own filling in what the headers did not say. WebSub's
    /// discovery stops at the first place that names a hub: the headers', else the feed's (a
    /// hub of one is never paired with the other's topic, unless the headers named no topic).
    func completed(by feed: PublisherHints) -> PublisherHints {
        let longest = [interval, feed.interval].compactMap { $0 }.max()
        guard let hub else { return PublisherHints(hub: feed.hub, topic: feed.hub == nil ? nil : feed.topic, interval: longest) }
        return PublisherHints(hub: hub, topic: topic ?? feed.topic, interval: longest)
    }

    /// The header's link-values: split at commas outside `<…>` and quoted strings (a URL may
    /// hold a comma).
    static func linkValues(_ header: String) -> [Substring] {
        var parts: [Substring] = []
        var start = header.startIndex, inTarget = false, inQuotes = false
        for i in header.indices {
            switch header[i] {
            case "<" where !inQuotes: inTarget = true
            case ">" where !inQuotes: inTarget = false
            case "\"" where !inTarget: inQuotes.toggle()
            case "," where !inTarget && !inQuotes:
                parts.append(header[start..<i])
                start = header.index(after: i)
            default: break
            }
        }
        parts.append(header[start...])
        return parts
    }

    /// `<url>; rel="a b", <url>; rel=c`: each absolute http(s) URL with its relation types.
    static func links(_ header: String) -> [(url: String, rels: [String])] {
        var found: [(String, [String])] = []
        for part in header.utf8.count <= 8192 ? linkValues(header) : [] {
            let fields = part.split(separator: ";").map { $0.trimmingWhitespace() }
            guard let target = fields.first, target.hasPrefix("<"), target.hasSuffix(">"), target.count >= 2,
                let url = URLReference.absolute(String(target.dropFirst().dropLast()))
            else { continue }
            var rels: [String] = []
            for field in fields.dropFirst() {
                let pair = field.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
                guard pair.count == 2, pair[0].lowercased() == "rel" else { continue }
                let value = pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2 ? String(pair[1].dropFirst().dropLast()) : pair[1]
                rels += value.lowercased().split(separator: " ").map(String.init)
            }
            found.append((url, rels))
        }
        return found
    }
}
