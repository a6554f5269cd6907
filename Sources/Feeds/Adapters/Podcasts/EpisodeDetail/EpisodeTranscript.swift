import FeedFormats
import Primitives

/// An episode's transcript as an app shows it: plain-text segments, timed when the file is.
public struct EpisodeTranscript: Codable, Sendable, Equatable {
    /// The file it was read from.
    public var url: String
    /// Its format: `text/vtt`, `application/x-subrip`, `application/json`, `text/html` or `text/plain`.
    public var type: String
    public var language: String?
    /// true: the file held more than `TranscriptText.maxSegments` segments or
    /// `TranscriptText.maxTextBytes` of text, and the rest was cut.
    public var truncated: Bool
    public var segments: [TranscriptSegment]
}

public struct TranscriptSegment: Codable, Sendable, Equatable {
    /// Seconds from the episode's start; null in an untimed transcript.
    public var start: Double?
    public var end: Double?
    public var speaker: String?
    /// Plain text.
    public var text: String
}

/// Collects a transcript's segments within the caps: times finite, not negative and within
/// the episode; empty text dropped; once a cap is reached the rest is cut (`truncated`).
public struct TranscriptText {
    public static let maxSegments = 20_000
    public static let maxTextBytes = 1 << 20
    static let speakerBytes = 256

    let duration: Double?
    private(set) var segments: [TranscriptSegment] = []
    private(set) var truncated = false
    private var textBytes = 0

    init(duration: Double?) { self.duration = duration.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } }

    /// false once full: the reader may stop.
    var wantsMore: Bool { !truncated }

    /// The file was cut before its end.
    mutating func markTruncated() { truncated = true }

    mutating func add(start: Double?, end: Double?, speaker: String?, text: String) {
        guard !truncated else { return }
        let limit = duration ?? ClockTime.maxSeconds
        if let start, !(start.isFinite && start >= 0 && start < limit) { return }
        var end = end.flatMap { $0.isFinite && $0 >= (start ?? 0) ? min($0, limit) : nil }
        if start == nil { end = nil }
        guard segments.count < Self.maxSegments else {
            truncated = true
            return
        }
        guard let body = TextBounds.cut(text, bytes: Self.maxTextBytes - textBytes) else {
            if !text.isEmpty { truncated = true }
            return
        }
        if body.utf8.count < text.utf8.count { truncated = true }
        textBytes += body.utf8.count
        segments.append(TranscriptSegment(start: start, end: end, speaker: speaker.flatMap { TextBounds.cut($0, bytes: Self.speakerBytes) }, text: body))
    }

    /// Timed segments in order of their start (a file's own order where they tie).
    var sortedSegments: [TranscriptSegment] {
        guard segments.contains(where: { $0.start != nil }) else { return segments }
        return segments.enumerated().sorted { ($0.element.start ?? 0, $0.offset) < ($1.element.start ?? 0, $1.offset) }.map(\.element)
    }

    static func withoutBOM(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
    }
}

/// The transcript formats FeedProxy reads, in the order it prefers them (timed first).
public enum TranscriptFormat: String, Sendable, CaseIterable, Comparable {
    case webVTT = "text/vtt"
    case subRip = "application/x-subrip"
    case json = "application/json"
    case html = "text/html"
    case plain = "text/plain"

    public static func < (a: Self, b: Self) -> Bool { allCases.firstIndex(of: a) ?? 0 < allCases.firstIndex(of: b) ?? 0 }

    /// From `podcast:transcript`'s `type`, or from the file name when it has none.
    public init?(type: String?, url: String) {
        let media = type?.split(separator: ";").first.map { $0.trimmingWhitespace().lowercased() }
        switch media {
        case "text/vtt": self = .webVTT
        case "application/x-subrip", "application/srt", "application/x-srt", "text/srt", "text/x-srt": self = .subRip
        case "application/json": self = .json
        case "text/html": self = .html
        case "text/plain": self = .plain
        case nil:
            let path = url.split(separator: "?").first.map { $0.lowercased() } ?? ""
            if path.hasSuffix(".vtt") {
                self = .webVTT
            } else if path.hasSuffix(".srt") {
                self = .subRip
            } else if path.hasSuffix(".json") {
                self = .json
            } else if path.hasSuffix(".html") || path.hasSuffix(".htm") {
                self = .html
            } else if path.hasSuffix(".txt") {
                self = .plain
            } else {
                return nil
            }
        default: return nil
        }
    }

    /// What of a file cut short arrived whole: cue files up to their last blank line (the cue
    /// the cut went through left out), JSON closed after its last whole element, text up to
    /// its last line break.
    func wholePart(of bytes: [UInt8]) -> [UInt8] {
        switch self {
        case .webVTT, .subRip:
            guard let end = Self.lastBlankLine(bytes) else { return bytes }
            return Array(bytes[..<end])
        case .json: return JSONCut.closed(bytes[...]) ?? bytes
        case .html, .plain:
            guard let end = bytes.lastIndex(of: 0x0A) else { return bytes }
            return Array(bytes[..<end])
        }
    }

    /// Where the last blank line (`\n\n`, `\n\r\n`) starts.
    static func lastBlankLine(_ bytes: [UInt8]) -> Int? {
        var i = bytes.count - 1
        while i > 0 {
            if bytes[i] == 0x0A, bytes[i - 1] == 0x0A || (i >= 2 && bytes[i - 1] == 0x0D && bytes[i - 2] == 0x0A) { return i }
            i -= 1
        }
        return nil
    }

    func read(_ bytes: [UInt8], into text: inout TranscriptText) throws(ClientError) {
        switch self {
        case .webVTT: try CueFile.read(bytes, webVTT: true, into: &text)
        case .subRip: try CueFile.read(bytes, webVTT: false, into: &text)
        case .json: try JSONTranscript.read(bytes, into: &text)
        case .html: text.add(start: nil, end: nil, speaker: nil, text: HTMLText.plain(String(decoding: TranscriptText.withoutBOM(bytes), as: UTF8.self)))
        case .plain:
            text.add(start: nil, end: nil, speaker: nil, text: HTMLText.collapseWhitespace(String(decoding: TranscriptText.withoutBOM(bytes), as: UTF8.self)))
        }
    }
}

/// The Podcasting 2.0 JSON transcript: `{"version", "segments": [{"speaker", "startTime", "endTime", "body"}]}`.
enum JSONTranscript {
    static func read(_ bytes: [UInt8], into text: inout TranscriptText) throws(ClientError) {
        guard let document = try? JSONParser.parse(TranscriptText.withoutBOM(bytes)), case .array(let items)? = document["segments"] else {
            throw EpisodePart.unreadable("transcript", "the JSON transcript has no \"segments\" list")
        }
        for item in items {
            guard text.wantsMore else { break }
            guard let body = item["body"]?.text else { continue }
            let start = item["startTime"]?.finiteNumber
            text.add(
                start: start, end: item["endTime"]?.finiteNumber, speaker: item["speaker"]?.text.map(HTMLText.plain),
                text: HTMLText.plain(String(decoding: body.utf8.prefix(64 << 10), as: UTF8.self)))
        }
    }
}
