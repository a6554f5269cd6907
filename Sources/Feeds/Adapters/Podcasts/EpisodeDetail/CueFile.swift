import FeedFormats
import Primitives

/// WebVTT and SubRip: blocks separated by blank lines, each a timing line
/// (`00:01:02.500 --> 00:01:05.000`, SubRip with `,`) and its text. Cue text is read as
/// plain text: tags dropped (a WebVTT voice `<v Speaker>` gives the speaker, SubRip's
/// `{\an8}` positioning goes too), entities decoded, whitespace collapsed.
enum CueFile {
    /// Longest line read; a longer one (a cue that never ends) is cut there.
    static let maxLineBytes = 64 << 10

    static func read(_ bytes: [UInt8], webVTT: Bool, into text: inout TranscriptText) throws(ClientError) {
        let body = TranscriptText.withoutBOM(bytes)
        var lines = Lines(body)
        if webVTT {
            // "WEBVTT", alone or followed by a space or tab and a title.
            guard let first = lines.next(), first.starts(with: Array("WEBVTT".utf8)),
                first.count == 6 || first[first.startIndex + 6] == 0x20 || first[first.startIndex + 6] == 0x09
            else { throw EpisodePart.unreadable("transcript", "the WebVTT file does not start with WEBVTT") }
        }
        var block: [ArraySlice<UInt8>] = []
        var sawCue = false
        func flush(_ text: inout TranscriptText) {
            defer { block.removeAll(keepingCapacity: true) }
            // The timing line is the block's first or (after a cue identifier) second.
            guard let timing = block.prefix(2).firstIndex(where: { $0.firstRange(of: Array("-->".utf8)) != nil }) else { return }
            guard let (start, end) = times(block[timing]) else { return }
            sawCue = true
            let cue = block[(timing + 1)...].map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
            let (speaker, plain) = cueText(cue)
            text.add(start: start, end: end, speaker: speaker, text: plain)
        }
        while text.wantsMore, let line = lines.next() {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                flush(&text)
            } else if block.count < 64 {
                block.append(line)
            }
        }
        flush(&text)
        if !sawCue, text.segments.isEmpty, !webVTT { throw EpisodePart.unreadable("transcript", "the SubRip file holds no cue") }
    }

    /// `start --> end [settings]`.
    static func times(_ line: ArraySlice<UInt8>) -> (Double, Double)? {
        guard let arrow = line.firstRange(of: Array("-->".utf8)) else { return nil }
        let start = String(decoding: line[..<arrow.lowerBound], as: UTF8.self).trimmingWhitespace()
        let rest = String(decoding: line[arrow.upperBound...], as: UTF8.self).trimmingWhitespace()
        let end = rest.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? ""
        guard let s = ClockTime.seconds(start), let e = ClockTime.seconds(end) else { return nil }
        return (s, e)
    }

    /// A cue's speaker (its first `<v Name>`) and plain text.
    static func cueText(_ cue: String) -> (speaker: String?, text: String) {
        var speaker: String?
        var out = ""
        var rest = cue[...]
        while let open = rest.firstIndex(where: { $0 == "<" || $0 == "{" }) {
            out += rest[..<open]
            let close: Character = rest[open] == "<" ? ">" : "}"
            guard let end = rest[open...].prefix(512).firstIndex(of: close) else {
                out += rest[open...]
                rest = ""
                break
            }
            let tag = rest[rest.index(after: open)..<end]
            if close == ">", speaker == nil, tag.first == "v", let space = tag.firstIndex(where: { $0 == " " || $0 == "\t" }) {
                let name = HTMLText.plain(String(tag[space...]))
                if !name.isEmpty { speaker = name }
            } else if close == "}", tag.first != "\\" {
                out += rest[open...end]  // braces that are not SubRip's `{\…}`: text
            }
            rest = rest[rest.index(after: end)...]
        }
        out += rest
        // Entities decoded as HTML does; no tag is left for the HTML reader to drop.
        var escaped = ""
        for c in out.unicodeScalars {
            if c == "<" { escaped += "&lt;" } else { escaped.unicodeScalars.append(c) }
        }
        return (speaker, HTMLText.plain(escaped))
    }

    /// Lines of a file on any of `\n`, `\r\n`, `\r`, each cut at `maxLineBytes`.
    struct Lines {
        let bytes: ArraySlice<UInt8>
        var at: Int

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            at = bytes.startIndex
        }

        mutating func next() -> ArraySlice<UInt8>? {
            guard at < bytes.endIndex else { return nil }
            var end = at
            while end < bytes.endIndex, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
            let line = bytes[at..<min(end, at + CueFile.maxLineBytes)]
            at = end
            if at < bytes.endIndex {
                let ending = bytes[at]
                at += 1
                if ending == 0x0D, at < bytes.endIndex, bytes[at] == 0x0A { at += 1 }
            }
            return line
        }
    }
}
