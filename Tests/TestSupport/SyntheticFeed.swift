import Primitives

/// A podcast feed written for a test: RSS 2.0, newest episode first, each with its guid as
/// title, its date, and show notes.
public enum SyntheticFeed {
    public static func rss(_ title: String, _ episodes: [(guid: String, published: Int)], notes: [String: String] = [:]) -> [UInt8] {
        var xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>\#(title)</title>"#
        for e in episodes.sorted(by: { $0.published > $1.published }) {
            xml += "<item><guid>\(e.guid)</guid><title>\(e.guid)</title><pubDate>\(Timestamp.format(e.published))</pubDate>"
            xml += "<description>\(notes[e.guid] ?? "notes of \(e.guid)")</description></item>"
        }
        return Array((xml + "</channel></rss>").utf8)
    }
}
