/// The kinds of image a feed's artwork may be, recognised by their first bytes before any
/// library looks at them: JPEG, PNG, GIF, WebP and HEIF/AVIF. Everything else (SVG, TIFF,
/// PDF, HTML error pages, other containers) is refused here, whatever its Content-Type says.
public enum SourceImageType: String, Sendable {
    case jpeg, png, gif, webp, heif

    public init?(sniffing bytes: [UInt8]) {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && bytes[offset..<(offset + prefix.count)].elementsEqual(prefix)
        }
        if starts([0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) {
            self = .gif
        } else if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) {
            self = .webp
        } else if starts(Array("ftyp".utf8), at: 4), bytes.count >= 12,
            ["heic", "heix", "hevc", "heim", "heis", "mif1", "msf1", "avif", "avis"].contains(String(decoding: bytes[8..<12], as: UTF8.self))
        {
            self = .heif
        } else {
            return nil
        }
    }
}
