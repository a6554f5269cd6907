import FeedFormats
import Primitives

/// Runs every upstream-body path over arbitrary bytes, for `make fuzz`: end to end as the
/// routes do (decode → normalise → encode), not only the parsers, because the numbers and
/// dates the normalisers compute with are where a trap hides. Each must answer with a
/// value or a thrown error, never a trap; the date parsers must also keep their range,
/// which `run` reports rather than traps on: the fuzzer decides what a finding is.
public enum FeedFuzzing {
    /// Returns a description of a date parsed outside `Timestamp.range`, or nil.
    public static func run(_ bytes: [UInt8]) -> String? {
        _ = try? JSONParser.parse(bytes)
        _ = try? FeedJSON.encode(try FlickrAdapter.normalise(bytes, limit: 20))
        _ = try? FeedJSON.encode(try ITunesAdapter.normalise(bytes))
        _ = try? FeedJSON.encode(try KivaGraphQL.normalise(bytes, page: 1, limit: 20))
        _ = try? FeedJSON.encode(try KivaREST.normalise(bytes))
        _ = try? EpisodesAdapter.feedURL(fromLookup: bytes)
        _ = try? EpisodesAdapter.render(feed: bytes, contentType: nil, lookupTitle: nil, limit: 50)
        // The same bytes through the unknown-encoding handler, as a Content-Type charset would.
        _ = try? EpisodesAdapter.render(feed: bytes, contentType: "application/rss+xml; charset=windows-1252", lookupTitle: nil, limit: 50)
        guard bytes.count <= 128 else { return nil }
        return datesOutOfRange(String(decoding: bytes, as: UTF8.self))
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
