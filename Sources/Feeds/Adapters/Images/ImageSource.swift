import FeedFormats
import Images
import Primitives
import Upstream

/// A publisher's image as downloaded, kept (and shared with the other replicas as far as the
/// shared tier takes it) so that every width and encoding asked of it is made from one
/// download; refreshed conditionally when it expires. Its kind is sniffed from its first
/// bytes on arrival: anything that is not an image we decode is refused (415) once, here.
/// Not a route of its own: `/images` loads through it (`url` is its one parameter).
public struct ImageSource: FeedAdapter {
    public let source = SourceName.images
    let maxBytes: Int
    let allowPrivateHosts: Bool

    public init(maxBytes: Int, allowPrivateHosts: Bool) {
        self.maxBytes = maxBytes
        self.allowPrivateHosts = allowPrivateHosts
    }

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        guard let url = p.value("url"), URLReference.absolute(url) != nil else { throw .invalidParameter("url must be an absolute http(s) URL") }
        return Self.prepared(url: url, maxBytes: maxBytes, allowPrivateHosts: allowPrivateHosts)
    }

    /// The key a source image is kept under.
    public static func key(_ url: String) -> String { "image-source|\(url)" }

    /// How `url`'s source is loaded: fetched like a feed (public addresses only unless
    /// allowed, size cap, a breaker of its own, conditional on refresh).
    public static func prepared(url: String, maxBytes: Int, allowPrivateHosts: Bool) -> PreparedFeed {
        var fetch = UpstreamRequest(
            upstream: SourceName.images, url: url, headers: [("Accept", "image/webp, image/avif, image/jpeg, image/png, image/gif;q=0.8, */*;q=0.1")],
            maxBodyBytes: maxBytes, publicAddressesOnly: !allowPrivateHosts)
        fetch.urlChosenByThirdParty = true
        return PreparedFeed(source: SourceName.images, cacheKey: key(url), upstreamRequest: fetch) { body throws(ClientError) in
            guard let kind = SourceImageType(sniffing: body) else { throw ImageAdapter.error(.unsupportedType) }
            return Representation(body, contentType: kind.mediaType)
        }
    }
}

extension SourceImageType {
    /// How a kept source says what it is.
    public var mediaType: String {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .gif: return "image/gif"
        case .webp: return "image/webp"
        case .heif: return "image/heif"
        }
    }
}
