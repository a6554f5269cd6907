import FeedFormats
import Feeds
import Images
import Primitives
import Foundation
import Service

// Decode + normalise + encode of each upstream's recorded answers, the work a cache miss does
// after the upstream answers. Prints the median of several timed batches.
let directory = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "Fixtures"
func load(_ path: String) -> [UInt8] {
    (try? Array(Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent(path)))) ?? []
}

/// The median µs of `body` over 7 batches of up to 200 (fewer for what takes over 0.1 ms,
/// so a batch stays near 20 ms: an image's decode is milliseconds).
func measure(_ body: () -> Void) -> Double {
    var samples: [Double] = []
    let first = DispatchTime.now().uptimeNanoseconds
    body()
    let once = max(1, DispatchTime.now().uptimeNanoseconds - first)
    let iterations = Int(max(1, min(200, 20_000_000 / once)))
    for _ in 0..<7 {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations { body() }
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations) / 1000)
    }
    return samples.sorted()[samples.count / 2]
}

let feedsOnly = CommandLine.arguments.contains("--feeds-only")  // the big feeds alone (to profile them)
// Every declared upstream's recorded answers (those its declaration names), each through its
// adapter as `make fuzz` runs it (every shape the adapter reads), from the catalog.
if !feedsOnly {
    print("decode + normalise + encode, each upstream's recorded answers through its adapter (median of 7 batches):")
    for (source, files) in UpstreamCatalog.recordedAnswers {
        for file in files {
            let body = load(file)
            let median = measure { UpstreamCatalog.runAdapter(body, source: source) }
            print("\((source + ": " + file).padding(toLength: 44, withPad: " ", startingAt: 0)) \(String(format: "%9.1f", median)) µs (\(body.count) bytes in)")
        }
    }
}

if CommandLine.arguments.contains("--json-only") { exit(0) }

// One cover asked at several widths and encodings at once (an app's list, detail and share
// sizes; browsers asking WebP beside others asking JPEG): one shared decode, the largest width
// decoded and the others resized from it, against one decode each.
if !feedsOnly {
    let limits = ImageLimits(maxPixels: 40_000_000, timeout: 30)
    let asked = [(100, ImageTarget.webp), (300, .webp), (600, .webp), (300, .jpeg), (600, .jpeg)].map { ImageRequest(width: $0.0, target: $0.1) }
    print("one source, \(asked.count) answers (100, 300, 600 px WebP; 300, 600 px JPEG), median of 7 batches:")
    for file in ["artwork/logo-1400.png", "artwork/cover-3000.jpg"] {
        let source = load(file)
        let each = measure { for request in asked { _ = try? ImageTranscoder.transcode(source, width: request.width, target: request.target, limits: limits) } }
        let shared = measure { _ = try? ImageTranscoder.transcode(source, asked, limits: limits) }
        print(
            "  \(file): one decode each \(String(format: "%.1f", each / 1000)) ms, one shared decode \(String(format: "%.1f", shared / 1000)) ms (\(String(format: "%.2f", shared / each))×)"
        )
    }
}

// Memory while parsing a large podcast feed: the parser streams (SAX), so the
// growth should be a small multiple of the body, not a DOM of it.
func maxRSSKiB() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_maxrss
}
/// A made-up podcast feed of at least `bytes`, each item's show notes `<p>notes</p>`: its bytes and item count.
func syntheticFeed(bytes: Int, notes: String) -> (bytes: [UInt8], items: Int) {
    syntheticFeed(bytes: bytes, items: Int.max) { _ in "<p>\(notes)</p>" }
}
/// A made-up podcast feed of at least `bytes` or `items` items (the first reached), item n's show notes `notes(n)`.
func syntheticFeed(bytes: Int, items limit: Int, notes: (Int) -> String) -> (bytes: [UInt8], items: Int) {
    var xml = "<?xml version=\"1.0\"?><rss version=\"2.0\" xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"><channel><title>Big</title>"
    var items = 0
    while xml.utf8.count < bytes, items < limit {
        xml +=
            "<item><title>Episode \(items)</title><guid>ep-\(items)</guid><pubDate>Mon, 03 Nov 2025 14:20:05 +0000</pubDate>"
            + "<enclosure url=\"https://cdn.example.com/\(items).mp3\" length=\"1234567\" type=\"audio/mpeg\"/><itunes:duration>01:02:03</itunes:duration>"
            + "<description><![CDATA[\(notes(items))]]></description></item>"
        items += 1
    }
    return (Array((xml + "</channel></rss>").utf8), items)
}
/// glibc's: gives the heap's free pages back, so the RSS a peak is measured from is what is in use.
@_silgen_name("malloc_trim") func malloc_trim(_ pad: Int) -> Int32
/// Resets the peak RSS (VmHWM) to the current RSS, and returns that.
func resetPeakRSS() -> Int {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    return statusKiB("VmRSS:")
}
/// The peak RSS since the last reset.
func peakRSSKiB() -> Int { statusKiB("VmHWM:") }
func statusKiB(_ field: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    return status.split(separator: "\n").first { $0.hasPrefix(field) }.flatMap {
        Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    } ?? 0
}
if !feedsOnly {
    // Memory while parsing a large podcast feed: the parser streams (SAX), so the
    // growth should be a small multiple of the body, not a DOM of it.
    let (feedBytes, items) = syntheticFeed(bytes: 5_000_000, notes: String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", count: 12))
    let before = maxRSSKiB()
    let start = DispatchTime.now().uptimeNanoseconds
    let parsed = try EpisodesAdapter.parseFeed(feedBytes, limit: 500)
    let full = try EpisodesAdapter.parseFeed(feedBytes, limit: Int.max)
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    let after = maxRSSKiB()
    print(
        String(
            format: "podcast feed of %.1f MB, %d items: parsed (limit 500: %d, all: %d) in %.0f ms; peak RSS grew %.1f MiB",
            Double(feedBytes.count) / 1e6, items, parsed.episodes.count, full.episodes.count, elapsed, Double(after - before) / 1024))
}

// One feed, one fetch: the whole of a big feed is read (parsed, show notes sanitized, each
// episode encoded once into the data pages are cut from), next to expat's own xmlwf only
// checking the same file is well-formed. Two feeds: 29 MB of 4,929 episodes with 5.7 KB of
// plain paragraphs each, and 18.9 MB of 3,000 episodes with ~6 KB of notes marked up as
// publishers do (paragraphs, links, emphasis, lists). Each is built with a budget its JSON
// fits (64 MiB: one plain block) and with the default one (16 MiB: compressed blocks).
/// ~6 KB of show notes as long-running shows write them, different per episode.
func markedUpNotes(_ n: Int) -> String {
    var notes = ""
    var k = n
    while notes.utf8.count < 5_300 {
        k += 1
        notes += "<p>In episode \(n) we talk with <strong>Guest \(k)</strong> about the history of radio, <em>listener questions</em> "
        notes += "and what changed this week. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor &amp; more.</p>"
        if k % 3 == 0 {
            notes += "<ul><li><a href=\"https://example.com/links/\(n)/\(k)\">Link one</a></li><li><a href=\"https://shop.example.org/p?id=\(k)&amp;ref=pod\">"
            notes += "Our sponsor</a></li></ul>"
        } else {
            notes += "<p>Support the show at <a href=\"https://patreon.example/show\" title=\"Patreon\">patreon</a><br>Music by Someone.</p>"
        }
    }
    notes += "<p>"
    while notes.utf8.count < 6_020 { notes += "Lorem ipsum " }
    return notes + "</p>"
}
let defaultBudget = (64 << 20) / 4 - (64 << 10)  // CACHE_MAX_BYTES' default, 64 MiB, over 4, less 64 KiB
var longData: EpisodeFeedData?
let lorem = "<p>" + String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. ", count: 70) + "</p>"
let bigFeeds: [(name: String, bytes: Int, items: Int, notes: (Int) -> String)] = [
    ("29 MB feed, plain paragraphs", 29_000_000, Int.max, { _ in lorem }),
    ("18.9 MB feed, marked-up notes", Int.max, 3_000, markedUpNotes),
]
// --feed N: only the Nth of them (to profile one).
let only = CommandLine.arguments.firstIndex(of: "--feed").flatMap { Int(CommandLine.arguments[$0 + 1]) }
for (n, (name, bytes, items, notes)) in bigFeeds.enumerated() where only == nil || only == n {
    let feed = syntheticFeed(bytes: bytes, items: items, notes: notes)
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("feedbench-long-\(getpid()).xml")
    try Data(feed.bytes).write(to: path)
    defer { try? FileManager.default.removeItem(at: path) }
    var xmlwfRuns: [Double] = []
    for _ in 0..<5 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/xmlwf")
        p.arguments = [path.path]
        p.standardOutput = FileHandle.nullDevice
        let t = DispatchTime.now().uptimeNanoseconds
        guard (try? p.run()) != nil else { break }
        p.waitUntilExit()
        xmlwfRuns.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
    }
    let xmlwf = xmlwfRuns.isEmpty ? nil : xmlwfRuns.sorted()[xmlwfRuns.count / 2]
    let fast = (0..<feed.items).filter { HTMLFastSanitizer.sanitize(notes($0), base: nil, imageSource: nil) != .declined }.count
    print(
        String(
            format: "%@: %.1f MB, %d items, show notes of %d bytes on average, %d of them on the sanitizer's fast path; xmlwf on the same file %@",
            name, Double(feed.bytes.count) / 1e6, feed.items, (0..<min(feed.items, 100)).reduce(0) { $0 + notes($1).utf8.count } / min(feed.items, 100), fast,
            xmlwf.map { String(format: "%.0f ms", $0) } ?? "not installed"))
    for (label, budget) in [("64 MiB budget, plain", 64 << 20), ("default 16 MiB budget", defaultBudget)] {
        var builds: [Double] = []
        var blob: [UInt8] = []
        _ = malloc_trim(0)  // what earlier runs freed leaves the RSS the peak is measured from
        let before = resetPeakRSS()
        for _ in 0..<5 {
            blob = []
            let t = DispatchTime.now().uptimeNanoseconds
            blob = try EpisodeFeedData.build(feed: feed.bytes, contentType: nil, lookupTitle: nil, base: nil, maxBytes: budget)
            builds.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
        }
        let grew = Double(peakRSSKiB() - before) / 1024
        let data = EpisodeFeedData(blob)
        if budget == 64 << 20, longData == nil { longData = data }
        let build = builds.sorted()[builds.count / 2]
        print(
            String(
                format: "  %@: episode data built (%d kept%@, %.1f MB) in %.0f ms (%@); peak RSS grew %.1f MiB",
                label, data?.entries.count ?? 0, data?.truncated == true ? ", truncated" : "", Double(blob.count) / 1e6, build,
                xmlwf.map { String(format: "%.1f× xmlwf", build / $0) } ?? "-", grew))
    }
}
// The fixtures' feeds' show notes (real shapes: links, lists, entities, hostile markup): how many
// the sanitizer's fast path takes (the rest are parsed by libgumbo).
do {
    let rss = URL(fileURLWithPath: directory).appendingPathComponent("rss")
    let pattern = try NSRegularExpression(
        pattern: "<(description|content:encoded|summary|content)(\\s[^>]*)?>(.*?)</\\1>", options: [.dotMatchesLineSeparators])
    var notes: [String] = []
    for file in ((try? FileManager.default.contentsOfDirectory(atPath: rss.path)) ?? []).sorted() where file.hasSuffix(".xml") {
        let text = String(decoding: load("rss/" + file), as: UTF8.self)
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let range = Range(match.range(at: 3), in: text) else { continue }
            var html = String(text[range])
            if html.hasPrefix("<![CDATA["), html.hasSuffix("]]>") {
                html = String(html.dropFirst(9).dropLast(3))
            } else {
                for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&amp;", "&")] {
                    html = html.replacingOccurrences(of: entity, with: character)
                }
            }
            notes.append(html)
        }
    }
    let fast = notes.filter { HTMLFastSanitizer.sanitize($0, base: "https://feeds.example/rss", imageSource: nil) != .declined }.count
    print("Fixtures/rss show notes on the sanitizer's fast path: \(fast) of \(notes.count)")
}
if feedsOnly { exit(0) }
if let data = longData, let page = data.page(podcastID: 1, limit: 100, since: nil, cursor: EpisodeCursor(index: 2000, anchor: 0)) {
    func median(_ work: () -> Void) -> Double {
        var samples: [Double] = []
        for _ in 0..<20 {
            let t = DispatchTime.now().uptimeNanoseconds
            work()
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e3)
        }
        return samples.sorted()[10]
    }
    let cursor = EpisodeCursor(index: 2000, anchor: 0)
    let cut = median { _ = data.page(podcastID: 1, limit: 100, since: nil, cursor: cursor) }
    let tag = median { _ = ETag.strong(for: page.body) }
    print(
        String(
            format: "a page of 100 cut from that data, %.2f MB (index decode, copy and its strong ETag): %.0f µs, of which the ETag %.0f µs",
            Double(page.body.count) / 1e6, cut, tag))
}
