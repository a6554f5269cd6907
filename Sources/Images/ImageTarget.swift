/// The encoding an answer is made in. `classic` is what every client decodes: JPEG, or PNG
/// when the image is transparent (so transparency is kept); which one is known after decoding.
public enum ImageTarget: String, Sendable, CaseIterable {
    case webp, avif, jpeg, png, classic

    /// What `format=` may name (`auto`, or absent: chosen by `Accept`).
    public static let named: [String: ImageTarget] = ["webp": .webp, "avif": .avif, "jpeg": .jpeg, "png": .png]

    /// From `Accept` (RFC 9110 §12.5.1): WebP when the client accepts it, else AVIF when it
    /// accepts that (and not WebP: AVIF costs several times WebP's encoding time), else
    /// `classic`. `image/*` and `*/*` promise nothing beyond JPEG and PNG.
    public static func negotiate(accept: String?, avif: Bool = ImageTranscoder.encodesAVIF) -> ImageTarget {
        guard let accept else { return .classic }
        var webp = false, avifAccepted = false
        for range in accept.split(separator: ",").prefix(32) {
            let parts = range.split(separator: ";")
            guard let type = parts.first?.trimmingASCIIWhitespace().lowercased() else { continue }
            let accepted = !parts.dropFirst().contains { parameter in
                let p = parameter.trimmingASCIIWhitespace().lowercased().filter { $0 != " " }
                return p == "q=0" || p.hasPrefix("q=0.") && p.dropFirst(4).allSatisfy { $0 == "0" }
            }
            if type == "image/webp" { webp = accepted }
            if type == "image/avif" { avifAccepted = accepted }
        }
        return webp ? .webp : avif && avifAccepted ? .avif : .classic
    }
}

/// What an encoded answer is.
public enum ImageEncoding: Int32, Sendable {
    case jpeg = 0, png = 1, webp = 2, avif = 3

    public var mediaType: String {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .webp: return "image/webp"
        case .avif: return "image/avif"
        }
    }
}

extension Substring {
    func trimmingASCIIWhitespace() -> Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}
