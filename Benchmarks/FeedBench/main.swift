import Feeds
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

// Every declared upstream's recorded answers (those its declaration names), each through its
// adapter as `make fuzz` runs it (every shape the adapter reads), from the catalog.
print("decode + normalise + encode, each upstream's recorded answers through its adapter (median of 7 batches):")
for (source, files) in UpstreamCatalog.recordedAnswers {
    for file in files {
        let body = load(file)
        let median = measure { UpstreamCatalog.runAdapter(body, source: source) }
        print("\((source + ": " + file).padding(toLength: 44, withPad: " ", startingAt: 0)) \(String(format: "%9.1f", median)) µs (\(body.count) bytes in)")
    }
}

if CommandLine.arguments.contains("--json-only") { exit(0) }

// Memory while parsing a large podcast feed: the parser streams (SAX), so the
// growth should be a small multiple of the body, not a DOM of it.
func maxRSSKiB() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_maxrss
}
/// A made-up podcast feed of at least `bytes`, each item's show notes `notes`: its bytes and item count.
func syntheticFeed(bytes: Int, notes: String) -> (bytes: [UInt8], items: Int) {
    var xml = "<?xml version=\"1.0\"?><rss version=\"2.0\" xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"><channel><title>Big</title>"
    var items = 0
    while xml.utf8.count < bytes {
        xml +=
            "<item><title>Episode \(items)</title><guid>ep-\(items)</guid><pubDate>Mon, 03 Nov 2025 14:20:05 +0000</pubDate>"
            + "<enclosure url=\"https://cdn.example.com/\(items).mp3\" length=\"1234567\" type=\"audio/mpeg\"/><itunes:duration>01:02:03</itunes:duration>"
            + "<description><![CDATA[<p>\(notes)</p>]]></description></item>"
        items += 1
    }
    return (Array((xml + "</channel></rss>").utf8), items)
}
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

// One feed, one fetch: the whole of a 29 MB feed is read (parsed, normalised, each episode
// encoded once into the data pages are cut from), next to expat's own xmlwf only checking
// the same file is well-formed. Then a page cut from that data, as a page miss does it.
let (longBytes, episodes) = syntheticFeed(
    bytes: 29_000_000, notes: String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. ", count: 70))
let path = FileManager.default.temporaryDirectory.appendingPathComponent("feedbench-long-\(getpid()).xml")
try Data(longBytes).write(to: path)
defer { try? FileManager.default.removeItem(at: path) }
var builds: [Double] = []
var blob: [UInt8] = []
for _ in 0..<3 {
    let t = DispatchTime.now().uptimeNanoseconds
    blob = try EpisodeFeedData.build(feed: longBytes, contentType: nil, lookupTitle: nil, base: nil, maxBytes: 64 << 20)
    builds.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
}
let kept = EpisodeFeedData(blob)?.entries.count ?? 0
var xmlwfRuns: [Double] = []
for _ in 0..<3 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/xmlwf")
    p.arguments = [path.path]
    p.standardOutput = FileHandle.nullDevice
    let t = DispatchTime.now().uptimeNanoseconds
    guard (try? p.run()) != nil else { break }
    p.waitUntilExit()
    xmlwfRuns.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
}
let build = builds.sorted()[1]
let xmlwf = xmlwfRuns.isEmpty ? nil : xmlwfRuns.sorted()[xmlwfRuns.count / 2]
print(
    String(
        format: "whole podcast feed of %.1f MB, %d items: episode data built (%d kept, %.1f MB) in %.0f ms; xmlwf on the same file %@",
        Double(longBytes.count) / 1e6, episodes, kept, Double(blob.count) / 1e6, build,
        xmlwf.map { String(format: "%.0f ms (%.1fx)", $0, build / $0) } ?? "not installed"))
if let data = EpisodeFeedData(blob), let page = data.page(podcastID: 1, limit: 100, since: nil, cursor: EpisodeCursor(index: 2000, anchor: 0)) {
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
