import Feeds
import HTTPServer

extension UpstreamDeclaration {
    /// Publishers' artwork, resized: `/images`, on when `IMAGE_PROXY_KEY` is set. Every host
    /// is its own breaker, as for feeds.
    static let images = UpstreamDeclaration(
        source: SourceName.images,
        endpoints: .none(because: "each image is at the URL a feed or an answer names, signed under IMAGE_PROXY_KEY"),
        rateLimit: .none(because: "publishers' own image hosts, with their own breakers and fair turns, as feeds"),
        settings: [
            Option(
                "--image-proxy-key", "IMAGE_PROXY_KEY", \.[Setting.imageProxyKey], .optionalSecret,
                "secret shared by the replicas that signs /images URLs (unset: no image proxy, and no proxied URLs in answers)"),
            Option(
                "--image-proxy-key-file", "IMAGE_PROXY_KEY_FILE", \.[Setting.imageProxyKey], .secretFile,
                "file holding IMAGE_PROXY_KEY (a mounted Secret; trailing newline ignored)"),
            Option(
                "--public-base-url", "PUBLIC_BASE_URL", \.[Setting.publicBaseURL], .optionalHTTPURL,
                "the URL clients reach this service at: proxied image URLs are absolute under it (unset: relative, /images?…)"),
            Option("--cache-ttl-images", "CACHE_TTL_IMAGES", \.[Setting.ttlImages], .seconds(), "seconds a resized image stays fresh"),
            Option("--image-max-bytes", "IMAGE_MAX_BYTES", \.[Setting.imageMaxBytes], .bytes(1024...(1 << 30)), "largest source image downloaded"),
            Option(
                "--image-max-pixels", "IMAGE_MAX_PIXELS", \.[Setting.imageMaxPixels], .integer(1...1_000_000_000),
                "largest width × height a source image's header may declare; more is refused (422) before decoding"),
            Option(
                "--image-decode-threads", "IMAGE_DECODE_THREADS", \.[Setting.imageDecodeThreads], .integer(0...64), "images resized at once (0 = one per core)"),
            Option(
                "--image-timeout-ms", "IMAGE_TIMEOUT_MS", \.[Setting.imageTimeoutMs], .integer(1...600_000),
                "longest one image's decode and encode may take (a shared decode: the decode, then each answer)"),
        ],
        routes: [
            RouteDeclaration(.images, operation: "getImage", tag: .images, described: ImagesAPI.image, when: { $0[Setting.imageProxyKey] != nil }) { s in
                guard let images = s.images else {
                    // On only with a key, and a key always makes the image services: not reached.
                    let off = Response.error(status: 404, code: "not_found", message: "the image proxy is off (IMAGE_PROXY_KEY)")
                    return { _ in .response(off) }
                }
                let c = s.configuration
                // The sources are kept as long as the images made from them.
                let sources = s.feedRoute(
                    ImageSource(maxBytes: c[Setting.imageMaxBytes], allowPrivateHosts: c.allowPrivateFeedHosts), ttl: c[Setting.ttlImages])
                return ImageRoute(feeds: s.feedRoute(images.adapter(c, sources: sources), ttl: c[Setting.ttlImages])).handle
            }
        ],
        schemas: [:],
        fuzz: FuzzEntry(reading: ["artwork/logo-1400.png", "artwork/square-600.webp", "artwork/small-100.gif"]) { ImageFuzzing.run($0) })
}

extension OperationTag {
    static let images = OperationTag("Images", "publishers' artwork, resized and cached behind signed URLs")
}

extension RouteName {
    static let images = RouteName("/images", listedAs: "/images?url=&w=&sig=")
}

extension Setting {
    /// Signs `/images` URLs (`IMAGE_PROXY_KEY`, or `IMAGE_PROXY_KEY_FILE`); nil: no image proxy.
    static let imageProxyKey = SettingKey<String?>(default: nil)
    /// Where clients reach this service (`https://api.example.com`): proxied image URLs are
    /// absolute under it; nil: they are relative (`/images?…`).
    static let publicBaseURL = SettingKey<String?>(default: nil)
    static let ttlImages = SettingKey(default: 86400.0)
    static let imageMaxBytes = SettingKey(default: 20 << 20)
    /// Width × height read from a header, before decoding: more is refused.
    static let imageMaxPixels = SettingKey(default: 40_000_000)
    /// Concurrent decodes (0: one per core).
    static let imageDecodeThreads = SettingKey(default: 0)
    static let imageTimeoutMs = SettingKey(default: 5000)
}
