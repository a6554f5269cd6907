import Feeds
import Images
import Primitives

/// The image proxy's parts (`IMAGE_PROXY_KEY` set): the URL signer feeds and the route share,
/// the decode pool, its metrics and limits.
struct ImageServices: Sendable {
    let links: ImageProxyLinks
    let decodes: SharedDecodes
    let metrics: ImageMetrics
    let limits: ImageLimits

    init?(_ c: Configuration) {
        guard let links = c.imageProxyLinks else { return nil }
        self.links = links
        let threads = c[Setting.imageDecodeThreads] > 0 ? c[Setting.imageDecodeThreads] : max(1, NativeThread.currentThreadCPUCount)
        let pool = DecodePool(threads: threads, maxQueued: threads * 16)
        let metrics = ImageMetrics(pool: pool)
        self.metrics = metrics
        decodes = SharedDecodes(pool: pool) { metrics.recordSourceDecode(answers: $0) }
        limits = ImageLimits(maxPixels: c[Setting.imageMaxPixels], timeout: Double(c[Setting.imageTimeoutMs]) / 1000)
    }

    /// The `/images` adapter, its sources kept by `sources` (every width and encoding of an
    /// image from one download).
    func adapter(_ c: Configuration, sources: FeedRoute) -> ImageAdapter {
        let metrics = self.metrics
        return ImageAdapter(
            links: links, maxSourceBytes: c[Setting.imageMaxBytes], allowPrivateHosts: c.allowPrivateFeedHosts, limits: limits, decodes: decodes,
            observe: { metrics.record($0) }, loadSource: { _, prepared throws(ClientError) in try await sources.keptBody(prepared) })
    }
}

extension Configuration {
    /// The image proxy's URL signer (`IMAGE_PROXY_KEY` set): what the feeds' `images` go through.
    var imageProxyLinks: ImageProxyLinks? { self[Setting.imageProxyKey].flatMap { ImageProxyLinks(key: $0, publicBaseURL: self[Setting.publicBaseURL]) } }
}
