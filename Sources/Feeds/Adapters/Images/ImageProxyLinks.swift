import Primitives

/// The `/images` URLs the API hands out: a publisher's image at one of a short ladder of
/// widths, signed with `IMAGE_PROXY_KEY` so that only URLs FeedProxy wrote are fetched.
/// `sig` is the unpadded base64url HMAC-SHA256 of the `url` value (as decoded from the query).
public struct ImageProxyLinks: Sendable {
    /// The widths an answer may have: few, so that caches stay bounded (30 and 100 are
    /// iTunes' artwork sizes, which podcasts' `images` keep).
    public static let widths = [30, 60, 100, 120, 300, 600, 1200]
    /// The widths listed in an `images` map (list cells and detail views at 1× and 2×).
    public static let listedWidths = [60, 120, 300, 600]
    /// Images in show notes: a phone's width at 2×.
    public static let notesWidth = 600

    let hmac: HMACSHA256
    /// Prefixed to `/images` (empty: links are relative to the service).
    let base: String

    /// nil when `key` is empty (the route is off and no proxied URL is handed out).
    public init?(key: String, publicBaseURL: String? = nil) {
        guard !key.isEmpty else { return nil }
        hmac = HMACSHA256(key: Array(key.utf8))
        var base = publicBaseURL ?? ""
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
    }

    public func signature(for url: String) -> String { Base64URL.encode(hmac.mac(url.utf8)) }

    /// Whether `signature` is `url`'s, compared in constant time.
    public func verify(url: String, signature: String) -> Bool {
        guard signature.utf8.count == 43, let given = Base64URL.decode(signature) else { return false }
        return HMACSHA256.equal(given, hmac.mac(url.utf8))
    }

    /// The proxied address of `url` at `width`.
    public func link(_ url: String, width: Int) -> String {
        base + "/images?url=" + url.formEncoded() + "&w=" + String(width) + "&sig=" + signature(for: url)
    }

    /// The `images` map for an absolute http(s) image URL; nil for none.
    public func images(for url: String?) -> ProxiedImages? {
        guard let url, Self.isProxiable(url) else { return nil }
        let signature = signature(for: url)
        let head = base + "/images?url=" + url.formEncoded() + "&w="
        func size(_ w: Int) -> ImageSize { ImageSize(url: head + String(w) + "&sig=" + signature, width: w, height: nil, maxEdge: w) }
        return ProxiedImages(px60: size(60), px120: size(120), px300: size(300), px600: size(600))
    }

    /// A podcast's artwork at iTunes' four sizes, through the proxy (artwork is square).
    public func podcastImages(for url: String?) -> PodcastImages? {
        guard let url, Self.isProxiable(url) else { return nil }
        let signature = signature(for: url)
        let head = base + "/images?url=" + url.formEncoded() + "&w="
        func size(_ w: Int) -> ImageSize { ImageSize(url: head + String(w) + "&sig=" + signature, square: w) }
        return PodcastImages(px30: size(30), px60: size(60), px100: size(100), px600: size(600))
    }

    /// Show notes' images go through the proxy too.
    public func notesImage(_ url: String) -> String { Self.isProxiable(url) ? link(url, width: Self.notesWidth) : url }

    static func isProxiable(_ url: String) -> Bool {
        let lower = url.prefix(8).lowercased()
        return (lower.hasPrefix("http://") || lower.hasPrefix("https://")) && url.utf8.count <= maxURLBytes
    }

    /// Longer source URLs are not proxied (nor accepted by the route).
    public static let maxURLBytes = 2048
}
