/// How the event stream of a library and the publishers' ping are described in the API document.
enum EventsAPI {
    private static let space = OpenAPIValue.trimmedSpace

    static let events: OpenAPIValue = [
        "get": [
            "summary": "A library's new episodes as they come (Server-Sent Events)",
            "description": .string(
                "A text/event-stream (the HTML standard's Server-Sent Events; the browser's EventSource reads it). First a retry: field, "
                    + "then an event (episodes) with what the client has not seen since its position: Last-Event-ID (sent by a reconnecting "
                    + "EventSource), else sync (a syncToken of /episodes), else the newest episodes. Then one event each time episodes of "
                    + "these podcasts change, in /episodes' JSON; each event's id is the sync token to resume from, so a client that "
                    + "reconnects with its last id misses nothing and gets nothing twice. A comment line every 10 s keeps proxies from "
                    + "closing it. Podcasts not cached are read first, as /episodes reads them. Watched feeds are read again at their own "
                    + "cadence (WATCH_REFRESH_MIN_S to WATCH_REFRESH_MAX_S), and at once on a publisher's ping (/hub/notify), on any "
                    + "replica (Redis carries the word). A reader that "
                    + "falls 256 KiB behind is closed (it resumes from its last id)."),
            "parameters": [
                .query(
                    "podcasts",
                    "comma-separated podcast ids (iTunes collection ids, feed ids), 1-500, as /episodes takes (repeats ignored); required unless library is given",
                    ["type": "string", "pattern": .string("^\(space)*[1-9][0-9]{0,17}\(space)*(,\(space)*[1-9][0-9]{0,17}\(space)*){0,499}$")]),
                PodcastFeedsAPI.limit, PodcastFeedsAPI.sync,
                .query(
                    "library",
                    "a library handle (POST /episodes/events/library): its podcasts, limit and sync, for EventSource and libraries whose ids and token pass no URL; not with podcasts. An unknown one is told as a problem event (library_unknown) and the stream ends",
                    ["type": "string", "pattern": "^[A-Za-z0-9_-]{22}$"]),
                [
                    "name": "Last-Event-ID", "in": "header", "required": false, "schema": ["type": "string"],
                    "description": "the last event's id (what a reconnecting EventSource sends); one this service did not give out is ignored",
                ],
            ],
            "responses": [
                "200": [
                    "description": "the stream: events until the client leaves (or falls behind, or the replica drains)",
                    "content": ["text/event-stream": ["schema": ["type": "string"]]],
                ],
                "400": .error(
                    "podcasts missing (missing_parameter), an entry that is not an id, more than 500 ids, a bad limit, sync or library (invalid_parameter)"),
                "410": .error("a sync token of a format this version no longer reads (sync_token_expired): connect without sync"),
                "414": .error("uri_too_long: the request line is longer than 8 KiB (a big library: POST the form, or make a handle)"),
                "429": .limited("too_many_streams: the replica holds EVENT_STREAMS_MAX streams, or half of them and this address EVENT_STREAMS_PER_CLIENT"),
            ],
        ]
    ]

    static let libraryHandle: OpenAPIValue = [
        "post": [
            "summary": "A library under a short name, for EventSource",
            "description": .string(
                "Keeps a library (its podcasts, limit and sync token, as GET /episodes/events takes them) under a short name: EventSource "
                    + "cannot POST, and a 500-podcast library's ids and token (7 KB and more) pass no URL. Open /episodes/events?library=<name> "
                    + "(the url field); reconnects resume with Last-Event-ID as any stream does. The same library at the same position is "
                    + "the same name. Kept 30 days from its last use (with Redis, among the evictable keys)."),
            "requestBody": [
                "required": true,
                "content": [
                    "application/x-www-form-urlencoded": [
                        "schema": [
                            "type": "object",
                            "properties": [
                                "podcasts": [
                                    "type": "string", "description": "comma-separated podcast ids, 1-500",
                                    "pattern": .string("^\(space)*[1-9][0-9]{0,17}\(space)*(,\(space)*[1-9][0-9]{0,17}\(space)*){0,499}$"),
                                ],
                                "limit": ["type": "integer", "minimum": 1, "maximum": 500, "default": 100],
                                "sync": ["type": "string", "pattern": .string(PodcastFeedsAPI.syncPattern), "description": "the syncToken to start from"],
                            ],
                            "required": ["podcasts"],
                        ]
                    ]
                ],
            ],
            "responses": [
                "201": [
                    "description": "the handle, and the stream's URL (also in Location)",
                    "headers": ["Location": ["schema": ["type": "string"], "description": "the stream's URL"]],
                    "content": [
                        "application/json": [
                            "schema": .closedObject([
                                "library": ["type": "string", "pattern": "^[A-Za-z0-9_-]{22}$"],
                                "url": ["type": "string", "pattern": "^/episodes/events\\?library=[A-Za-z0-9_-]{22}$"],
                            ])
                        ]
                    ],
                ],
                "400": .error("podcasts missing (missing_parameter), an entry that is not an id, more than 500 ids, a bad limit or sync (invalid_parameter)"),
                "410": .error("a sync token of a format this version no longer reads (sync_token_expired)"),
                "415": .error("unsupported_media_type: the body is not application/x-www-form-urlencoded"),
            ],
        ]
    ]

    private static let pingParameters: [OpenAPIValue] = [
        .query("url", "the feed's URL (as the podcast's feed, or its feed id, names it)", ["type": "string", "minLength": 1, "maxLength": 2048]),
        .query("id", "a podcast id (an iTunes collection id or a feed id)", ["type": "string", "pattern": "^[1-9][0-9]{0,17}$"]),
    ]

    private static let pingResponses: OpenAPIValue = [
        "202": [
            "description": "the feed is being read again; streams watching it hear of what changed",
            "content": [
                "application/json": [
                    "schema": .closedObject([
                        "status": ["const": "refreshing"], "podcasts": ["type": "array", "items": ["type": "integer", "minimum": 1]],
                    ])
                ]
            ],
        ],
        "400": .error("neither url nor id (missing_parameter), or one that is not a feed URL or podcast id (invalid_parameter)"),
        "404": .error("feed_unknown: no podcast here reads this feed (nothing is fetched for a URL a stranger names)"),
        "414": .error("uri_too_long: the request line is longer than 8 KiB"),
        "429": .limited(
            "ping_too_soon: this feed was pinged within the last 10 s (it is being read, and is read once more when the 10 s have passed); client_rate_limited: this client's pings (each costs a miss of CLIENT_MISS_RATE_PER_MIN) passed its quota"
        ),
    ]

    private static let pingDescription =
        "A publisher's word that its feed changed, in the spirit of Podcast Index's hub/pubnotify: a feed FeedProxy reads (a "
        + "podcast whose episodes are cached on this replica or in Redis) is read again at once, conditionally, and every stream watching "
        + "it hears of new episodes within a second. Unknown feeds are ignored, never fetched; a feed counts one ping per 10 s."

    static let notify: OpenAPIValue = [
        "get": [
            "summary": "A publisher's ping: read this feed again now", "description": .string(pingDescription), "parameters": .array(pingParameters),
            "responses": pingResponses,
        ]
    ]

    static let notifyForm: OpenAPIValue = [
        "post": [
            "summary": "The same, its parameters as a form", "description": .string(pingDescription),
            "requestBody": [
                "required": true,
                "content": [
                    "application/x-www-form-urlencoded": [
                        "schema": [
                            "type": "object",
                            "properties": [
                                "url": ["type": "string", "minLength": 1, "maxLength": 2048], "id": ["type": "string", "pattern": "^[1-9][0-9]{0,17}$"],
                            ],
                        ]
                    ]
                ],
            ],
            "responses": pingResponses.merging(["415": .error("unsupported_media_type: the body is not application/x-www-form-urlencoded")]),
        ]
    ]

    private static let callbackParameters: [OpenAPIValue] = [
        .required("podcast", "the podcast the subscription is for", ["type": "string", "pattern": "^[1-9][0-9]{0,17}$"], example: "1200361736"),
        .required(
            "token", "the callback's token (an HMAC of the podcast id under WEBSUB_KEY)", ["type": "string", "pattern": "^[0-9a-f]{32}$"],
            example: "00112233445566778899aabbccddeeff"),
    ]

    static let websubVerify: OpenAPIValue = [
        "get": [
            "summary": "WebSub: a hub verifies a (un)subscription",
            "description": .string(
                "Called by WebSub hubs only (on with WEBSUB_KEY and PUBLIC_BASE_URL): hub.challenge is echoed for a subscription a replica "
                    + "asked for (the topic is the one the feed names), or for an unsubscription of a feed this replica no longer watches."),
            "parameters": .array(
                callbackParameters + [
                    .required(
                        "hub.mode", "subscribe, unsubscribe or denied", ["type": "string", "enum": ["subscribe", "unsubscribe", "denied"]],
                        example: "subscribe"),
                    .query("hub.topic", "the feed's URL (its rel=self)", ["type": "string"]),
                    .query("hub.challenge", "echoed when the intent is confirmed (printable ASCII, at most 1024 bytes)", ["type": "string"]),
                    .query("hub.lease_seconds", "the lease the hub grants", ["type": "string"]),
                ]),
            "responses": [
                "200": ["description": "confirmed: the challenge (empty for denied)", "content": ["text/plain": ["schema": ["type": "string"]]]],
                "400": .error("hub.challenge missing or not printable, or an unknown hub.mode (invalid_parameter)"),
                "404": .error("not_found: a callback this service did not give out, or a subscription it does not want"),
            ],
        ]
    ]

    static let websubNotify: OpenAPIValue = [
        "post": [
            "summary": "WebSub: a hub's content notification",
            "description": .string(
                "Called by WebSub hubs only: a body whose X-Hub-Signature (sha1, sha256, sha384 or sha512 HMAC under the subscription's "
                    + "secret) is valid reads the feed again at once, conditionally, and streams watching it hear of new episodes; the body itself "
                    + "is not used. A missing or forged signature changes nothing (answered 202 all the same). Bodies over 1 MiB are refused "
                    + "(413): the feed is still read at its cadence."),
            "parameters": .array(callbackParameters),
            "requestBody": ["required": true, "content": ["*/*": ["schema": ["type": "string"]]]],
            "responses": [
                "202": ["description": "received", "content": ["text/plain": ["schema": ["type": "string"]]]],
                "404": .error("not_found: a callback this service did not give out"),
                "413": .error("payload_too_large: a body over 1 MiB"),
            ],
        ]
    ]
}
