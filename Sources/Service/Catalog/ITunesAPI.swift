/// How the iTunes search and lookup routes and their answers are described in the API document.
enum ITunesAPI {
    // A term: no control characters except whitespace (which is trimmed and collapsed), and at
    // least two characters that are not whitespace (PODCAST_MIN_TERM_CHARS, default 2).
    private static let termCharacter = "[^\\u0000-\\u0008\\u000e-\\u001f\\u007f-\\u0084\\u0086-\\u009f]"
    private static let termWordCharacter = "[^\\s\\u0000-\\u001f\\u007f-\\u009f]"
    private static let termPattern = "^\(termCharacter)*\(termWordCharacter)\(termCharacter)*\(termWordCharacter)\(termCharacter)*$"

    static let search = OpenAPIValue.feedOperation(
        "iTunes podcast search", answers: "PodcastFeed",
        [
            .required(
                "term", "search words: 200 characters at most, and at least PODCAST_MIN_TERM_CHARS (default 2) after trimming; printable",
                ["type": "string", "minLength": 2, "maxLength": 200, "pattern": .string(termPattern)], example: "history"),
            .query("limit", "items, 1-200", ["type": "integer", "minimum": 1, "maximum": 200, "default": 50]),
            .query("country", "ISO 3166-1 alpha-2", ["type": "string", "pattern": "^[A-Za-z]{2}$", "default": "us"]),
            .query("explicit", "include explicit podcasts", ["type": "string", "enum": ["yes", "no"]]),
        ],
        errors: [
            "400": .error(
                "invalid or missing parameter (term absent or blank: missing_parameter; shorter than PODCAST_MIN_TERM_CHARS: invalid_parameter)")
        ])

    static let podcast = OpenAPIValue.feedOperation(
        "One podcast by its id", answers: "PodcastItem",
        [
            .pathID(
                maximum: 999_999_999_999_999_999, "podcast id: an iTunes collection id, or a feed id (/podcasts/byfeedurl, /library/opml)",
                example: 1_200_361_736)
        ],
        errors: [
            "400": .error("invalid id"),
            "404": .error("podcast_not_found: no podcast has this id; feed_id_unknown: a feed id whose URL is no longer known (name the feed again)"),
        ])

    static let schemas: OpenAPIValue = [
        "PodcastImages": .imageSizes([30, 60, 100, 600].map { px in ("\(px)", px, px, px, "\(px)x\(px) artwork") }, description: "iTunes artwork sizes"),
        "Podcast": .closedObject([
            "id": ["type": "integer"], "title": .nullable("string"), "author": .nullable("string"), "feedUrl": .nullable("string"),
            "artworkUrl": .nullable("string"), "images": .orNull(.ref("PodcastImages")), "genres": .stringArray,
            "primaryGenre": .nullable("string"), "episodeCount": .nullable("integer"), "releaseDate": .timestamp, "country": .nullable("string"),
            "explicit": .nullable("boolean"), "storeUrl": .nullable("string"),
        ]),
        "PodcastFeed": .envelope(items: .ref("Podcast"), source: "itunes", page: nil),
        "PodcastItem": .closedObject([
            "source": ["enum": ["itunes", "rss"], "description": "itunes for a podcast iTunes lists, rss for one named by its feed URL (a feed id)"],
            "item": .ref("Podcast"),
        ]),
    ]
}
