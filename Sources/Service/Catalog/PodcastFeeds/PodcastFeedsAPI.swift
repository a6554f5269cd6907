/// How the episode routes and their answers are described in the API document.
enum PodcastFeedsAPI {
    /// `since`: Unix seconds, or an RFC 3339 date-time in years 0001-9999 (days to 28 here:
    /// every value this pattern admits is a real date; the server takes every real one).
    private static let sincePattern =
        "^([0-9]{1,11}|(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])"
        + "T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?(Z|[+-](0[0-9]|1[0-7]):[0-5][0-9]))$"
    private static let space = OpenAPIValue.trimmedSpace
    private static let cursorPattern = "^[A-Za-z0-9_-]{23}$"
    /// Empty: no position at all (the recovery from a token that cannot be used).
    static let syncPattern = "^([A-Za-z0-9_-]{8,32768})?$"
    static let sync = OpenAPIValue.query(
        "sync",
        "the syncToken of an earlier answer: only the episodes new or changed since it, in the order FeedProxy saw them "
            + "(follow page.next, then keep the last answer's syncToken); not with since or cursor",
        ["type": "string", "pattern": .string(syncPattern)])
    private static let syncToken = described(
        OpenAPIValue.nullable("string").merging(["pattern": .string(syncPattern)]),
        "where the client stands once it has this answer: sent back as sync, the next answer holds only what is new or changed since; "
            + "null on a page reached by a cursor (keep the first page's)")
    private static let resync: OpenAPIValue = [
        "type": "boolean",
        "description": "with sync: the token named a point this feed's history no longer holds (or not this podcast), so its whole list is being sent",
    ]
    private static let removed: OpenAPIValue = [
        "type": "array", "items": ["type": "string"], "maxItems": 256,
        "description":
            "with sync: ids of episodes the feed no longer lists, removed since the token (drop them before taking the items); empty without sync or on a resync",
    ]
    private static let changed: OpenAPIValue = [
        "type": "array", "items": ["type": "string"],
        "description": "with sync: ids of this answer's items the client had before (changed since, not new); empty without sync or on a resync",
    ]
    private static let truncatedList: OpenAPIValue = [
        "type": "boolean",
        "description": "the feed lists more episodes than are kept (5,000, within the per-feed budget): the oldest were left out",
    ]
    private static let syncExpired = OpenAPIValue.error("a sync token of a format this version no longer reads (sync_token_expired): refresh without sync")
    private static let podcastID = OpenAPIValue.pathID(
        maximum: 999_999_999_999_999_999, "podcast id: an iTunes collection id, or a feed id (/podcasts/byfeedurl, /library/opml)", example: 1_200_361_736)
    static let limit = OpenAPIValue.query("limit", "items per page, 1-500", ["type": "integer", "minimum": 1, "maximum": 500, "default": 100])
    private static let since = OpenAPIValue.query(
        "since", "only episodes published after this time: ISO 8601 / RFC 3339 (2025-11-03T14:20:05Z, or a date alone) or Unix seconds",
        ["type": "string", "pattern": .string(sincePattern)])

    private static func nextLink(_ pattern: String) -> OpenAPIValue {
        ["Link": ["schema": ["type": "string", "pattern": .string(pattern)], "description": "RFC 8288: the next page (page.next), absent on the last page"]]
    }

    static let episodes = OpenAPIValue.feedOperation(
        "Episodes from a podcast's RSS feed", answers: "EpisodeFeed",
        [
            podcastID, limit, since,
            .query(
                "cursor", "where the next page starts, as page.nextCursor gave it (with the same limit and since)",
                ["type": "string", "pattern": .string(cursorPattern)]),
            sync,
        ],
        errors: [
            "400": .error(
                "invalid parameter: id, limit, since, a cursor this podcast's list did not give out, a sync token this service did not give out, "
                    + "or sync with since or cursor (invalid_parameter)"),
            "404": .error("unknown podcast (podcast_not_found), no feed (feed_unavailable), or a feed id whose URL is no longer known (feed_id_unknown)"),
            "410": syncExpired,
        ],
        headers: nextLink("^</podcasts/[0-9]+/episodes\\?[^<>]+>; rel=\"next\"$"),
        description: "Episodes in the feed's order, cut from one download and parse of the feed per refresh whatever the page size, "
            + "since, cursor or sync: page.total counts the episodes that match, page.next (and Link: rel=\"next\") walks the rest. "
            + "syncToken, sent back as sync, asks for what is new or changed since; that answer's ETag, sent back with it as "
            + "If-None-Match, is a 304 until something is.")

    static let episode = OpenAPIValue.feedOperation(
        "One episode, with its chapters and transcript on request", answers: "EpisodeDetail",
        [
            .pathID(
                maximum: 999_999_999_999_999_999, "podcast id: an iTunes collection id, or a feed id (/podcasts/byfeedurl, /library/opml)",
                example: 1_580_000_009),
            [
                "name": "episodeId", "in": "path", "required": true, "example": "ct-json",
                "description": "the episode's id as /podcasts/{id}/episodes gives it, percent-encoded (at most 2048 bytes)",
                "schema": ["type": "string", "minLength": 1, "maxLength": 512],
            ],
            .query(
                "include", "chapters, transcript or both, comma-separated",
                ["type": "string", "pattern": "^(chapters|transcript)(,(chapters|transcript))?$"]),
        ],
        errors: [
            "400": .error("invalid id, episodeId or include (invalid_parameter)"),
            "404": .error("unknown podcast (podcast_not_found), no feed (feed_unavailable) or no episode with this id in the feed (episode_not_found)"),
        ],
        description: "The episode as the list gives it, cut from the same per-feed data (no download of its own). With include, its chapters "
            + "(the podcast:chapters JSON file, else Podlove Simple Chapters in the feed) and its transcript (the best the feed offers: "
            + "WebVTT, then SubRip, JSON, HTML, plain text), each file fetched once and cached (CACHE_TTL_CHAPTERS, CACHE_TTL_TRANSCRIPTS). "
            + "The two are read at the same time, each within half the upstream budget: a file that does not answer by then is null with an "
            + "entry in problems and costs the other nothing. A file larger than EPISODE_FILE_MAX_BYTES is read up to it (a transcript says "
            + "truncated). A missing or unreadable file is null with an entry in problems, never a failed episode.")

    static let library = OpenAPIValue.feedOperation(
        "A podcast library's episodes in one request", answers: "EpisodeBatch",
        [
            .required(
                "podcasts", "comma-separated podcast ids (iTunes collection ids, feed ids), 1-500 (repeats ignored)",
                ["type": "string", "pattern": .string("^\(space)*[1-9][0-9]{0,17}\(space)*(,\(space)*[1-9][0-9]{0,17}\(space)*){0,499}$")],
                example: "1200361736,1437212345"),
            limit, since,
            .query(
                "cursor", "where the next page starts, as page.nextCursor gave it (with the same podcasts, limit and since)",
                ["type": "string", "pattern": .string(cursorPattern)]),
            sync,
        ],
        errors: [
            "400": .error(
                "podcasts missing (missing_parameter), an entry that is not an id, more than 200 ids, a bad limit or since, "
                    + "a cursor this list did not give out, a sync token this service did not give out, or sync with since or cursor "
                    + "(invalid_parameter)"),
            "410": syncExpired,
        ],
        headers: OpenAPIValue.retryAfter.merging(nextLink("^</episodes\\?[^<>]+>; rel=\"next\"$")),
        description: "Episodes of every podcast asked, newest first across them (undated last), each with its podcastId, cut from the same "
            + "per-feed data as /podcasts/{id}/episodes. One entry per podcast in podcasts: ok, error (the code the single route "
            + "gives) or pending (not loaded by EPISODES_BATCH_DEADLINE_S; its fetch goes on, and Retry-After says when to ask again). "
            + "A broken feed never fails the batch. Revalidate with If-None-Match: an unchanged library is a 304. "
            + "To keep a library current, send the last answer's syncToken as sync: the answer holds exactly the episodes new or changed "
            + "since, whatever order the feeds were refreshed in (docs/API.md, refreshing a library).")

    private static func described(_ schema: OpenAPIValue, _ description: String) -> OpenAPIValue {
        schema.merging(["description": .string(description)])
    }

    private static func listOf(_ schema: String, _ description: String) -> OpenAPIValue {
        ["type": "array", "items": .ref(schema), "description": .string(description)]
    }

    private static let seconds: OpenAPIValue = ["type": "number", "minimum": 0]

    /// An episode's fields; a batch's episode has its podcast's id first.
    private static let episodeProperties: OpenAPIValue = [
        "id": .nullable("string"), "title": .nullable("string"), "published": .timestamp, "audioUrl": .nullable("string"),
        "audioType": .nullable("string"), "audioBytes": .nullable("integer"), "duration": .nullable("integer"), "episode": .nullable("integer"),
        "season": .nullable("integer"), "explicit": .nullable("boolean"), "imageUrl": .nullable("string"), "images": .orNull(.ref("ProxiedImages")),
        "summary": .nullable("string"),
        "notesHtml": described(
            .nullable("string"),
            "the show notes as sanitized HTML (content:encoded, else the description): "
                + "only the elements and attributes docs/API.md lists, every href/src absolute http(s) (mailto: for links); "
                + "with the image proxy on, img src is a signed /images URL at 600 px"),
        "link": .nullable("string"),
        "episodeType": ["type": ["string", "null"], "enum": ["full", "trailer", "bonus", nil], "description": "itunes:episodeType"],
        "seasonName": described(.nullable("string"), "podcast:season's name"),
        "transcripts": listOf("Transcript", "podcast:transcript, at most 50"),
        "chapters": described(.orNull(.ref("Chapters")), "podcast:chapters"),
        "persons": listOf("Person", "podcast:person, at most 50"),
        "soundbites": listOf("Soundbite", "podcast:soundbite, at most 50"),
    ]

    static let schemas: OpenAPIValue = [
        "CursorPage": .closedObject(
            [
                "size": ["type": "integer", "minimum": 1, "description": "the page size asked (limit)"],
                "total": ["type": "integer", "minimum": 0, "description": "items of the whole list that match (since)"],
                "next": described(
                    OpenAPIValue.nullable("string").merging([
                        "pattern":
                            "^/podcasts/[0-9]+/episodes\\?limit=[0-9]+((&since=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?&cursor=[A-Za-z0-9_-]{23}|&sync=[A-Za-z0-9_-]+)$"
                    ]), "path and query of the next page (as in Link: rel=\"next\"); null on the last page"),
                "nextCursor": described(OpenAPIValue.nullable("string").merging(["pattern": .string(cursorPattern)]), "the opaque cursor in next"),
            ], description: "a page of a list walked with a cursor: nothing repeated or skipped while the list does not change"),
        "ProxiedImages": .imageSizes(
            [60, 120, 300, 600].map { px in ("\(px)", px, nil, px, "\(px) px wide, through /images") },
            description: "the image through FeedProxy's image proxy (/images), signed; null when IMAGE_PROXY_KEY is unset"),
        "Episode": .closedObject(episodeProperties),
        "BatchEpisode": .closedObject(OpenAPIValue.object([(key: "podcastId", value: ["type": "integer", "minimum": 1])]).merging(episodeProperties)),
        "Transcript": .closedObject([
            "url": .httpURL, "type": .nullable("string"), "language": .nullable("string"), "rel": .nullable("string"),
        ]),
        "Chapters": .closedObject(["url": .httpURL, "type": .nullable("string")]),
        "Person": .closedObject(
            [
                "name": ["type": "string"], "role": ["type": "string"], "group": ["type": "string"], "href": .orNull(.httpURL), "img": .orNull(.httpURL),
            ], description: "podcast:person (role defaults to host, group to cast)"),
        "Soundbite": .closedObject(["start": seconds, "duration": seconds, "title": .nullable("string")]),
        "Funding": .closedObject(["url": .httpURL, "text": .nullable("string")]),
        "EpisodeFeed": .envelope(
            items: .ref("Episode"), source: "rss", page: "CursorPage",
            channel: [
                ("description", "the channel's description (else itunes:summary, Atom subtitle) as plain text"),
                ("author", "itunes:author, else managingEditor"), ("imageUrl", "the channel's image"), ("link", "the channel's web page"),
                ("language", "the channel's language, as the feed writes it"), ("podcastGuid", "podcast:guid"),
            ],
            extra: [
                "images": described(.orNull(.ref("ProxiedImages")), "imageUrl through the image proxy"),
                "locked": ["type": ["boolean", "null"], "description": "podcast:locked"],
                "funding": listOf("Funding", "podcast:funding, at most 50"),
                "persons": listOf("Person", "the channel's podcast:person, at most 50"),
                "newFeedUrl": described(.orNull(.httpURL), "itunes:new-feed-url"),
                "movedTo": described(
                    .orNull(.ref("MovedFeed")), "the feed moved for good (itunes:new-feed-url, or a permanent redirect): update the library once"),
                "syncToken": syncToken, "resync": resync, "removed": removed, "changed": changed, "truncated": truncatedList,
            ]),
        "EpisodeBatch": .closedObject([
            "source": ["const": "rss"], "count": .nonNegative, "items": ["type": "array", "items": .ref("BatchEpisode")],
            "podcasts": ["type": "array", "items": .ref("BatchPodcast")], "page": .ref("BatchPage"), "syncToken": syncToken,
        ]),
        "BatchPodcast": .closedObject([
            "id": ["type": "integer", "minimum": 1], "status": ["enum": ["ok", "error", "pending"]], "title": .nullable("string"),
            "updated": .timestamp, "episodeCount": OpenAPIValue.nullable("integer").merging(["minimum": 0]),
            "error": [
                "oneOf": [
                    ["type": "null"], .closedObject(["code": ["type": "string"], "message": ["type": "string"]]),
                ]
            ],
            "resync": resync, "removed": removed, "changed": changed, "truncated": truncatedList, "movedTo": .orNull(.ref("MovedFeed")),
        ]),
        "BatchPage": .closedObject([
            "size": ["type": "integer", "minimum": 1], "total": .nonNegative,
            "next": OpenAPIValue.nullable("string").merging([
                "pattern": "^/episodes\\?podcasts=[0-9,]+&limit=[0-9]+((&since=[0-9TZ:-]+)?&cursor=[A-Za-z0-9_-]{23}|&sync=[A-Za-z0-9_-]+)$"
            ]),
            "nextCursor": OpenAPIValue.nullable("string").merging(["pattern": .string(cursorPattern)]),
        ]),
        "EpisodeDetail": .closedObject([
            "source": ["const": "rss"], "podcastId": ["type": "integer", "minimum": 1], "item": .ref("Episode"),
            "chapters": [
                "oneOf": [["type": "array", "items": .ref("ChapterMark"), "maxItems": 1000], ["type": "null"]],
                "description": "sorted by start; null when not asked for (include) or the episode has none",
            ],
            "transcript": described(.orNull(.ref("EpisodeTranscript")), "null when not asked for (include), the episode has none, or none could be read"),
            "problems": listOf("EpisodePartProblem", "why a part asked for is absent"),
        ]),
        "ChapterMark": .closedObject(
            [
                "start": seconds, "end": OpenAPIValue.nullable("number").merging(["minimum": 0]), "title": .nullable("string"),
                "url": .orNull(.httpURL), "imageUrl": .orNull(.httpURL), "toc": ["type": "boolean", "description": "false: not listed in a table of contents"],
            ],
            description:
                "times in seconds within the episode; end is the stated end, else the next table-of-contents chapter's start, else the episode's end"),
        "EpisodeTranscript": .closedObject([
            "url": .httpURL, "type": ["enum": ["text/vtt", "application/x-subrip", "application/json", "text/html", "text/plain"]],
            "language": .nullable("string"),
            "truncated": [
                "type": "boolean",
                "description": "more than 20,000 segments or 1 MiB of text, or a file larger than EPISODE_FILE_MAX_BYTES (read up to it): the rest was cut",
            ],
            "segments": ["type": "array", "maxItems": 20000, "items": .ref("TranscriptSegment")],
        ]),
        "TranscriptSegment": .closedObject([
            "start": described(OpenAPIValue.nullable("number").merging(["minimum": 0]), "seconds; null in an untimed transcript"),
            "end": OpenAPIValue.nullable("number").merging(["minimum": 0]), "speaker": .nullable("string"),
            "text": ["type": "string", "description": "plain text"],
        ]),
        "EpisodePartProblem": .closedObject([
            "part": ["enum": ["chapters", "transcript"]], "code": ["type": "string"], "message": ["type": "string"],
        ]),
    ]
}
