import Feeds
import Foundation

// Decode + normalise + encode of each 20-item fixture, the work a cache miss does
// after the upstream answers. Prints the median of several timed batches.
let directory = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "Fixtures"
func load(_ path: String) -> [UInt8] {
    (try? Array(Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent(path)))) ?? []
}

func measure(_ name: String, _ body: () throws -> [UInt8]) {
    var samples: [Double] = []
    var size = 0
    for _ in 0..<7 {
        let iterations = 200
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations { size = (try? body().count) ?? -1 }
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations) / 1000)
    }
    let median = samples.sorted()[samples.count / 2]
    print("\(name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(String(format: "%7.1f", median)) µs per feed (\(size) bytes out)")
}

let flickr = load("flickr/photos_public.json")
let itunes = load("itunes/search.json")
let kiva = load("kiva/graphql.json")
print("decode + normalise + encode, 20-item feeds (median of 7 × 200):")
measure("flickr (escape repair included)") { try FeedJSON.encode(try FlickrAdapter.normalise(flickr, limit: 20)) }
measure("itunes (8 results)") { try FeedJSON.encode(try ITunesAdapter.normalise(itunes)) }
measure("kiva graphql") { try FeedJSON.encode(try KivaAdapter.normaliseGraphQL(kiva, page: 1, limit: 20)) }
