import Feeds
/// How `/images` is described in the API document.
enum ImagesAPI {
    private static let encodings = ["image/webp", "image/avif", "image/jpeg", "image/png"]

    static let image: OpenAPIValue = [
        "get": [
            "summary": "A publisher's image, resized and re-encoded (IMAGE_PROXY_KEY set)",
            "description": .string(
                "Use the URLs the API hands out (images maps of the rss source, img src in notesHtml): they are signed, and "
                    + "nothing unsigned is fetched. The source is fetched like a feed (public addresses unless ALLOW_PRIVATE_FEED_HOSTS, "
                    + "IMAGE_MAX_BYTES, the upstream deadline, a breaker per host, conditional refresh), resized to width w (height by "
                    + "aspect ratio, at most 4w; never enlarged) with metadata dropped, and cached. The encoding follows Accept: WebP where "
                    + "accepted, else AVIF where accepted, else JPEG (PNG for a transparent image); format overrides it."),
            "parameters": [
                .required(
                    "url", "the source image, an absolute http(s) URL (at most 2048 bytes)", ["type": "string"],
                    example: "https://images.example/podcasts/cover.jpg"),
                .required("w", "the width asked for", ["type": "integer", "enum": .array(ImageProxyLinks.widths.map { .int($0) })], example: 300),
                .required(
                    "sig", "unpadded base64url HMAC-SHA256 of url under IMAGE_PROXY_KEY", ["type": "string", "pattern": "^[A-Za-z0-9_-]{43}$"],
                    example: "Xw2QhYk1s9B3vV5m7Lr0Jc4dPz8eTn6aUoGfHyKqWbE"),
                .query("format", "the encoding, instead of the one Accept selects", ["type": "string", "enum": ["auto", "webp", "avif", "jpeg", "png"]]),
                ["name": "Accept", "in": "header", "required": false, "schema": ["type": "string"], "description": "image/webp or image/avif to get those"],
                .ifNoneMatch,
            ],
            "responses": [
                "200": [
                    "description": "the image",
                    "headers": OpenAPIValue.cacheHeaders.merging(["Vary": ["schema": ["const": "Accept"], "description": "the encoding follows Accept"]]),
                    "content": .object(encodings.map { (key: $0, value: ["schema": ["type": "string", "contentMediaType": .string($0)]]) }),
                ],
                "304": ["description": "not modified (If-None-Match matched)", "headers": .cacheHeaders],
                "400": .error("url missing or not absolute http(s), w not on the ladder, or an unknown format (invalid_parameter)"),
                "403": .error("bad_signature: sig is not url's signature under IMAGE_PROXY_KEY"),
                "404": .error("not_found: the image proxy is off (IMAGE_PROXY_KEY unset)"),
                "415": .error("unsupported_image_type: the source is not JPEG, PNG, WebP, GIF, HEIF or AVIF (SVG included)"),
                "422": .error("image_too_large (more pixels than IMAGE_MAX_PIXELS), image_undecodable (damaged, truncated, lying) or image_timed_out"),
                "429": .limited("client_rate_limited: this client made more uncached requests than CLIENT_MISS_RATE_PER_MIN; see Retry-After"),
                "502": .error("the source could not be fetched (its host failed, answered an error, or is a private address)"),
                "503": .limited("image_decoders_busy, or the publisher's circuit is open; see Retry-After"),
                "504": .error("the source timed out"),
                "414": .error("uri_too_long: the request line is longer than 8 KiB"),
            ],
        ]
    ]
}
