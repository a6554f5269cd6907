#!/usr/bin/env python3
"""Writes docs/openapi.json and Sources/Service/Routes/OpenAPIDocument.swift from one description.
Run after changing the API: python3 scripts/generate/openapi.py"""
import json, pathlib

root = pathlib.Path(__file__).resolve().parent.parent.parent
nullable = lambda t: {"type": [t, "null"]}
http_url = {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://", "description": "an absolute http(s) URL"}
ref = lambda name: {"$ref": "#/components/schemas/" + name}
ts = {"type": ["string", "null"], "format": "date-time", "description": "ISO-8601 in UTC, e.g. 2025-11-03T14:20:05Z"}

# What the server trims around list elements and parameter values (Unicode White_Space;
# the ASCII part here, so generated values are always ones the server trims).
ws = "[\\t\\n\\u000b\\f\\r ]"

def comma_list(token, most=None):
    """A comma-separated list of `token`s (at most `most`); elements may be empty or padded (the server drops empty ones)."""
    element = ws + "*(" + token + ")?" + ws + "*"
    return "^" + element + "(," + element + ")" + ("*" if most is None else "{0,%d}" % (most - 1)) + "$"

def any_case(word):
    """`word` matched case-insensitively (JSON Schema patterns have no flags); `-` also as `_` or a space."""
    return "".join("[-_ ]" if c == "-" else "[" + c.upper() + c + "]" if c.isalpha() else c for c in word)

# A /podcasts term: no control characters except whitespace (which is trimmed and collapsed),
# and at least two characters that are not whitespace (PODCAST_MIN_TERM_CHARS, default 2).
term_char = "[^\\u0000-\\u0008\\u000e-\\u001f\\u007f-\\u0084\\u0086-\\u009f]"
term_word_char = "[^\\s\\u0000-\\u001f\\u007f-\\u009f]"

# `since`: Unix seconds, or an RFC 3339 date-time in years 0001-9999 (days to 28 here: every
# value this pattern admits is a real date; the server takes every real one).
since_pattern = ("^([0-9]{1,11}|(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])"
                 "T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?(Z|[+-](0[0-9]|1[0-7]):[0-5][0-9]))$")

# Kiva's sectors by the ids of its lend API's sector facets (Sources/Feeds/Adapters/Kiva/KivaQuery.swift).
sectors = {"agriculture": 1, "arts": 9, "clothing": 5, "construction": 14, "education": 15, "entertainment": 17, "food": 12, "health": 6,
           "housing": 10, "manufacturing": 8, "personal-use": 16, "retail": 7, "services": 4, "transportation": 3, "wholesale": 13}
assert sorted(sectors.values()) == [1, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17]
sector_token = "|".join(any_case(s) for s in sorted(sectors)) + "|\\+?0*(1[02-7]?|[3-9])"

def envelope(item_schema, source, paged, channel=(), extra=None):
    """The list envelope; `channel` names extra nullable string fields between `updated` and
    `count`, `extra` further typed ones after them."""
    props = {"source": {"const": source}, "title": nullable("string"), "updated": ts}
    props.update({name: dict(nullable("string"), description=desc) for name, desc in channel})
    props.update(extra or {})
    props.update({"count": {"type": "integer", "minimum": 0}, "items": {"type": "array", "items": item_schema},
                  "page": {"oneOf": [ref(paged), {"type": "null"}]} if paged else {"type": "null"}})
    return {"type": "object", "required": list(props), "additionalProperties": False, "properties": props}

def item_envelope(item, source):
    return {"type": "object", "required": ["source", "item"], "additionalProperties": False,
            "properties": {"source": {"const": source}, "item": ref(item)}}

def param(name, desc, schema, required=False):
    return {"name": name, "in": "query", "required": required, "description": desc, "schema": schema}

def repeatable(name, desc, pattern, example):
    """A list parameter: comma-separated, and it may also be repeated (`?country=PE&country=KE,MX`). Described as one
    string so that generated requests stay within the server's limits (country: at most 50 codes in all)."""
    return {"name": name, "in": "query", "required": False, "description": desc + ". Comma-separated; the parameter may also be repeated, "
            "its values joined (country=PE&country=KE,MX)", "example": example, "schema": {"type": "string", "pattern": pattern}}

def path_id(maximum, desc, example):
    return {"name": "id", "in": "path", "required": True, "description": desc, "example": example,
            "schema": {"type": "integer", "minimum": 1, "maximum": maximum}}

def err(desc):
    return {"description": desc, "content": {"application/json": {"schema": ref("Error")}}}

cache_headers = {h: {"schema": {"type": "string"}, "description": d} for h, d in [
    ("ETag", "strong validator of this representation"), ("Cache-Control", "public, max-age, stale-while-revalidate, stale-if-error"),
    ("Age", "seconds since the entry was fetched"), ("X-Cache", "HIT, MISS or STALE"), ("X-Request-ID", "the client's id or a generated one")]}

link_target = "<[^<>]+>; rel=\"(first|prev|next|last)\""
link_header = {"Link": {"schema": {"type": "string", "pattern": "^" + link_target + "(, " + link_target + ")*$"},
                        "description": "RFC 8288 paging links: the same targets as page.first, page.prev, page.next and page.last (those that are not null)"}}

retry_after = {"Retry-After": {"schema": {"type": "string", "pattern": "^[0-9]+$"}, "description": "seconds after which a retry makes sense"}}

def limited(desc):
    return dict(err(desc), headers=retry_after)

rate_limited_503 = "the upstream is rate limited (its queue is full or the wait would be too long) or its circuit is open; see Retry-After"

def feed_op(summary, schema, params, extra_errors=None, extra_headers=None, description=None):
    headers = dict(cache_headers, **(extra_headers or {}))
    responses = {
        "200": {"description": "the feed", "headers": headers, "content": {"application/json": {"schema": ref(schema)}}},
        "304": {"description": "not modified (If-None-Match matched)", "headers": headers},
        "400": err("invalid or missing parameter"),
        "502": err("the upstream failed or answered something unreadable"),
        "429": limited("client_rate_limited: this client made more uncached (upstream-costing) requests than its share, CLIENT_MISS_RATE_PER_MIN; see Retry-After"),
        "503": limited(rate_limited_503),
        "504": err("the upstream timed out"),
        "414": err("uri_too_long: the request line is longer than 8 KiB"),
        "431": err("headers_too_large: more than 32 KiB or 100 header fields"),
    }
    responses.update(extra_errors or {})
    op = {"summary": summary, "parameters": params + [
        {"name": "If-None-Match", "in": "header", "required": False, "schema": {"type": "string"}},
        {"name": "X-Request-ID", "in": "header", "required": False, "schema": {"type": "string"},
         "description": "echoed back when it is 1-128 characters of A-Z a-z 0-9 . _ : -, otherwise replaced by a generated id"},
        {"name": "X-Forwarded-For", "in": "header", "required": False, "schema": {"type": "string"},
         "description": "names the client (for its miss quota and fair share) only when the connecting peer is in TRUSTED_PROXIES; otherwise ignored"}],
        "responses": responses}
    if description:
        op["description"] = description
    return {"get": op}

def image(width, height, edge, desc):
    """An ImageSize whose width, height (null: not documented) and maxEdge are these."""
    return {"allOf": [ref("ImageSize")], "description": desc, "properties": {
        "width": {"const": width} if width is not None else {"type": "null"},
        "height": {"const": height} if height is not None else {"type": "null"},
        "maxEdge": {"const": edge}}}

def images(sizes, desc):
    return {"type": "object", "additionalProperties": False, "required": list(sizes), "description": desc,
            "properties": {key: image(*spec) for key, spec in sizes.items()}}

doc = {
  "openapi": "3.1.0",
  "info": {"title": "FeedProxy", "version": "1.0.0",
           "description": "Flickr public photos, iTunes podcast search and Kiva loans as one small, typed, cached JSON API."},
  "servers": [{"url": "http://localhost:8080"}],
  "paths": {
    "/": {"get": {"summary": "index: the service and its routes", "responses": {"200": {"description": "name, version and the routes served",
        "content": {"application/json": {"schema": {"type": "object", "required": ["name", "version", "routes"], "additionalProperties": False,
            "properties": {"name": {"const": "FeedProxy"}, "version": {"type": "string"}, "routes": {"type": "array", "items": {"type": "string"}}}}}}}}}},
    "/photos": feed_op("Flickr public photos", "PhotoFeed", [
        param("tags", "comma-separated tags (at most 20, each at most 100 printable characters)", {"type": "string", "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"}),
        param("tagmode", "all tags or any", {"type": "string", "enum": ["all", "any"]}),
        param("id", "a Flickr user id", {"type": "string", "pattern": "^\\s*[0-9]+@N[0-9]{2}\\s*$"}),
        param("ids", "comma-separated Flickr user ids (at most 20)", {"type": "string", "pattern": "^\\s*[0-9]+@N[0-9]{2}\\s*(,\\s*[0-9]+@N[0-9]{2}\\s*)*$"}),
        param("lang", "language", {"type": "string", "enum": ["de-de", "en-us", "es-us", "fr-fr", "it-it", "ko-kr", "pt-br", "zh-hk"]}),
        param("limit", "items, 1-20", {"type": "integer", "minimum": 1, "maximum": 20, "default": 20})]),
    "/podcasts": feed_op("iTunes podcast search", "PodcastFeed", [
        param("term", "search words: 200 characters at most, and at least PODCAST_MIN_TERM_CHARS (default 2) after trimming; printable",
              {"type": "string", "minLength": 2, "maxLength": 200,
               "pattern": "^" + term_char + "*" + term_word_char + term_char + "*" + term_word_char + term_char + "*$"},
              required=True),
        param("limit", "items, 1-200", {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}),
        param("country", "ISO 3166-1 alpha-2", {"type": "string", "pattern": "^[A-Za-z]{2}$", "default": "us"}),
        param("explicit", "include explicit podcasts", {"type": "string", "enum": ["yes", "no"]})],
        {"400": err("invalid or missing parameter (term absent or blank: missing_parameter; shorter than PODCAST_MIN_TERM_CHARS: invalid_parameter)")}),
    "/podcasts/{id}": feed_op("One podcast by its iTunes collection id", "PodcastItem", [path_id(999999999999999999, "iTunes collection id", 1200361736)],
        {"400": err("invalid id"), "404": err("podcast_not_found: no podcast has this id")}),
    "/podcasts/{id}/episodes": feed_op("Episodes from a podcast's RSS feed", "EpisodeFeed", [
        path_id(999999999999999999, "iTunes collection id", 1200361736),
        param("limit", "items per page, 1-500", {"type": "integer", "minimum": 1, "maximum": 500, "default": 100}),
        param("since", "only episodes published after this time: RFC 3339 (2025-11-03T14:20:05Z) or Unix seconds",
              {"type": "string", "pattern": since_pattern}),
        param("cursor", "where the next page starts, as page.nextCursor gave it (with the same limit and since)",
              {"type": "string", "pattern": "^[A-Za-z0-9_-]{23}$"})],
        {"400": err("invalid parameter: id, limit, since, or a cursor this podcast's list did not give out (invalid_parameter)"),
         "404": err("unknown podcast (podcast_not_found) or no feed (feed_unavailable)")},
        extra_headers={"Link": {"schema": {"type": "string", "pattern": "^</podcasts/[0-9]+/episodes\\?[^<>]+>; rel=\"next\"$"},
                                "description": "RFC 8288: the next page (page.next), absent on the last page"}},
        description="Episodes in the feed's order, cut from one download and parse of the feed per refresh whatever the page size, "
                    "since or cursor: page.total counts the episodes that match, page.next (and Link: rel=\"next\") walks the rest."),
    "/podcasts/{id}/episodes/{episodeId}": feed_op("One episode, with its chapters and transcript on request", "EpisodeDetail", [
        path_id(999999999999999999, "iTunes collection id", 1580000009),
        {"name": "episodeId", "in": "path", "required": True, "example": "ct-json",
         "description": "the episode's id as /podcasts/{id}/episodes gives it, percent-encoded (at most 2048 bytes)",
         "schema": {"type": "string", "minLength": 1, "maxLength": 512}},
        param("include", "chapters, transcript or both, comma-separated", {"type": "string", "pattern": "^(chapters|transcript)(,(chapters|transcript))?$"})],
        {"400": err("invalid id, episodeId or include (invalid_parameter)"),
         "404": err("unknown podcast (podcast_not_found), no feed (feed_unavailable) or no episode with this id in the feed (episode_not_found)")},
        description="The episode as the list gives it, cut from the same per-feed data (no download of its own). With include, its chapters "
                    "(the podcast:chapters JSON file, else Podlove Simple Chapters in the feed) and its transcript (the best the feed offers: "
                    "WebVTT, then SubRip, JSON, HTML, plain text), each file fetched once and cached (CACHE_TTL_CHAPTERS, CACHE_TTL_TRANSCRIPTS). "
                    "A missing or unreadable file is null with an entry in problems, never a failed episode."),
    "/episodes": feed_op("A podcast library's episodes in one request", "EpisodeBatch", [
        param("podcasts", "comma-separated iTunes collection ids, 1-200 (repeats ignored)",
              {"type": "string", "pattern": "^" + ws + "*[1-9][0-9]{0,17}" + ws + "*(," + ws + "*[1-9][0-9]{0,17}" + ws + "*){0,199}$"}, required=True),
        param("limit", "items per page, 1-500", {"type": "integer", "minimum": 1, "maximum": 500, "default": 100}),
        param("since", "only episodes published after this time: RFC 3339 (2025-11-03T14:20:05Z) or Unix seconds",
              {"type": "string", "pattern": since_pattern}),
        param("cursor", "where the next page starts, as page.nextCursor gave it (with the same podcasts, limit and since)",
              {"type": "string", "pattern": "^[A-Za-z0-9_-]{23}$"})],
        {"400": err("podcasts missing (missing_parameter), an entry that is not an id, more than 200 ids, a bad limit or since, "
                    "or a cursor this list did not give out (invalid_parameter)")},
        extra_headers=dict(retry_after, Link={"schema": {"type": "string", "pattern": "^</episodes\\?[^<>]+>; rel=\"next\"$"},
                                              "description": "RFC 8288: the next page (page.next), absent on the last page"}),
        description="Episodes of every podcast asked, newest first across them (undated last), each with its podcastId, cut from the same "
                    "per-feed data as /podcasts/{id}/episodes. One entry per podcast in podcasts: ok, error (the code the single route "
                    "gives) or pending (not loaded by EPISODES_BATCH_DEADLINE_S; its fetch goes on, and Retry-After says when to ask again). "
                    "A broken feed never fails the batch. Revalidate with If-None-Match: an unchanged library is a 304."),
    "/loans": feed_op("Kiva's fundraising loans, filtered and ordered", "LoanFeed", [
        param("page", "page number", {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1}),
        param("limit", "items per page, 1-100", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}),
        repeatable("sector", "loans in any of these sectors: " + ", ".join(sorted(sectors)) + " (any case; also Kiva's numeric sector id)",
                   comma_list(sector_token), "retail,food"),
        repeatable("country", "loans in any of these countries, ISO 3166-1 alpha-2 (any case), at most 50 distinct codes in all",
                   comma_list("[A-Za-z]{2}", 50), "PE,KE"),
        param("gender", "borrower gender; nonbinary needs Kiva's GraphQL API (400 when KIVA_LOANS_URL is set)",
              {"type": "string", "enum": ["female", "male", "nonbinary"]}),
        param("sort", "order: newest (posted), expiring (soonest first), amountLeft, popularity",
              {"type": "string", "enum": ["newest", "expiring", "amountLeft", "popularity"], "default": "newest"})],
        {"400": err("invalid parameter: the message lists the allowed values")}, link_header,
        description="Pages are offsets into Kiva's live list (Kiva offers no cursor): pages fetched or cached at different times "
                    "can overlap or skip loans. Equivalent requests (order, case and repeats of sector/country aside) share a cache entry."),
    "/loans/{id}": feed_op("One Kiva loan, with its description", "LoanItem", [path_id(2147483647, "Kiva loan id", 2812300)],
        {"400": err("invalid id"), "404": err("loan_not_found: no loan has this id")}),
    "/images": {"get": {"summary": "A publisher's image, resized and re-encoded (IMAGE_PROXY_KEY set)",
        "description": "Use the URLs the API hands out (images maps of the rss source, img src in notesHtml): they are signed, and "
                       "nothing unsigned is fetched. The source is fetched like a feed (public addresses unless ALLOW_PRIVATE_FEED_HOSTS, "
                       "IMAGE_MAX_BYTES, the upstream deadline, a breaker per host, conditional refresh), resized to width w (height by "
                       "aspect ratio, at most 4w; never enlarged) with metadata dropped, and cached. The encoding follows Accept: WebP where "
                       "accepted, else AVIF where accepted, else JPEG (PNG for a transparent image); format overrides it.",
        "parameters": [
            param("url", "the source image, an absolute http(s) URL (at most 2048 bytes)", {"type": "string"}, required=True),
            param("w", "the width asked for", {"type": "integer", "enum": [60, 120, 300, 600, 1200]}, required=True),
            param("sig", "unpadded base64url HMAC-SHA256 of url under IMAGE_PROXY_KEY", {"type": "string", "pattern": "^[A-Za-z0-9_-]{43}$"}, required=True),
            param("format", "the encoding, instead of the one Accept selects", {"type": "string", "enum": ["auto", "webp", "avif", "jpeg", "png"]}),
            {"name": "Accept", "in": "header", "required": False, "schema": {"type": "string"}, "description": "image/webp or image/avif to get those"},
            {"name": "If-None-Match", "in": "header", "required": False, "schema": {"type": "string"}}],
        "responses": {
            "200": {"description": "the image", "headers": dict(cache_headers, Vary={"schema": {"const": "Accept"}, "description": "the encoding follows Accept"}),
                    "content": {t: {"schema": {"type": "string", "contentMediaType": t}} for t in ["image/webp", "image/avif", "image/jpeg", "image/png"]}},
            "304": {"description": "not modified (If-None-Match matched)", "headers": cache_headers},
            "400": err("url missing or not absolute http(s), w not on the ladder, or an unknown format (invalid_parameter)"),
            "403": err("bad_signature: sig is not url's signature under IMAGE_PROXY_KEY"),
            "404": err("not_found: the image proxy is off (IMAGE_PROXY_KEY unset)"),
            "415": err("unsupported_image_type: the source is not JPEG, PNG, WebP, GIF, HEIF or AVIF (SVG included)"),
            "422": err("image_too_large (more pixels than IMAGE_MAX_PIXELS), image_undecodable (damaged, truncated, lying) or image_timed_out"),
            "429": limited("client_rate_limited: this client made more uncached requests than CLIENT_MISS_RATE_PER_MIN; see Retry-After"),
            "502": err("the source could not be fetched (its host failed, answered an error, or is a private address)"),
            "503": limited("image_decoders_busy, or the publisher's circuit is open; see Retry-After"),
            "504": err("the source timed out"),
            "414": err("uri_too_long: the request line is longer than 8 KiB")}}},
    "/healthz": {"get": {"summary": "liveness", "responses": {"200": {"description": "serving", "content": {"application/json": {"schema": {"type": "object", "properties": {"status": {"const": "ok"}}}}}}}}},
    "/readyz": {"get": {"summary": "readiness", "responses": {
        "200": {"description": "ready", "content": {"application/json": {"schema": {"type": "object", "properties": {"status": {"const": "ready"}}}}}},
        "503": {"description": "draining", "headers": retry_after,
                "content": {"application/json": {"schema": {"type": "object", "properties": {"status": {"const": "draining"}}}}}}}}},
    "/metrics": {"get": {"summary": "Prometheus metrics", "responses": {"200": {"description": "text exposition format", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
    "/demo": {"get": {"summary": "the built-in demo page: the photo browser, podcast client and loans list on this API (DEMO_PAGE)",
                      "responses": {"200": {"description": "the page (its script and stylesheet are /demo/app.js and /demo/app.css)",
                                            "content": {"text/html": {"schema": {"type": "string"}}}},
                                    "304": {"description": "not modified (If-None-Match matched)"}}}},
    "/openapi.json": {"get": {"summary": "this document", "responses": {"200": {"description": "OpenAPI 3.1", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
  },
  "components": {"schemas": {
    "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object", "required": ["status", "code", "message"],
              "properties": {"status": {"type": "integer"}, "code": {"type": "string"}, "message": {"type": "string"}}}}},
    "Page": {"type": "object", "additionalProperties": False, "required": ["number", "size", "total", "pages", "first", "prev", "next", "last"],
             "properties": dict({k: {"type": "integer", "minimum": 0} for k in ["number", "size", "total", "pages"]},
                                **{k: dict(nullable("string"), pattern="^/loans\\?page=[1-9][0-9]*&limit=[1-9][0-9]*(&.*)?$", description=d) for k, d in [
                                    ("first", "path and query of page 1 of the same request"), ("prev", "the page before (null on page 1)"),
                                    ("next", "the page after (null on the last page)"), ("last", "the last page (page 1 when there are none)")]})},
    "CursorPage": {"type": "object", "additionalProperties": False, "required": ["size", "total", "next", "nextCursor"],
                   "description": "a page of a list walked with a cursor: nothing repeated or skipped while the list does not change",
                   "properties": {"size": {"type": "integer", "minimum": 1, "description": "the page size asked (limit)"},
                                  "total": {"type": "integer", "minimum": 0, "description": "items of the whole list that match (since)"},
                                  "next": dict(nullable("string"), pattern="^/podcasts/[0-9]+/episodes\\?limit=[0-9]+(&since=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?&cursor=[A-Za-z0-9_-]{23}$",
                                               description="path and query of the next page (as in Link: rel=\"next\"); null on the last page"),
                                  "nextCursor": dict(nullable("string"), pattern="^[A-Za-z0-9_-]{23}$", description="the opaque cursor in next")}},
    "ImageSize": {"type": "object", "additionalProperties": False, "required": ["url", "width", "height", "maxEdge"],
                  "properties": {"url": {"type": "string"}, "width": dict(nullable("integer"), minimum=1, description="pixels; null when the upstream does not fix it"),
                                 "height": dict(nullable("integer"), minimum=1, description="pixels; null when the upstream does not fix it"),
                                 "maxEdge": {"type": "integer", "minimum": 1, "description": "the longest edge is at most this many pixels"}}},
    "PhotoImages": images({"s": (75, 75, 75, "75x75 square"), "q": (150, 150, 150, "150x150 square"), "t": (None, None, 100, "longest edge 100"),
                           "m": (None, None, 240, "longest edge 240"), "n": (None, None, 320, "longest edge 320"), "z": (None, None, 640, "longest edge 640"),
                           "b": (None, None, 1024, "longest edge 1024")}, "Flickr's size suffixes"),
    "ProxiedImages": images({str(px): (px, None, px, "%d px wide, through /images" % px) for px in (60, 120, 300, 600)},
                            "the image through FeedProxy's image proxy (/images), signed; null when IMAGE_PROXY_KEY is unset"),
    "PodcastImages": images({str(px): (px, px, px, "%dx%d artwork" % (px, px)) for px in (30, 60, 100, 600)}, "iTunes artwork sizes"),
    "LoanImages": images({"w80h80": (80, 80, 80, "80x80"), "w480h300": (480, 300, 480, "480x300"), "w800": (800, None, 800, "800 wide, height as the photo")},
                         "Kiva's image service presets"),
    "Photo": {"type": "object", "additionalProperties": False, "required": ["id", "title", "link", "imageUrl", "largeImageUrl", "images", "author", "authorId", "tags", "published", "taken", "description"],
              "properties": {"id": nullable("string"), "title": nullable("string"), "link": nullable("string"), "imageUrl": nullable("string"),
                             "largeImageUrl": nullable("string"), "images": {"oneOf": [ref("PhotoImages"), {"type": "null"}]},
                             "author": nullable("string"), "authorId": nullable("string"),
                             "tags": {"type": "array", "items": {"type": "string"}}, "published": ts, "taken": ts, "description": nullable("string")}},
    "Podcast": {"type": "object", "additionalProperties": False, "required": ["id", "title", "author", "feedUrl", "artworkUrl", "images", "genres", "primaryGenre", "episodeCount", "releaseDate", "country", "explicit", "storeUrl"],
              "properties": {"id": {"type": "integer"}, "title": nullable("string"), "author": nullable("string"), "feedUrl": nullable("string"),
                             "artworkUrl": nullable("string"), "images": {"oneOf": [ref("PodcastImages"), {"type": "null"}]},
                             "genres": {"type": "array", "items": {"type": "string"}}, "primaryGenre": nullable("string"),
                             "episodeCount": nullable("integer"), "releaseDate": ts, "country": nullable("string"), "explicit": nullable("boolean"), "storeUrl": nullable("string")}},
    "Loan": {"type": "object", "additionalProperties": False, "required": ["id", "name", "use", "amount", "fundedAmount", "status", "country", "countryCode", "town", "sector", "activity", "imageUrl", "images", "postedAt", "expiresAt", "borrowerCount", "lenderCount", "partnerName", "tags", "description"],
              "properties": {"id": {"type": "integer"}, "name": nullable("string"), "use": nullable("string"), "amount": nullable("number"), "fundedAmount": nullable("number"),
                             "status": nullable("string"), "country": nullable("string"), "countryCode": nullable("string"), "town": nullable("string"),
                             "sector": nullable("string"), "activity": nullable("string"), "imageUrl": nullable("string"),
                             "images": {"oneOf": [ref("LoanImages"), {"type": "null"}]}, "postedAt": ts, "expiresAt": ts,
                             "borrowerCount": nullable("integer"), "lenderCount": nullable("integer"), "partnerName": nullable("string"),
                             "tags": {"type": "array", "items": {"type": "string"}},
                             "description": dict(nullable("string"), description="the borrower's story as plain text; only in GET /loans/{id}, null in lists")}},
    "Episode": {"type": "object", "additionalProperties": False, "required": ["id", "title", "published", "audioUrl", "audioType", "audioBytes", "duration", "episode", "season", "explicit", "imageUrl", "images", "summary", "notesHtml", "link",
                                                                     "episodeType", "seasonName", "transcripts", "chapters", "persons", "soundbites"],
              "properties": {"id": nullable("string"), "title": nullable("string"), "published": ts, "audioUrl": nullable("string"), "audioType": nullable("string"),
                             "audioBytes": nullable("integer"), "duration": nullable("integer"), "episode": nullable("integer"), "season": nullable("integer"),
                             "explicit": nullable("boolean"), "imageUrl": nullable("string"),
                             "images": {"oneOf": [ref("ProxiedImages"), {"type": "null"}]}, "summary": nullable("string"),
                             "notesHtml": dict(nullable("string"), description="the show notes as sanitized HTML (content:encoded, else the description): "
                                               "only the elements and attributes docs/API.md lists, every href/src absolute http(s) (mailto: for links); "
                                               "with the image proxy on, img src is a signed /images URL at 600 px"),
                             "link": nullable("string"),
                             "episodeType": {"type": ["string", "null"], "enum": ["full", "trailer", "bonus", None], "description": "itunes:episodeType"},
                             "seasonName": dict(nullable("string"), description="podcast:season's name"),
                             "transcripts": {"type": "array", "items": ref("Transcript"), "description": "podcast:transcript, at most 50"},
                             "chapters": {"oneOf": [ref("Chapters"), {"type": "null"}], "description": "podcast:chapters"},
                             "persons": {"type": "array", "items": ref("Person"), "description": "podcast:person, at most 50"},
                             "soundbites": {"type": "array", "items": ref("Soundbite"), "description": "podcast:soundbite, at most 50"}}},
    "Transcript": {"type": "object", "additionalProperties": False, "required": ["url", "type", "language", "rel"],
                   "properties": {"url": http_url, "type": nullable("string"), "language": nullable("string"), "rel": nullable("string")}},
    "Chapters": {"type": "object", "additionalProperties": False, "required": ["url", "type"],
                 "properties": {"url": http_url, "type": nullable("string")}},
    "Person": {"type": "object", "additionalProperties": False, "required": ["name", "role", "group", "href", "img"],
               "description": "podcast:person (role defaults to host, group to cast)",
               "properties": {"name": {"type": "string"}, "role": {"type": "string"}, "group": {"type": "string"},
                              "href": {"oneOf": [http_url, {"type": "null"}]}, "img": {"oneOf": [http_url, {"type": "null"}]}}},
    "Soundbite": {"type": "object", "additionalProperties": False, "required": ["start", "duration", "title"],
                  "properties": {"start": {"type": "number", "minimum": 0}, "duration": {"type": "number", "minimum": 0}, "title": nullable("string")}},
    "Funding": {"type": "object", "additionalProperties": False, "required": ["url", "text"],
                "properties": {"url": http_url, "text": nullable("string")}},
    "PhotoFeed": envelope(ref("Photo"), "flickr", False),
    "PodcastFeed": envelope(ref("Podcast"), "itunes", False),
    # In lists a loan's description is always null (the story is in GET /loans/{id}).
    "LoanFeed": envelope({"allOf": [ref("Loan")], "properties": {"description": {"type": "null"}}}, "kiva", "Page"),
    "EpisodeFeed": envelope(ref("Episode"), "rss", "CursorPage", channel=[
        ("description", "the channel's description (else itunes:summary, Atom subtitle) as plain text"),
        ("author", "itunes:author, else managingEditor"), ("imageUrl", "the channel's image"),
        ("link", "the channel's web page"), ("language", "the channel's language, as the feed writes it"),
        ("podcastGuid", "podcast:guid")], extra={
        "images": {"oneOf": [ref("ProxiedImages"), {"type": "null"}], "description": "imageUrl through the image proxy"},
        "locked": {"type": ["boolean", "null"], "description": "podcast:locked"},
        "funding": {"type": "array", "items": ref("Funding"), "description": "podcast:funding, at most 50"},
        "persons": {"type": "array", "items": ref("Person"), "description": "the channel's podcast:person, at most 50"},
        "newFeedUrl": {"oneOf": [http_url, {"type": "null"}], "description": "itunes:new-feed-url"}}),
    "EpisodeBatch": {"type": "object", "additionalProperties": False, "required": ["source", "count", "items", "podcasts", "page"], "properties": {
        "source": {"const": "rss"}, "count": {"type": "integer", "minimum": 0},
        "items": {"type": "array", "items": ref("BatchEpisode")},
        "podcasts": {"type": "array", "items": ref("BatchPodcast")},
        "page": ref("BatchPage")}},
    "BatchPodcast": {"type": "object", "additionalProperties": False, "required": ["id", "status", "title", "updated", "episodeCount", "error"],
                     "properties": {"id": {"type": "integer", "minimum": 1}, "status": {"enum": ["ok", "error", "pending"]},
                                    "title": nullable("string"), "updated": ts, "episodeCount": dict(nullable("integer"), minimum=0),
                                    "error": {"oneOf": [{"type": "null"}, {"type": "object", "additionalProperties": False, "required": ["code", "message"],
                                                                           "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}]}}},
    "BatchPage": {"type": "object", "additionalProperties": False, "required": ["size", "total", "next", "nextCursor"],
                  "properties": {"size": {"type": "integer", "minimum": 1}, "total": {"type": "integer", "minimum": 0},
                                 "next": dict(nullable("string"), pattern="^/episodes\\?podcasts=[0-9,]+&limit=[0-9]+(&since=[0-9TZ:-]+)?&cursor=[A-Za-z0-9_-]{23}$"),
                                 "nextCursor": dict(nullable("string"), pattern="^[A-Za-z0-9_-]{23}$")}},
    "EpisodeDetail": {"type": "object", "additionalProperties": False, "required": ["source", "podcastId", "item", "chapters", "transcript", "problems"],
        "properties": {"source": {"const": "rss"}, "podcastId": {"type": "integer", "minimum": 1}, "item": ref("Episode"),
                       "chapters": {"oneOf": [{"type": "array", "items": ref("ChapterMark"), "maxItems": 1000}, {"type": "null"}],
                                    "description": "sorted by start; null when not asked for (include) or the episode has none"},
                       "transcript": {"oneOf": [ref("EpisodeTranscript"), {"type": "null"}],
                                      "description": "null when not asked for (include), the episode has none, or none could be read"},
                       "problems": {"type": "array", "items": ref("EpisodePartProblem"), "description": "why a part asked for is absent"}}},
    "ChapterMark": {"type": "object", "additionalProperties": False, "required": ["start", "end", "title", "url", "imageUrl", "toc"],
                    "description": "times in seconds within the episode; end is the stated end, else the next table-of-contents chapter's start, else the episode's end",
                    "properties": {"start": {"type": "number", "minimum": 0}, "end": dict(nullable("number"), minimum=0), "title": nullable("string"),
                                   "url": {"oneOf": [http_url, {"type": "null"}]}, "imageUrl": {"oneOf": [http_url, {"type": "null"}]},
                                   "toc": {"type": "boolean", "description": "false: not listed in a table of contents"}}},
    "EpisodeTranscript": {"type": "object", "additionalProperties": False, "required": ["url", "type", "language", "truncated", "segments"],
                          "properties": {"url": http_url,
                                         "type": {"enum": ["text/vtt", "application/x-subrip", "application/json", "text/html", "text/plain"]},
                                         "language": nullable("string"),
                                         "truncated": {"type": "boolean", "description": "more than 20,000 segments or 1 MiB of text: the rest was cut"},
                                         "segments": {"type": "array", "maxItems": 20000, "items": ref("TranscriptSegment")}}},
    "TranscriptSegment": {"type": "object", "additionalProperties": False, "required": ["start", "end", "speaker", "text"],
                          "properties": {"start": dict(nullable("number"), minimum=0, description="seconds; null in an untimed transcript"),
                                         "end": dict(nullable("number"), minimum=0), "speaker": nullable("string"),
                                         "text": {"type": "string", "description": "plain text"}}},
    "EpisodePartProblem": {"type": "object", "additionalProperties": False, "required": ["part", "code", "message"],
                           "properties": {"part": {"enum": ["chapters", "transcript"]}, "code": {"type": "string"}, "message": {"type": "string"}}},
    "PodcastItem": item_envelope("Podcast", "itunes"),
    "LoanItem": item_envelope("Loan", "kiva"),
  }},
}
# Every operation's id and tag (what a generated client names its calls and groups them by),
# read from where the routes are declared: each upstream's declaration in
# Sources/Service/Catalog/ and OperationalRoutes, as RouteDeclaration(.name, operation: "id", tag: .tag),
# beside the RouteName each route's path is declared by.
import re
service = root / "Sources" / "Service"
route_paths = {}
tag_names = dict(re.findall(r'(\w+) = "(\w+)"', re.search(r"enum OperationTag[^{]*\{([^}]*)\}", (service / "Routes" / "RouteDeclaration.swift").read_text()).group(1)))
declared = []
for source in sorted(service.rglob("*.swift")):
    text = source.read_text()
    for name, path in re.findall(r'static let (\w+) = RouteName\("([^"]+)"', text):
        assert name not in route_paths, "two routes named " + name
        route_paths[name] = re.sub(r":(\w+)", r"{\1}", path)
    declared += re.findall(r'RouteDeclaration\(\s*\.(\w+),\s*operation:\s*"(\w+)",\s*tag:\s*\.(\w+)', text)
unknown = {tag for _, _, tag in declared if tag not in tag_names} | {route for route, _, _ in declared if route not in route_paths}
assert not unknown, "routes or tags declared nowhere: " + str(unknown)
operations = {route_paths[route]: (operation_id, tag_names[tag]) for route, operation_id, tag in declared}
assert len(operations) == len(declared), "a route has two operations: " + str(declared)
assert len({i for i, _ in operations.values()}) == len(operations), "two routes share an operationId"
assert set(operations) == set(doc["paths"]), "every path needs an operationId and a tag: " + str(set(doc["paths"]) ^ set(operations))
for path, (operation_id, tag) in operations.items():
    doc["paths"][path]["get"].update(operationId=operation_id, tags=[tag])
# The tags in OperationTag's order, each with its description here.
tag_descriptions = {"Photos": "Flickr public photos",
                    "Podcasts": "iTunes search and lookup, each podcast's own feed, a library's episodes",
                    "Loans": "Kiva's fundraising loans",
                    "Images": "publishers' artwork, resized and cached behind signed URLs",
                    "Operations": "index, health, readiness, metrics, this document, the demo page"}
assert set(tag_descriptions) == set(tag_names.values()), "every OperationTag needs a description: " + str(set(tag_descriptions) ^ set(tag_names.values()))
doc["tags"] = [{"name": name, "description": tag_descriptions[name]} for name in tag_names.values()]

# A batch's episode: the podcast it belongs to, then the fields of an Episode.
schemas = doc["components"]["schemas"]
schemas["BatchEpisode"] = dict(schemas["Episode"], required=["podcastId"] + schemas["Episode"]["required"],
                               properties=dict({"podcastId": {"type": "integer", "minimum": 1}}, **schemas["Episode"]["properties"]))
def refs(node):
    if isinstance(node, dict):
        yield from ([node["$ref"]] if "$ref" in node else [])
        for value in node.values(): yield from refs(value)
    elif isinstance(node, list):
        for value in node: yield from refs(value)
dangling = {r for r in refs(doc) if r.rsplit("/", 1)[-1] not in doc["components"]["schemas"]}
assert not dangling, "schemas referred to but not defined: " + str(dangling)
text = json.dumps(doc, separators=(",", ":"), sort_keys=True)
# The Swift file holds the text in a #"""…"""# raw string: nothing in it may end it or start an escape.
assert '"""#' not in text and "\\#" not in text, "the document cannot be embedded in a Swift raw string"
def write(path, content):
    """Only when it changes: a rewritten Swift file rebuilds the modules that depend on it."""
    if not path.exists() or path.read_text() != content:
        path.write_text(content)
write(root / "docs" / "openapi.json", json.dumps(doc, indent=2, sort_keys=True) + "\n")
write(root / "Sources" / "Service" / "Routes" / "OpenAPIDocument.swift",
      "// Generated by scripts/generate/openapi.py from the same description as docs/openapi.json. Do not edit.\n"
      "enum OpenAPIDocument {\n    static let json = #\"\"\"\n        " + text + "\n        \"\"\"#\n}\n")
