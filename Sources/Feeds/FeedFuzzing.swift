/// Runs every upstream-body parser over arbitrary bytes, for `make fuzz`.
/// Each must answer with a value or a thrown error, never a trap.
public enum FeedFuzzing {
    public static func run(_ bytes: [UInt8]) {
        _ = try? JSONParser.parse(bytes)
        _ = try? FlickrAdapter.normalise(bytes, limit: 20)
        _ = try? ITunesAdapter.normalise(bytes)
        _ = try? KivaGraphQL.normalise(bytes, page: 1, limit: 20)
        _ = try? KivaREST.normalise(bytes)
        _ = try? EpisodesAdapter.feedURL(fromLookup: bytes)
        _ = try? RSSParser.parse(bytes, limit: 50)
        // The same bytes through the unknown-encoding handler, as a Content-Type charset would.
        _ = try? RSSParser.parse(bytes, limit: 50, contentType: "application/rss+xml; charset=windows-1252")
    }
}
