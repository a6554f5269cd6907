import CVips
import Primitives

/// One answer asked of a source: its width and encoding.
public struct ImageRequest: Sendable, Hashable {
    public let width: Int
    public let target: ImageTarget

    public init(width: Int, target: ImageTarget) {
        self.width = width
        self.target = target
    }
}

/// An encoded answer: its bytes, encoding and pixel size.
public struct TranscodedImage: Sendable {
    public let bytes: [UInt8]
    public let encoding: ImageEncoding
    public let width: Int
    public let height: Int
}

/// Source image bytes → a smaller image, through libvips: the type checked from the bytes,
/// the pixel count from the header, then a shrink-on-load thumbnail (a 3000×3000 JPEG is
/// decoded at an eighth of its size for a 300-pixel answer), metadata dropped. Synchronous
/// and CPU-bound: run it on `DecodePool`, never on an event loop.
public enum ImageTranscoder {
    /// libvips started (once per process); false when it could not be.
    public static let available: Bool = cvips_start() == 0

    /// Whether AVIF can be written here (libvips' HEIF module with an AV1 encoder; a slim
    /// container may leave it out): where it cannot, AVIF is never chosen, and asked by name it is WebP.
    public static let encodesAVIF: Bool = available && cvips_saves_avif() == 1

    public static func transcode(_ source: [UInt8], width: Int, target: ImageTarget, limits: ImageLimits) throws(ImageFailure) -> TranscodedImage {
        try transcode(source, [ImageRequest(width: width, target: target)], limits: limits)[0].get()
    }

    /// Every answer of `requests` from one decode of `source` (the largest width decoded, the
    /// others resized from it): by index, each its image or why there is none. A source that
    /// does not decode fails them all alike.
    public static func transcode(_ source: [UInt8], _ requests: [ImageRequest], limits: ImageLimits) throws(ImageFailure) -> [Result<
        TranscodedImage, ImageFailure
    >] {
        guard !requests.isEmpty else { return [] }
        guard available, SourceImageType(sniffing: source) != nil else { throw .unsupportedType }
        var header = cvips_header()
        switch source.withUnsafeBytes({ cvips_probe($0.baseAddress, $0.count, &header) }) {
        case 0: break
        case -3: throw .unsupportedType  // a kind this libvips has no loader for (HEIF in the slim container)
        default: throw .undecodable
        }
        let w = Int(header.width), h = Int(header.height)
        guard w > 0, h > 0 else { throw .undecodable }
        // Multiplied only once both are known small enough not to overflow.
        guard w <= limits.maxPixels, h <= limits.maxPixels, w.multipliedReportingOverflow(by: h).partialValue <= limits.maxPixels,
            !w.multipliedReportingOverflow(by: h).overflow
        else { throw .tooManyPixels(width: w, height: h) }
        let encodings = requests.map { encoding(for: $0.target, hasAlpha: header.has_alpha != 0) }
        let widths = requests.map { Int32(clamping: $0.width) }
        let maxHeights = requests.map { Int32(clamping: $0.width.multipliedReportingOverflow(by: limits.maxAspect).partialValue) }
        let formats = encodings.map(\.rawValue)
        let timeoutMs = Int64(Saturating.int(limits.timeout * 1000, in: 1...86_400_000))
        let deadline = cvips_now_ms() + timeoutMs
        let count = requests.count
        // One answer: streamed from the decoder into the encoder (nothing kept in memory between).
        if count == 1 { return [single(source, width: widths[0], maxHeight: maxHeights[0], encoding: encodings[0], limits: limits, deadline: deadline)] }
        var outs = [UnsafeMutableRawPointer?](repeating: nil, count: count)
        var lengths = [Int](repeating: 0, count: count)
        var outWidths = [Int32](repeating: 0, count: count), outHeights = [Int32](repeating: 0, count: count)
        var results = [Int32](repeating: -1, count: count)
        let decoded = source.withUnsafeBytes { bytes in
            cvips_thumbnails(
                bytes.baseAddress, bytes.count, Int32(count), widths, maxHeights, formats, limits.quality, deadline, timeoutMs, &outs, &lengths, &outWidths,
                &outHeights, &results)
        }
        defer { for out in outs { if let out { cvips_free(out) } } }
        if decoded != 0 { throw decoded == -2 ? .timedOut : .undecodable }
        return (0..<count).map { i -> Result<TranscodedImage, ImageFailure> in
            guard results[i] == 0, let out = outs[i], lengths[i] > 0 else { return .failure(results[i] == -2 ? .timedOut : .undecodable) }
            var bytes = [UInt8](UnsafeRawBufferPointer(start: out, count: lengths[i]))
            if encodings[i] == .webp { bytes = WebPMetadata.removed(from: bytes) }
            return .success(TranscodedImage(bytes: bytes, encoding: encodings[i], width: Int(outWidths[i]), height: Int(outHeights[i])))
        }
    }

    private static func single(
        _ source: [UInt8], width: Int32, maxHeight: Int32, encoding: ImageEncoding, limits: ImageLimits, deadline: Int64
    ) -> Result<TranscodedImage, ImageFailure> {
        var out: UnsafeMutableRawPointer?
        var length = 0
        var outWidth: Int32 = 0, outHeight: Int32 = 0
        let result = source.withUnsafeBytes { bytes in
            cvips_thumbnail(bytes.baseAddress, bytes.count, width, maxHeight, encoding.rawValue, limits.quality, deadline, &out, &length, &outWidth, &outHeight)
        }
        guard result == 0, let out, length > 0 else {
            if let out { cvips_free(out) }
            return .failure(result == -2 ? .timedOut : .undecodable)
        }
        defer { cvips_free(out) }
        var bytes = [UInt8](UnsafeRawBufferPointer(start: out, count: length))
        if encoding == .webp { bytes = WebPMetadata.removed(from: bytes) }
        return .success(TranscodedImage(bytes: bytes, encoding: encoding, width: Int(outWidth), height: Int(outHeight)))
    }

    private static func encoding(for target: ImageTarget, hasAlpha: Bool) -> ImageEncoding {
        switch target {
        case .webp: return .webp
        case .avif: return encodesAVIF ? .avif : .webp
        case .jpeg: return .jpeg
        case .png: return .png
        case .classic: return hasAlpha ? .png : .jpeg
        }
    }
}

extension ImageTranscoder {
    /// An encoded image's pixels, 8-bit RGBA row by row: how tests look at what was answered.
    package static func rgbaPixels(_ encoded: [UInt8]) -> (width: Int, height: Int, rgba: [UInt8])? {
        guard available else { return nil }
        var out: UnsafeMutableRawPointer?
        var width: Int32 = 0, height: Int32 = 0
        guard encoded.withUnsafeBytes({ cvips_rgba($0.baseAddress, $0.count, &out, &width, &height) }) == 0, let out else { return nil }
        defer { cvips_free(out) }
        let count = Int(width) * Int(height) * 4
        return (Int(width), Int(height), [UInt8](UnsafeRawBufferPointer(start: out, count: count)))
    }
}
