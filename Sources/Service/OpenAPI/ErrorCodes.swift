/// Every `code` an error answer can carry, with its status and when it is used: the one
/// source of the OpenAPI document's error schema (`code`'s enum and `x-codes`) and, through
/// it, of docs/API.md's errors table (scripts/generate/route-tables.py). A test reads the
/// sources and fails on a code thrown anywhere that is not listed here, or listed and thrown nowhere.
enum ErrorCodes {
    struct Code: Sendable {
        let code: String
        let status: Int
        let when: String
    }

    static let all: [Code] = [
        Code(
            code: "invalid_parameter", status: 400,
            when:
                "a parameter is present but malformed or out of range (an empty value counts as present, except for `term`, `podcasts`, "
                + "`url` and `id`, where it is missing, and the list parameters `sector`, `country` and `tags`, where it is none); "
                + "a `{id}` that is not a valid id; a `/podcasts` `term` shorter than `PODCAST_MIN_TERM_CHARS`; "
                + "a `sync` token this service did not write. For a fixed set of values the message lists them"
        ),
        Code(
            code: "missing_parameter", status: 400,
            when:
                "a required parameter is absent: `term` (absent or blank) on `/podcasts`, `podcasts` on `/episodes` and its stream, `url` on `/podcasts/byfeedurl` and `/hub/notify`"
        ),
        Code(code: "invalid_opml", status: 400, when: "`POST /library/opml`: the body is no OPML document, or nests outlines too deep"),
        Code(code: "bad_request", status: 400, when: "the request itself breaks HTTP/1.1 (the connection is then closed)"),
        Code(code: "bad_signature", status: 403, when: "`/images`: `sig` does not sign this `url` and width"),
        Code(code: "not_found", status: 404, when: "no such route"),
        Code(code: "podcast_not_found", status: 404, when: "`/podcasts/{id}`, `/podcasts/{id}/episodes`: no podcast has this id"),
        Code(code: "feed_unavailable", status: 404, when: "episodes: the podcast publishes no feed"),
        Code(
            code: "feed_id_unknown", status: 404,
            when: "a feed id whose URL is known nowhere (never given out here, or its record lost): name the feed again by URL"),
        Code(
            code: "library_unknown", status: 404,
            when: "`/episodes/events?library=`: no library has this handle (lapsed 30 days after its last use); told as a `problem` event, the stream then ends"
        ),
        Code(code: "feed_unknown", status: 404, when: "`/hub/notify`: no podcast here reads this feed, so nothing is fetched on a stranger's word"),
        Code(code: "episode_not_found", status: 404, when: "`/podcasts/{id}/episodes/{episodeId}`: the feed has no episode with this id"),
        Code(code: "loan_not_found", status: 404, when: "`/loans/{id}`: no loan has this id"),
        Code(code: "method_not_allowed", status: 405, when: "known path, other method; `Allow` lists the methods"),
        Code(code: "request_timeout", status: 408, when: "the request's head or body did not arrive in time (the connection is closed)"),
        Code(
            code: "sync_token_expired", status: 410,
            when: "a `sync` token of a format this version no longer reads: refresh with an empty `sync=` and follow `page.next` "
                + "(every podcast whole, with `resync`)"),
        Code(
            code: "precondition_failed", status: 412,
            when: "a feed route's form `POST` whose `If-None-Match` names the current answer: a POST is never a `304` (RFC 9110 §13.1.2)"),
        Code(code: "payload_too_large", status: 413, when: "a body over 1 MiB"),
        Code(code: "library_too_large", status: 413, when: "`POST /library/opml`: the file names more feeds than a library holds (500)"),
        Code(code: "uri_too_long", status: 414, when: "a request line over 8 KiB (send a library as a form: `POST /episodes`, `POST /episodes/events`)"),
        Code(code: "unsupported_media_type", status: 415, when: "a form route's body is not `application/x-www-form-urlencoded`"),
        Code(code: "unsupported_image_type", status: 415, when: "`/images`: the source is not JPEG, PNG, WebP or GIF"),
        Code(code: "expectation_failed", status: 417, when: "an `Expect` other than `100-continue`"),
        Code(code: "image_too_large", status: 422, when: "`/images`: the source is larger than `IMAGE_MAX_PIXELS` or `IMAGE_MAX_SOURCE_BYTES`"),
        Code(code: "image_undecodable", status: 422, when: "`/images`: the source does not decode"),
        Code(code: "image_timed_out", status: 422, when: "`/images`: decoding and resizing took longer than `IMAGE_TIMEOUT_MS`"),
        Code(
            code: "invalid_feed_url", status: 422,
            when: "`POST /library/opml`: an outline's `xmlUrl` is not an absolute http(s) URL (the outline is reported, the rest imported)"),
        Code(code: "chapters_unreadable", status: 422, when: "an episode's chapters file is not one of the chapter formats"),
        Code(code: "transcript_unreadable", status: 422, when: "an episode's transcript is not one of the transcript formats"),
        Code(
            code: "client_rate_limited", status: 429,
            when:
                "this client address made more uncached (upstream-costing) requests than `CLIENT_MISS_RATE_PER_MIN` (default 600 a minute, "
                + "a burst of 100); `Retry-After` says when. Cached answers are still served"
        ),
        Code(code: "ping_too_soon", status: 429, when: "`/hub/notify`: the feed was pinged within 10 s (it is read once they pass); `Retry-After`"),
        Code(
            code: "too_many_streams", status: 429,
            when: "`/episodes/events`: the replica holds `EVENT_STREAMS_MAX`, or, half full, this address its `EVENT_STREAMS_PER_CLIENT`; `Retry-After`"),
        Code(code: "headers_too_large", status: 431, when: "header fields over 32 KiB or more than 100"),
        Code(code: "internal_error", status: 500, when: "a fault of this service (never an upstream's): please report it"),
        Code(code: "encoding_failed", status: 500, when: "an answer could not be encoded (a fault of this service)"),
        Code(code: "not_implemented", status: 501, when: "a transfer coding other than `chunked`"),
        Code(
            code: "bad_upstream_response", status: 502,
            when: "the upstream sent something unreadable (or cached data does not read back); the message names the upstream"),
        Code(code: "upstream_dns_failure", status: 502, when: "the upstream's host name did not resolve"),
        Code(code: "upstream_connect_failure", status: 502, when: "the upstream refused or dropped the connection"),
        Code(code: "upstream_tls_failure", status: 502, when: "TLS with the upstream failed"),
        Code(code: "upstream_http_error", status: 502, when: "the upstream answered with an error status"),
        Code(
            code: "upstream_body_too_large", status: 502, when: "the upstream's body passed its size limit (`UPSTREAM_MAX_BODY_BYTES`, `FEED_MAX_BODY_BYTES`)"),
        Code(code: "upstream_connection_lost", status: 502, when: "the upstream's connection broke mid-answer"),
        Code(code: "upstream_too_many_redirects", status: 502, when: "the upstream redirected too many times"),
        Code(code: "upstream_protocol_not_allowed", status: 502, when: "a redirect to a scheme other than http(s)"),
        Code(code: "upstream_forbidden_address", status: 502, when: "the upstream (or a redirect) resolves to a private or loopback address"),
        Code(code: "upstream_invalid_request", status: 502, when: "the upstream request could not be made (a URL that is no URL)"),
        Code(code: "upstream_error", status: 502, when: "the upstream request failed in another way"),
        Code(code: "upstream_cancelled", status: 502, when: "the upstream request was cancelled (its callers had all left)"),
        Code(
            code: "upstream_rate_limited", status: 503,
            when:
                "our budget for the upstream is spent (the fair queue is full for this client, or its turn would come after `UPSTREAM_QUEUE_WAIT_MS`); `Retry-After`"
        ),
        Code(code: "upstream_unavailable", status: 503, when: "the upstream's circuit breaker is open; `Retry-After`"),
        Code(code: "upstream_host_busy", status: 503, when: "every connection to the feed's host stayed busy until the request's deadline; `Retry-After`"),
        Code(code: "image_decoders_busy", status: 503, when: "`/images`: every decoder is busy and the queue full; `Retry-After`"),
        Code(code: "too_many_connections", status: 503, when: "the server holds `MAX_CONNECTIONS`; `Retry-After`"),
        Code(
            code: "feed_pending", status: 503,
            when: "`/podcasts/byfeedurl`: the feed is still being read (a big or slow feed); `Retry-After` says when to ask again"),
        Code(
            code: "library_incomplete", status: 503,
            when: "`/library/opml` export: podcasts could not be looked up now, so the file would miss them; `Retry-After`"),
        Code(code: "upstream_timeout", status: 504, when: "the upstream did not answer within `UPSTREAM_TIMEOUT_MS` (or the request's deadline)"),
        Code(code: "http_version_not_supported", status: 505, when: "an HTTP version other than 1.0 and 1.1"),
    ]
}
