/// libvips 8.14's WebP saver writes an `EXIF` chunk even when told to strip metadata: this
/// takes `EXIF` and `XMP ` chunks out of an extended WebP (RIFF) and clears their flags in
/// `VP8X`. Anything not shaped as expected is returned unchanged (it is our own encoder's output).
package enum WebPMetadata {
    package static func removed(from bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= 20, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) else { return bytes }
        var out = Array(bytes[0..<12])
        var at = 12
        while at + 8 <= bytes.count {
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            let padded = size + (size & 1)
            guard padded <= bytes.count - at - 8 else { return bytes }
            let name = bytes[at..<(at + 4)]
            if !name.elementsEqual("EXIF".utf8) && !name.elementsEqual("XMP ".utf8) {
                let start = out.count
                out += bytes[at..<(at + 8 + padded)]
                if name.elementsEqual("VP8X".utf8), size >= 1 { out[start + 8] &= ~UInt8(0x08 | 0x04) }  // EXIF and XMP flags
            }
            at += 8 + padded
        }
        guard at == bytes.count else { return bytes }
        let riff = UInt32(out.count - 8)
        for i in 0..<4 { out[4 + i] = UInt8(truncatingIfNeeded: riff >> (8 * UInt32(i))) }
        return out
    }
}
