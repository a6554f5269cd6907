/// Turns HTML from feed descriptions into the text a browser would show: tags dropped
/// (`script` and `style` with their content), block-level tags separating words,
/// character references decoded as HTML5 does, whitespace collapsed. Works on UTF-8 bytes.
package enum HTMLText {
    package static func plain(_ html: String) -> String {
        var html = html
        return html.withUTF8 { bytes in
            var scanner = HTMLScanner(bytes: bytes)
            return scanner.run()
        }
    }

    /// Runs of whitespace become one space; leading and trailing whitespace go.
    /// ASCII whitespace and U+00A0 count (Character.isWhitespace is slow).
    package static func collapseWhitespace(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes in
            var out = CollapsingWriter(capacity: bytes.count)
            var i = 0
            while i < bytes.count {
                let b = bytes[i]
                if CollapsingWriter.isSpace(b) {
                    out.space()
                } else if b == 0xC2, i + 1 < bytes.count, bytes[i + 1] == 0xA0 {
                    out.space()
                    i += 1
                } else {
                    out.byte(b)
                }
                i += 1
            }
            return out.string
        }
    }
}

/// Output that turns every run of whitespace into one space, and drops it at both ends.
package struct CollapsingWriter {
    private var out: [UInt8] = []
    private var pendingSpace = false

    package init(capacity: Int) { out.reserveCapacity(capacity) }

    package static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }

    package var string: String { String(decoding: out, as: UTF8.self) }

    package mutating func space() { pendingSpace = !out.isEmpty }

    package mutating func byte(_ b: UInt8) {
        if pendingSpace {
            out.append(0x20)
            pendingSpace = false
        }
        out.append(b)
    }

    /// Bytes without whitespace, appended whole.
    package mutating func bytes(_ run: UnsafeBufferPointer<UInt8>) {
        if pendingSpace {
            out.append(0x20)
            pendingSpace = false
        }
        out.append(contentsOf: run)
    }

    package mutating func scalar(_ s: Unicode.Scalar) {
        if s.value == 0xA0 || (s.isASCII && Self.isSpace(UInt8(s.value))) { return space() }
        for b in s.utf8 { byte(b) }
    }

    package mutating func text(_ s: String) {
        for scalar in s.unicodeScalars { self.scalar(scalar) }
    }
}
