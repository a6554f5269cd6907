import FeedFormats
import Primitives

/// Runs every upstream-body path over arbitrary bytes, for `make fuzz`: end to end as the
/// routes do (decode → normalise → encode, each adapter's `fuzz`), not only the parsers,
/// because the numbers and dates the normalisers compute with are where a trap hides. Each must answer with a
/// value or a thrown error, never a trap; the date parsers must also keep their range,
/// which `run` reports rather than traps on: the fuzzer decides what a finding is.
public enum FeedFuzzing {
    /// `bodies`: each upstream's answers end to end, as its declaration names them (a finding, or
    /// nil). Returns a description of the first broken promise, or nil.
    public static func run(_ bytes: [UInt8], bodies: [@Sendable ([UInt8]) -> FuzzRun]) -> String? {
        _ = try? JSONParser.parse(bytes)
        for body in bodies {
            if let finding = body(bytes).finding { return finding }
        }
        // Chapters and transcripts: every reader, with and without the episode's length.
        for duration in [nil, 600] {
            let chapters = try? EpisodePart(.chapters, url: "https://cdn.example/c.json", duration: duration).read(bytes)
            if let problem = timesProblem(chapters.flatMap { try? JSONParser.parse($0) }, duration) {
                return "chapters: \(problem)"
            }
            for format in TranscriptFormat.allCases {
                let out = try? EpisodePart(.transcript(format, language: nil), url: "https://cdn.example/t", duration: duration).read(bytes)
                if let problem = timesProblem(out.flatMap { try? JSONParser.parse($0) }?["segments"], duration) {
                    return "transcript \(format.rawValue): \(problem)"
                }
            }
        }
        if let problem = libraryProblem(bytes) { return problem }
        let text = String(decoding: bytes.prefix(8192), as: UTF8.self)
        if let problem = sanitizerProblem(text) { return problem }
        if let problem = urlProblem(String(text.prefix(512))) { return problem }
        guard bytes.count <= 128 else { return nil }
        return datesOutOfRange(String(decoding: bytes, as: UTF8.self))
    }

    /// What the chapter and transcript readers promise: every time finite, from 0 to the
    /// episode's length, sorted by start, and every end after its start.
    static func timesProblem(_ list: JSONValue?, _ duration: Int?) -> String? {
        guard let list else { return nil }
        let limit = duration.map(Double.init) ?? ClockTime.maxSeconds
        var previous = -1.0
        for item in list.elements {
            guard let start = item["start"]?.finiteNumber else { continue }
            if start < 0 || start > limit || start < previous { return "start \(start) after \(previous), limit \(limit)" }
            previous = start
            if let end = item["end"]?.finiteNumber, end < start || end > limit { return "end \(end) for start \(start)" }
        }
        return nil
    }

    /// What the sanitizer promises: its output, parsed again as a browser would, holds only
    /// allowed elements and attributes and safe URLs (no mutation on re-parse makes it unsafe).
    static func sanitizerProblem(_ html: String) -> String? {
        guard let out = HTMLSanitizer.sanitize(html, base: "https://feeds.example/podcast/rss") else { return nil }
        if let problem = HTMLSanitizer.violation(in: out) { return "sanitizer output \(problem): \(html.prefix(200))" }
        return nil
    }

    /// What an OPML import promises: each feed once, under the id of its normalised URL (which
    /// normalises to itself), within the feed-id range; what it writes back reads as the same
    /// feeds.
    static func libraryProblem(_ bytes: [UInt8]) -> String? {
        guard let library = try? LibraryImport(opml: bytes) else { return nil }
        guard Set(library.feeds.map(\.url)).count == library.feeds.count else { return "OPML: a feed listed twice" }
        for feed in library.feeds {
            guard FeedID.normalised(feed.url) == feed.url else { return "OPML: normalised URL not idempotent: \(feed.url)" }
            guard FeedID.isFeedID(feed.id), feed.id == FeedID.id(ofNormalised: feed.url) else { return "OPML: id \(feed.id) for \(feed.url)" }
        }
        let written = OPMLWriter.document(
            title: library.title ?? "", created: "Sat, 05 Dec 2026 00:00:00 GMT", feeds: library.feeds.map { OPMLWriter.Feed(title: $0.title, xmlUrl: $0.url) },
            comment: library.title)
        guard let again = try? LibraryImport(opml: written), again.feeds.map(\.id) == library.feeds.map(\.id) else {
            return "OPML: an exported library does not read back as the same feeds"
        }
        return nil
    }

    /// The sanitizer's fast path against its full one (`make fuzz`, first byte 0xE0–0xEF): on
    /// any input the fast path takes, its output is the full path's, byte for byte. The first
    /// byte's low bits pick the base (none, or a feed's URL) and whether images are proxied.
    public static func sanitizerDifference(_ selector: UInt8, _ bytes: [UInt8]) -> String? {
        let html = String(decoding: bytes, as: UTF8.self)
        let base = selector & 1 == 0 ? "https://feeds.example/podcast/rss" : nil
        let imageSource: (@Sendable (String) -> String)? = selector & 2 == 0 ? nil : { @Sendable in "/images?url=" + $0 }
        guard case .sanitized(let fast) = HTMLFastSanitizer.sanitize(html, base: base, imageSource: imageSource) else { return nil }
        let full = HTMLSanitizer.sanitize(html, base: base, imageSource: imageSource, fastPath: false)
        guard fast == full else {
            return
                "sanitizer fast path differs: \(html.debugDescription.prefix(300)) → \((fast ?? "nil").debugDescription.prefix(300)), full \((full ?? "nil").debugDescription.prefix(300))"
        }
        return nil
    }

    /// What the URL resolver promises: nil, or an absolute http(s) URL that resolves to itself;
    /// and its fast path answers as the long way does.
    static func urlProblem(_ reference: String) -> String? {
        let base = "https://feeds.example/a/b?c=d"
        let resolved = URLReference.absolute(reference, base: base)
        guard resolved == URLReference.resolvedAbsolute(reference, base: base) else {
            return "URL fast path differs: \(reference.debugDescription.prefix(300))"
        }
        guard let url = resolved else { return nil }
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return "resolver gave a non-http(s) URL: \(url)" }
        guard URLReference.resolvedAbsolute(url) == url else { return "resolver not idempotent: \(reference) → \(url)" }
        return nil
    }

    /// The property the date parsers promise: a time inside `Timestamp.range`, or nil.
    static func datesOutOfRange(_ text: String) -> String? {
        _ = EpisodeDuration.seconds(text)
        _ = FeedNumber.positive(text)
        for parsed in [RFC822Date.parse(text), Timestamp.parseISO8601(text)] {
            if let t = parsed, !Timestamp.range.contains(t) { return "date parser left its range: \(text) → \(t)" }
        }
        return nil
    }
}
