/// The pieces route and model descriptions are made of: every feed route answers with the
/// same cache headers and errors, and every list with the same envelope.
extension OpenAPIValue {
    static func nullable(_ type: String) -> OpenAPIValue { ["type": [.string(type), "null"]] }
    static func ref(_ schema: String) -> OpenAPIValue { ["$ref": .string("#/components/schemas/" + schema)] }
    /// `schema`, or null.
    static func orNull(_ schema: OpenAPIValue) -> OpenAPIValue { ["oneOf": [schema, ["type": "null"]]] }
    static let timestamp: OpenAPIValue = [
        "type": ["string", "null"], "format": "date-time", "description": "ISO-8601 in UTC, e.g. 2025-11-03T14:20:05Z",
    ]
    static let httpURL: OpenAPIValue = ["type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://", "description": "an absolute http(s) URL"]
    static let nonNegative: OpenAPIValue = ["type": "integer", "minimum": 0]
    static let stringArray: OpenAPIValue = ["type": "array", "items": ["type": "string"]]
    /// A pattern's class of what the server trims around list elements and values (Unicode
    /// White_Space; the ASCII part, so generated values are always ones the server trims).
    static let trimmedSpace = "[\\t\\n\\u000b\\f\\r ]"

    /// An object whose members are all required, in this order, and nothing else.
    static func closedObject(_ properties: OpenAPIValue, description: String? = nil) -> OpenAPIValue {
        guard case .object(let members) = properties else { return properties }
        var schema: OpenAPIValue = ["type": "object", "additionalProperties": false, "required": .array(members.map { .string($0.key) })]
        if let description { schema = schema.merging(["description": .string(description)]) }
        return schema.merging(["properties": properties])
    }

    static func query(_ name: String, _ description: String, _ schema: OpenAPIValue) -> OpenAPIValue {
        ["name": .string(name), "in": "query", "required": false, "description": .string(description), "schema": schema]
    }

    /// A query parameter the request must have, with a value that works (generated clients
    /// and docs show it; a test sends it to check what the route reads).
    static func required(_ name: String, _ description: String, _ schema: OpenAPIValue, example: OpenAPIValue) -> OpenAPIValue {
        ["name": .string(name), "in": "query", "required": true, "description": .string(description), "example": example, "schema": schema]
    }

    /// A list parameter: comma-separated, and it may also be repeated (`?country=PE&country=KE,MX`).
    /// Described as one string so that generated requests stay within the server's limits.
    static func repeatable(_ name: String, _ description: String, pattern: String, example: String) -> OpenAPIValue {
        [
            "name": .string(name), "in": "query", "required": false,
            "description": .string(description + ". Comma-separated; the parameter may also be repeated, its values joined (country=PE&country=KE,MX)"),
            "example": .string(example), "schema": ["type": "string", "pattern": .string(pattern)],
        ]
    }

    static func pathID(maximum: Int, _ description: String, example: Int) -> OpenAPIValue {
        [
            "name": "id", "in": "path", "required": true, "description": .string(description), "example": .int(example),
            "schema": ["type": "integer", "minimum": 1, "maximum": .int(maximum)],
        ]
    }

    static func error(_ description: String) -> OpenAPIValue {
        ["description": .string(description), "content": ["application/json": ["schema": .ref("Error")]]]
    }

    /// An error answered with `Retry-After`.
    static func limited(_ description: String) -> OpenAPIValue { error(description).merging(["headers": retryAfter]) }

    static let retryAfter: OpenAPIValue = [
        "Retry-After": ["schema": ["type": "string", "pattern": "^[0-9]+$"], "description": "seconds after which a retry makes sense"]
    ]

    static let cacheHeaders: OpenAPIValue = [
        "ETag": ["schema": ["type": "string"], "description": "strong validator of this representation"],
        "Cache-Control": ["schema": ["type": "string"], "description": "public, max-age, stale-while-revalidate, stale-if-error"],
        "Age": ["schema": ["type": "string"], "description": "seconds since the entry was fetched"],
        "X-Cache": ["schema": ["type": "string"], "description": "HIT, MISS or STALE"],
        "X-Request-ID": ["schema": ["type": "string"], "description": "the client's id or a generated one"],
    ]

    static let ifNoneMatch: OpenAPIValue = ["name": "If-None-Match", "in": "header", "required": false, "schema": ["type": "string"]]

    static let upstreamLimited =
        "the upstream is rate limited (its queue is full or the wait would be too long), its circuit is open, or every connection to its host "
        + "stayed busy (upstream_host_busy); see Retry-After"

    /// `GET` of a cached feed route: its answers, the cache's headers and every error a miss can end in.
    static func feedOperation(
        _ summary: String, answers schema: String, _ parameters: [OpenAPIValue], errors: OpenAPIValue = [:], headers: OpenAPIValue = [:],
        description: String? = nil
    ) -> OpenAPIValue {
        let headers = cacheHeaders.merging(headers)
        let responses: OpenAPIValue = [
            "200": ["description": "the feed", "headers": headers, "content": ["application/json": ["schema": .ref(schema)]]],
            "304": ["description": "not modified (If-None-Match matched)", "headers": headers],
            "400": error("invalid or missing parameter"),
            "502": error("the upstream failed or answered something unreadable"),
            "429": limited(
                "client_rate_limited: this client made more uncached (upstream-costing) requests than its share, CLIENT_MISS_RATE_PER_MIN; see Retry-After"),
            "503": limited(upstreamLimited),
            "504": error("the upstream timed out"),
            "414": error("uri_too_long: the request line is longer than 8 KiB"),
            "431": error("headers_too_large: more than 32 KiB or 100 header fields"),
        ]
        let requestHeaders: [OpenAPIValue] = [
            ifNoneMatch,
            [
                "name": "X-Request-ID", "in": "header", "required": false, "schema": ["type": "string"],
                "description": "echoed back when it is 1-128 characters of A-Z a-z 0-9 . _ : -, otherwise replaced by a generated id",
            ],
            [
                "name": "X-Forwarded-For", "in": "header", "required": false, "schema": ["type": "string"],
                "description": "names the client (for its miss quota and fair share) only when the connecting peer is in TRUSTED_PROXIES; otherwise ignored",
            ],
        ]
        var operation: OpenAPIValue = [
            "summary": .string(summary), "parameters": .array(parameters + requestHeaders), "responses": responses.merging(errors),
        ]
        if let description { operation = operation.merging(["description": .string(description)]) }
        return ["get": operation]
    }

    /// `POST` of a feed route's parameters as a form (`FeedRoute.handleForm`): a GET's answers
    /// and errors for `fields` sent as an `application/x-www-form-urlencoded` body, and `415`
    /// for another body type.
    static func formOperation(_ summary: String, answers schema: String, fields: [OpenAPIValue], errors: OpenAPIValue = [:]) -> OpenAPIValue {
        guard case .object(var operation)? = feedOperation(summary, answers: schema, [], errors: errors)["get"] else { return [:] }
        var properties: [(key: String, value: OpenAPIValue)] = []
        var required: [OpenAPIValue] = []
        for field in fields {
            guard let name = field["name"]?.stringValue else { continue }
            properties.append((name, (field["schema"] ?? [:]).merging(["description": field["description"] ?? "", "example": field["example"] ?? ""])))
            if case .bool(true)? = field["required"] { required.append(.string(name)) }
        }
        operation = operation.filter { $0.key != "parameters" }
        if case .object(let responses)? = operation.first(where: { $0.key == "responses" })?.value {
            let kept = OpenAPIValue.object(responses.filter { $0.key != "304" })
            let refused: OpenAPIValue = [
                "412": .error("precondition_failed: If-None-Match names the current answer (a POST is never a 304)"),
                "415": .error("unsupported_media_type: the body is not a form"),
            ]
            operation = operation.map { $0.key == "responses" ? ($0.key, kept.merging(refused)) : $0 }
        }
        operation.append(
            (
                "requestBody",
                [
                    "required": true,
                    "content": [
                        "application/x-www-form-urlencoded": ["schema": ["type": "object", "properties": .object(properties), "required": .array(required)]]
                    ],
                ]
            ))
        return ["post": .object(operation)]
    }

    /// The list envelope: `channel` names nullable string fields between `updated` and `count`,
    /// `extra` further typed ones after them; `page` is the schema of its paging, if it pages.
    static func envelope(items: OpenAPIValue, source: String, page: String?, channel: [(String, String)] = [], extra: OpenAPIValue = [:])
        -> OpenAPIValue
    {
        var properties: OpenAPIValue = ["source": ["const": .string(source)], "title": .nullable("string"), "updated": .timestamp]
        for (name, description) in channel {
            properties = properties.merging([name: OpenAPIValue.nullable("string").merging(["description": .string(description)])])
        }
        properties = properties.merging(extra)
        properties = properties.merging([
            "count": .nonNegative, "items": ["type": "array", "items": items], "page": page.map { .orNull(.ref($0)) } ?? ["type": "null"],
        ])
        return closedObject(properties)
    }

    /// One item of a source: `{"source": …, "item": …}`.
    static func itemEnvelope(_ item: String, source: String) -> OpenAPIValue {
        closedObject(["source": ["const": .string(source)], "item": .ref(item)])
    }

    /// Sizes of one image, by key: (width, height, longest edge, what it is); a nil width or
    /// height is one the upstream does not fix.
    static func imageSizes(_ sizes: [(String, Int?, Int?, Int, String)], description: String) -> OpenAPIValue {
        let properties = OpenAPIValue.object(
            sizes.map { key, width, height, edge, what in
                (
                    key: key,
                    value: [
                        "allOf": [.ref("ImageSize")], "description": .string(what),
                        "properties": [
                            "width": width.map { ["const": .int($0)] } ?? ["type": "null"],
                            "height": height.map { ["const": .int($0)] } ?? ["type": "null"], "maxEdge": ["const": .int(edge)],
                        ],
                    ]
                )
            })
        return closedObject(properties, description: description)
    }
}
