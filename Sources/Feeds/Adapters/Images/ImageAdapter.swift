import FeedFormats
import Images
import Primitives
import Upstream

/// `/images?url=&w=&sig=`: a publisher's image, resized and re-encoded on the decode pool
/// from its source as `source` keeps it (`ImageSource`: one download for every width and
/// encoding; concurrent resizes of it share one decode, `SharedDecodes`). `format` (or, without it, the negotiated `accept` target the route passes)
/// picks the encoding; it is part of the cache key.
public struct ImageAdapter: FeedAdapter {
    public let source = SourceName.images
    let links: ImageProxyLinks
    let maxSourceBytes: Int
    let allowPrivateHosts: Bool
    let limits: ImageLimits
    /// The decoders, which share one decode among concurrent resizes of a source.
    let decodes: SharedDecodes
    /// Told of every decode (for metrics): its outcome and seconds.
    let observe: @Sendable (ImageDecodeEvent) -> Void
    /// The source image's bytes, as kept (`ImageSource`), or why there are none.
    let loadSource: SourceLoader

    /// Loads the source of `url` (its prepared load given) through whatever keeps it.
    public typealias SourceLoader = @Sendable (_ url: String, _ prepared: PreparedFeed) async throws(ClientError) -> [UInt8]

    public init(
        links: ImageProxyLinks, maxSourceBytes: Int, allowPrivateHosts: Bool, limits: ImageLimits, decodes: SharedDecodes,
        observe: @escaping @Sendable (ImageDecodeEvent) -> Void = { _ in }, loadSource: @escaping SourceLoader
    ) {
        self.links = links
        self.maxSourceBytes = maxSourceBytes
        self.allowPrivateHosts = allowPrivateHosts
        self.limits = limits
        self.decodes = decodes
        self.observe = observe
        self.loadSource = loadSource
    }

    /// The parameter the route passes the `Accept`-negotiated target in.
    public static let negotiatedParameter = "accept-target"

    public func prepare(_ p: QueryParameters) throws(ClientError) -> PreparedFeed {
        // Present but blank is left to the signature check: only an absent url is a 400 here.
        guard let url = p.value("url") else { throw .invalidParameter("url is required") }
        guard let text = p.value("w"), let width = Int(text), ImageProxyLinks.widths.contains(width) else {
            throw .invalidParameter("w must be one of: " + ImageProxyLinks.widths.map(String.init).joined(separator: ", "))
        }
        guard let signature = p.value("sig"), links.verify(url: url, signature: signature) else { throw Self.badSignature }
        let target: ImageTarget
        switch try p.choice("format", ["auto"] + ImageTarget.named.keys.sorted()) {
        case nil, "auto"?: target = p.value(Self.negotiatedParameter).flatMap(ImageTarget.init(rawValue:)) ?? .classic
        case let name?: target = ImageTarget.named[name] ?? .classic
        }
        // Signed, so written by FeedProxy from a feed: still checked like any feed's URL.
        guard ImageProxyLinks.isProxiable(url), URLReference.absolute(url) != nil else { throw .invalidParameter("url must be an absolute http(s) URL") }
        let sourceLoad = ImageSource.prepared(url: url, maxBytes: maxSourceBytes, allowPrivateHosts: allowPrivateHosts)
        let key = "image|\(target.rawValue)|w=\(width)|\(url)"
        let decodes = self.decodes, limits = self.limits, observe = self.observe, load = self.loadSource
        return PreparedFeed(source: source, cacheKey: key, upstreamRequest: sourceLoad.upstreamRequest) { (_: UpstreamClient, _: PreviousAnswer?) in
            // Every width and encoding from the one source kept (downloaded once, refreshed conditionally).
            let source: [UInt8]
            do {
                source = try await load(url, sourceLoad)
            } catch let error as ClientError {
                // Refused as it arrived (not an image we decode): a refusal like the decoder's.
                if error.code == Self.error(.unsupportedType).code { observe(.refused(Self.reason(.unsupportedType))) }
                throw error
            }
            let started = NativeThread.monotonicSeconds()
            // Other widths and encodings of this source asked meanwhile are made from the same decode.
            let result = await TraceScope.span("resize image", [("http.response.body.size", .int(Int64(source.count)))]) { _ in
                await decodes.transcode(key: url, source: source, ImageRequest(width: width, target: target), limits: limits)
            }
            let seconds = NativeThread.monotonicSeconds() - started
            switch result {
            case .success(let image):
                observe(.decoded(bytesIn: source.count, bytesOut: image.bytes.count, seconds: seconds))
                return .rendered(Representation(image.bytes, contentType: image.encoding.mediaType))
            case .failure(let failure):
                observe(.refused(Self.reason(failure)))
                throw Self.error(failure)
            }
        }
    }

    static let badSignature = ClientError(status: 403, code: "bad_signature", message: "sig is not this url's signature; use the URLs the API hands out")

    static func reason(_ failure: ImageFailure) -> String {
        switch failure {
        case .unsupportedType: return "unsupported_type"
        case .tooManyPixels: return "too_many_pixels"
        case .undecodable: return "undecodable"
        case .timedOut: return "timed_out"
        case .busy: return "busy"
        }
    }

    /// 415: not an image kind we decode; 422: an image we will not or cannot decode; 503: all decoders busy.
    static func error(_ failure: ImageFailure) -> ClientError {
        switch failure {
        case .unsupportedType:
            return ClientError(status: 415, code: "unsupported_image_type", message: "the image is not JPEG, PNG, WebP, GIF, HEIF or AVIF")
        case .tooManyPixels(let w, let h):
            return ClientError(status: 422, code: "image_too_large", message: "the image is \(w)×\(h) pixels, more than this service decodes")
        case .undecodable:
            return ClientError(status: 422, code: "image_undecodable", message: "the image is damaged or truncated")
        case .timedOut:
            return ClientError(status: 422, code: "image_timed_out", message: "the image took too long to resize")
        case .busy:
            return ClientError(status: 503, code: "image_decoders_busy", message: "every image decoder is busy; retry shortly", retryAfter: 1)
        }
    }
}

/// What one decode did, for metrics.
public enum ImageDecodeEvent: Sendable {
    case decoded(bytesIn: Int, bytesOut: Int, seconds: Double)
    case refused(String)
}
