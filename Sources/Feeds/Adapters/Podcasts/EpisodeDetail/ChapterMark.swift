import FeedFormats
import Primitives

/// One chapter of an episode, in seconds from its start: from a `podcast:chapters` JSON
/// file or inline Podlove Simple Chapters, checked like everything a stranger publishes.
public struct ChapterMark: Codable, Sendable, Equatable {
    public var start: Double
    public var end: Double?
    /// Plain text.
    public var title: String?
    /// Absolute http(s), or null.
    public var url: String?
    public var imageUrl: String?
    /// false: a chapter the publisher keeps out of the table of contents (it still
    /// changes the artwork or link while it plays).
    public var toc: Bool

    public init(start: Double, end: Double? = nil, title: String? = nil, url: String? = nil, imageUrl: String? = nil, toc: Bool = true) {
        self.start = start
        self.end = end
        self.title = title
        self.url = url
        self.imageUrl = imageUrl
        self.toc = toc
    }
}

/// The chapters an app gets: finite times within the episode, sorted, each ending where
/// it says (when that is after its start) or else where the next one starts.
public enum ChapterList {
    /// More chapter marks than any episode has; the rest are dropped.
    public static let maxChapters = 1_000
    static let titleBytes = 1024

    /// `duration`: the episode's length in seconds, when the feed gives it.
    public static func normalised(_ marks: [ChapterMark], duration: Double?) -> [ChapterMark] {
        let limit = duration.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? ClockTime.maxSeconds
        var kept = marks.prefix(maxChapters).filter { $0.start.isFinite && $0.start >= 0 && $0.start < limit }
        // Stable: marks at the same time keep the publisher's order.
        kept = kept.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
        for i in kept.indices {
            let next = kept[(i + 1)...].first { $0.toc && $0.start > kept[i].start }?.start
            let stated = kept[i].end.flatMap { $0.isFinite && $0 > kept[i].start ? min($0, limit) : nil }
            kept[i].end = stated ?? next ?? duration.flatMap { $0.isFinite && $0 > kept[i].start ? $0 : nil }
        }
        return kept
    }

    /// A title as plain text: markup dropped, entities decoded, whitespace collapsed, bounded.
    static func plainTitle(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        // Only the head is read: a megabyte title is not parsed to keep its first kilobyte.
        let plain = HTMLText.plain(String(decoding: text.utf8.prefix(titleBytes * 4), as: UTF8.self))
        return TextBounds.cut(plain, bytes: titleBytes)
    }
}

/// Cutting text on a character boundary.
enum TextBounds {
    /// `text` when it fits in `bytes` of UTF-8, else its longest prefix of whole Unicode
    /// scalars that does; nil for empty text.
    static func cut(_ text: String, bytes: Int) -> String? {
        guard !text.isEmpty else { return nil }
        guard text.utf8.count > bytes else { return text }
        let scalars = text.unicodeScalars
        var count = 0
        var end = scalars.startIndex
        while end < scalars.endIndex, count + scalars[end].utf8.count <= bytes {
            count += scalars[end].utf8.count
            end = scalars.index(after: end)
        }
        return count == 0 ? nil : String(scalars[..<end])
    }
}
