import FeedFormats
import Images
import Primitives
import Upstream

/// The image path over arbitrary bytes, for `make fuzz`: what computes on input, with its
/// promise checked. The query (as `/images` parses it) is never accepted without `url`'s own
/// signature; `Accept` always picks an encoding; show notes with proxied images stay inside
/// the sanitizer's allow-list; the WebP metadata pass keeps a file's shape; and libvips answers
/// any bytes with an image or an error, within small limits.
public enum ImageFuzzing {
    static let links = ImageProxyLinks(key: "fuzz-key")
    static let decodes = SharedDecodes(pool: DecodePool(threads: 1, maxQueued: 0))

    public static func run(_ bytes: [UInt8]) -> FuzzRun {
        var run = FuzzRun(finding: problem(bytes))
        // Read as the route reads a source: one variant when libvips makes one of it.
        run.read((try? ImageTranscoder.transcode(bytes, width: 60, target: .webp, limits: ImageLimits(maxPixels: 4_000_000, timeout: 2))).map { _ in 1 })
        return run
    }

    static func problem(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
        if let problem = queryProblem(text) { return problem }
        _ = ImageTarget.negotiate(accept: text)
        if let links, let out = HTMLSanitizer.sanitize(text, base: "https://feeds.example/podcast/rss", imageSource: links.notesImage),
            let problem = HTMLSanitizer.violation(in: out)
        {
            return "sanitizer output with proxied images \(problem): \(text.prefix(200))"
        }
        let stripped = WebPMetadata.removed(from: bytes)
        if stripped.count > bytes.count || (stripped.starts(with: Array("RIFF".utf8)) != bytes.starts(with: Array("RIFF".utf8))) {
            return "the WebP metadata pass grew or reshaped a file"
        }
        return nil
    }

    /// `/images`' parameters from `text` as a query string (and with a valid signature added for
    /// its `url`, so the checks after the signature run too): accepted only when signed.
    static func queryProblem(_ text: String) -> String? {
        guard let links else { return nil }
        let items: [(name: String, value: String)] = text.split(separator: "&").prefix(16).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        let adapter = ImageAdapter(
            links: links, maxSourceBytes: 1 << 20, allowPrivateHosts: false, limits: ImageLimits(maxPixels: 1, timeout: 1), decodes: decodes,
            loadSource: { _, _ throws(ClientError) in throw ClientError.invalidParameter("not loaded while fuzzing") })
        for signed in [false, true] {
            var query = items
            if signed, let url = items.first(where: { $0.name == "url" })?.value {
                query.insert(("sig", links.signature(for: url.trimmingWhitespace())), at: 0)
            }
            guard let prepared = try? adapter.prepare(QueryParameters(query)) else { continue }
            let url = prepared.upstreamRequest.url
            guard let sig = QueryParameters(query).value("sig"), links.verify(url: url, signature: sig) else {
                return "an unsigned image URL was accepted: \(text.prefix(200))"
            }
            guard url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://") else { return "a non-http(s) image URL was accepted: \(url)" }
        }
        return nil
    }
}
