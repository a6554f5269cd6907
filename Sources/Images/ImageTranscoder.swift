import CVips
import Primitives

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
        let encoding: ImageEncoding
        switch target {
        case .webp: encoding = .webp
        case .avif: encoding = encodesAVIF ? .avif : .webp
        case .jpeg: encoding = .jpeg
        case .png: encoding = .png
        case .classic: encoding = header.has_alpha != 0 ? .png : .jpeg
        }
        let maxHeight = Int32(clamping: width.multipliedReportingOverflow(by: limits.maxAspect).partialValue)
        let deadline = cvips_now_ms() + Int64(Saturating.int(limits.timeout * 1000, in: 1...86_400_000))
        var out: UnsafeMutableRawPointer?
        var length = 0
        var outWidth: Int32 = 0, outHeight: Int32 = 0
        let result = source.withUnsafeBytes { bytes in
            cvips_thumbnail(
                bytes.baseAddress, bytes.count, Int32(clamping: width), maxHeight, encoding.rawValue, limits.quality, deadline, &out, &length, &outWidth,
                &outHeight)
        }
        guard result == 0, let out, length > 0 else {
            if let out { cvips_free(out) }
            throw result == -2 ? .timedOut : .undecodable
        }
        defer { cvips_free(out) }
        var bytes = [UInt8](UnsafeRawBufferPointer(start: out, count: length))
        if encoding == .webp { bytes = WebPMetadata.removed(from: bytes) }
        return TranscodedImage(bytes: bytes, encoding: encoding, width: Int(outWidth), height: Int(outHeight))
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
