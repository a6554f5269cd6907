import FeedFormats
import Primitives

/// FeedProxy's id for a podcast named by its feed URL rather than by iTunes: a number derived
/// from the normalised URL, so the same feed has the same id on every replica, after every
/// restart, in every import. Feed ids are 16 digits, from 10^15 to below 9·10^15: far above
/// iTunes' collection ids (10 digits) and within JavaScript's safe integers, so one `id`
/// names either kind everywhere an id is taken.
public enum FeedID {
    public static let range = 1_000_000_000_000_000...8_999_999_999_999_999

    public static func isFeedID(_ id: Int) -> Bool { range.contains(id) }

    /// A feed id whose URL is remembered nowhere (unused for FEED_ID_TTL, or a shared tier
    /// that was emptied): the app names the feed again, by URL, and gets the same id.
    public static let unknown = ClientError(
        status: 404, code: "feed_id_unknown",
        message: "this feed id's URL is not known here any more: name the feed again (GET /podcasts/byfeedurl?url= or POST /library/opml)")

    /// The id of the feed at `url` (normalised first), or nil when it is no feed URL.
    public static func id(ofFeedURL url: String) -> Int? {
        normalised(url).map(id(ofNormalised:))
    }

    /// The id of an already normalised feed URL.
    public static func id(ofNormalised url: String) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound + 1)
        return range.lowerBound + Int(XXH64.hash(Array(("feedproxy-feed-id|" + url).utf8)) % span)
    }

    /// A feed URL as FeedProxy names it: an absolute http(s) URL (the subscribe schemes apps
    /// write, `feed:`, `itpc:`, `pcast:`, `podcast:`, read as the web address they stand for),
    /// scheme and host in lower case, no default port, no fragment, `/` for an empty path.
    /// nil for anything else (a relative reference, another scheme, credentials, no host).
    public static func normalised(_ url: String) -> String? {
        var text = url.trimmingWhitespace()
        let lower = text.lowercased()
        for scheme in ["feed:", "itpc:", "pcast:", "podcast:"] where lower.hasPrefix(scheme) {
            let rest = text.dropFirst(scheme.count)
            // `feed:https://…` names the address after it; `feed://host/…` an http one.
            text = rest.hasPrefix("//") ? "http:" + rest : String(rest)
            break
        }
        guard text.utf8.count <= 2048, let absolute = URLReference.absolute(text), let colon = absolute.firstIndex(of: ":") else { return nil }
        let scheme = absolute[..<colon].lowercased()
        var rest = absolute[absolute.index(after: colon)...]
        guard rest.hasPrefix("//") else { return nil }
        rest = rest.dropFirst(2)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var host = rest[..<end].lowercased()
        if scheme == "http", host.hasSuffix(":80") { host.removeLast(3) }
        if scheme == "https", host.hasSuffix(":443") { host.removeLast(4) }
        guard !host.isEmpty, !host.hasPrefix(":"), !host.contains("@") else { return nil }
        let path = rest[end...]
        return scheme + "://" + host + (path.hasPrefix("/") ? "" : "/") + path
    }
}
