import Primitives

/// Podcasts made up on demand, for what the recorded fixtures are too few for: a library of
/// 500 podcasts (`1590000001`…`1590000500`, twelve weekly episodes each) and one long daily
/// show (`1590001000`, 1,200 episodes, more than any page). Deterministic, so their feeds
/// have stable validators and answer 304 like the recorded ones.
enum FixtureLibrary {
    static let first = 1_590_000_001, count = 500, longDaily = 1_590_001_000
    /// 2025-11-03T08:00:00Z: the newest episode of the library's podcasts is about then.
    static let base = 1_762_156_800

    static func isSynthetic(_ id: Int) -> Bool { (first..<(first + count)).contains(id) || id == longDaily }

    static func title(_ id: Int) -> String { id == longDaily ? "The Long Daily" : "Library Show \(id - first + 1)" }

    static func feedName(_ id: Int) -> String { "library-\(id).xml" }

    /// The lookup result iTunes would give for `id`.
    static func lookupResult(_ id: Int, feedHost: String) -> FixtureJSON {
        .object([
            "wrapperType": .string("track"), "kind": .string("podcast"), "collectionId": .int(id), "trackId": .int(id),
            "collectionName": .string(title(id)), "artistName": .string("FeedProxy fixtures"),
            "feedUrl": .string("http://127.0.0.1:\(feedHost)/rss/\(feedName(id))"),
            "artworkUrl600": .string("https://images.example.com/library/\(id)/600x600bb.jpg"),
            "primaryGenreName": .string("Technology"), "trackCount": .int(id == longDaily ? 1200 : 12), "country": .string("USA"),
        ])
    }

    /// The synthetic podcast a feed name (`library-<id>.xml`) names.
    static func id(ofFeed name: String) -> Int? {
        guard name.hasPrefix("library-"), name.hasSuffix(".xml"), let id = Int(name.dropFirst(8).dropLast(4)), isSynthetic(id) else { return nil }
        return id
    }

    /// The feed of `name` (`library-<id>.xml`), or nil when it names no synthetic podcast;
    /// `published`: the times of episodes published since (tests publish them), newest first.
    static func feed(_ name: String, published: [Int] = []) -> [UInt8]? {
        guard let id = id(ofFeed: name) else { return nil }
        let episodes = id == longDaily ? 1200 : 12
        // Daily for the long show; weekly otherwise, each podcast an hour apart.
        let step = id == longDaily ? 86_400 : 7 * 86_400
        let newest = base - (id == longDaily ? 0 : (id - first) * 3600)
        var xml = #"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>"#
        xml += "<title>\(title(id))</title><link>https://library.example.com/\(id)</link><language>en-us</language>"
        xml += "<itunes:author>FeedProxy fixtures</itunes:author><itunes:image href=\"https://images.example.com/library/\(id)/cover.jpg\"/>"
        for (n, time) in published.enumerated().reversed() {
            let number = episodes + n + 1
            xml += "<item><guid isPermaLink=\"false\">lib-\(id)-\(number)</guid><title>Episode \(number)</title><pubDate>\(Timestamp.format(time))</pubDate>"
            xml += "<enclosure url=\"https://cdn.example.com/library/\(id)/\(number).mp3\" type=\"audio/mpeg\" length=\"1000000\"/></item>"
        }
        for n in stride(from: episodes, to: 0, by: -1) {
            let published = Timestamp.format(newest - (episodes - n) * step)
            xml += "<item><guid isPermaLink=\"false\">lib-\(id)-\(n)</guid><title>Episode \(n)</title><pubDate>\(published)</pubDate>"
            xml += "<enclosure url=\"https://cdn.example.com/library/\(id)/\(n).mp3\" type=\"audio/mpeg\" length=\"\(1_000_000 + n)\"/>"
            xml += "<itunes:duration>\(1200 + n % 600)</itunes:duration><description>Episode \(n) of \(title(id)).</description></item>"
        }
        xml += "</channel></rss>"
        return Array(xml.utf8)
    }
}
