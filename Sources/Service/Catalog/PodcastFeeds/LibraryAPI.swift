/// How the routes of libraries as apps hold them are described in the API document: a
/// podcast named by its feed URL, OPML in and out, a library refresh sent as a form.
enum LibraryAPI {
    static let byFeedURL = OpenAPIValue.feedOperation(
        "A podcast by its feed URL, listed by iTunes or not", answers: "PodcastItem",
        [
            .required(
                "url", "the feed's URL: absolute http(s) (feed:, itpc: and pcast: links are read as one), at most 2048 bytes",
                ["type": "string", "minLength": 1, "maxLength": 2048], example: "https://feeds.example.com/show.xml")
        ],
        errors: [
            "400": .error("url missing (missing_parameter) or not an absolute http(s) URL (invalid_parameter)"),
            "404": .error("the feed's host answered 404 (upstream_not_found)"),
            "503": .limited(OpenAPIValue.upstreamLimited + "; or the feed is still being read (feed_pending)"),
        ],
        description: "Its id is a feed id, derived from the normalised URL (the same on every replica and in every import) and taken "
            + "everywhere an iTunes id is (/podcasts/{id}, /podcasts/{id}/episodes, /episodes). The feed is read once, as the episode "
            + "data its episodes are cut from; the podcast is described by its channel (source rss). A feed id is remembered for "
            + "FEED_ID_TTL after its feed was last read; one forgotten answers feed_id_unknown (404) until it is named again.")

    private static let opmlBody: OpenAPIValue = [
        "required": true,
        "description": "an OPML 1.0 or 2.0 document (a podcast app's subscription export), at most 1 MiB",
        "content": [
            "text/x-opml": ["schema": ["type": "string"]], "application/xml": ["schema": ["type": "string"]],
            "text/xml": ["schema": ["type": "string"]],
        ],
    ]

    static let importLibrary: OpenAPIValue = [
        "post": [
            "summary": "Import a subscription list (OPML)",
            "description": .string(
                "Every outline that names a feed (xmlUrl, at any depth) is answered with its podcast's feed id, title and status: ok, "
                    + "moved (movedTo names the new address and its id), error (the code: invalid_feed_url, library_too_large, or what "
                    + "reading the feed gave) or pending (still being read at EPISODES_BATCH_DEADLINE_S; Retry-After). A feed named twice "
                    + "is one podcast; podcasts lists the library's ids once each, ready for /episodes. Entities, external DTDs and "
                    + "nesting past 64 are refused; at most 5,000 outlines are read and 500 feeds imported. Reading the feeds costs what "
                    + "a library refresh costs."),
            "requestBody": opmlBody,
            "responses": [
                "200": [
                    "description": "each outline and its podcast",
                    "headers": OpenAPIValue.retryAfter,
                    "content": ["application/json": ["schema": .ref("LibraryImport")]],
                ],
                "400": .error("not OPML, not well-formed, declares entities, or nested too deep (invalid_opml)"),
                "413": .error("body_too_large: more than 1 MiB"),
                "429": .limited("client_rate_limited: see Retry-After"),
            ],
        ]
    ]

    static let exportLibrary: OpenAPIValue = [
        "get": [
            "summary": "A library as an OPML file",
            "description": .string(
                "An OPML 2.0 file any podcast app imports: one outline (type rss, text, title, xmlUrl) per podcast, in the order "
                    + "given. A podcast that does not exist or has no feed is left out (a comment names it); one that cannot be looked "
                    + "up now makes the answer a 503 with Retry-After, never a file that silently misses it."),
            "parameters": [
                .required(
                    "podcasts", "comma-separated podcast ids (iTunes collection ids, feed ids), 1-500",
                    ["type": "string", "pattern": "^ *[1-9][0-9]{0,17} *( *, *[1-9][0-9]{0,17} *){0,499}$"], example: "1200361736,1437212345")
            ],
            "responses": [
                "200": [
                    "description": "the library",
                    "content": ["text/x-opml": ["schema": ["type": "string"]]],
                    "headers": ["Content-Disposition": ["schema": ["type": "string"], "description": "attachment; filename=\"library.opml\""]],
                ],
                "400": .error("podcasts missing (missing_parameter) or not ids (invalid_parameter)"),
                "503": .limited("library_incomplete: a podcast could not be looked up now"),
            ],
        ]
    ]

    /// A GET's twin taking its parameters as a form (`POST /episodes`, `POST
    /// /library/opml/export`), for a library whose query would pass the 8 KB request line
    /// proxies allow (500 feed ids and a sync token). `path`: the GET's; `note`: what else differs.
    static func formOf(_ get: OpenAPIValue, path: String, note: String = "") -> OpenAPIValue {
        guard let operation = get["get"], case .array(let parameters)? = operation["parameters"] else { return [:] }
        var properties: [(key: String, value: OpenAPIValue)] = []
        var required: [OpenAPIValue] = []
        for parameter in parameters where parameter["in"]?.stringValue == "query" {
            guard let name = parameter["name"]?.stringValue else { continue }
            properties.append((name, (parameter["schema"] ?? [:]).merging(["description": parameter["description"] ?? ""])))
            if case .bool(true)? = parameter["required"] { required.append(.string(name)) }
        }
        var responses = operation["responses"] ?? [:]
        if case .object(let members) = responses { responses = .object(members.filter { $0.key != "304" }) }
        responses = responses.merging(["415": .error("unsupported_media_type: the body is not application/x-www-form-urlencoded")])
        return [
            "post": [
                "summary": "The same, its parameters as a form",
                "description": .string(
                    "The same answer as GET \(path) for the same parameters, sent as an application/x-www-form-urlencoded body: a "
                        + "library of 500 podcasts (and its sync token) passes the 8 KB request line proxies allow. Not cached by anyone "
                        + "(no ETag match, Cache-Control: no-store)." + note),
                "requestBody": [
                    "required": true,
                    "content": [
                        "application/x-www-form-urlencoded": [
                            "schema": ["type": "object", "properties": .object(properties), "required": .array(required)]
                        ]
                    ],
                ],
                "responses": responses,
            ]
        ]
    }

    static let schemas: OpenAPIValue = [
        "MovedFeed": .closedObject(
            ["url": ["type": "string"], "id": ["type": "integer", "minimum": 1]],
            description: "where the feed moved for good, and the id that names it now (a feed id's podcast: the new address's feed id)"),
        "ImportedOutline": .closedObject([
            "text": .nullable("string"), "xmlUrl": .nullable("string"), "id": .nullable("integer"), "feedUrl": .nullable("string"),
            "status": ["type": "string", "enum": ["ok", "moved", "pending", "error"]], "title": .nullable("string"),
            "movedTo": .orNull(.ref("MovedFeed")),
            "error": .orNull(.closedObject(["code": ["type": "string"], "message": ["type": "string"]])),
        ]),
        "LibraryImport": .closedObject([
            "source": ["const": "library"], "title": .nullable("string"), "count": .nonNegative,
            "podcasts": ["type": "array", "items": ["type": "integer", "minimum": 1]],
            "outlines": ["type": "array", "items": .ref("ImportedOutline")], "leftOut": .nonNegative,
        ]),
    ]
}
