#!/usr/bin/env python3
"""Writes docs/openapi.json and Sources/Service/Routes/OpenAPIDocument.swift from one description.
Run after changing the API: python3 scripts/openapi.py"""
import json, pathlib

root = pathlib.Path(__file__).resolve().parent.parent
nullable = lambda t: {"type": [t, "null"]}
ts = {"type": ["string", "null"], "format": "date-time", "description": "ISO-8601 in UTC, e.g. 2025-11-03T14:20:05Z"}

def envelope(item_ref, source, paged):
    return {"type": "object", "required": ["source", "title", "updated", "count", "items", "page"], "additionalProperties": False,
            "properties": {"source": {"const": source}, "title": nullable("string"), "updated": ts, "count": {"type": "integer", "minimum": 0},
                           "items": {"type": "array", "items": {"$ref": item_ref}},
                           "page": {"oneOf": [{"$ref": "#/components/schemas/Page"}, {"type": "null"}]} if paged else {"type": "null"}}}

def param(name, desc, schema, required=False):
    return {"name": name, "in": "query", "required": required, "description": desc, "schema": schema}

def err(desc):
    return {"description": desc, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}

cache_headers = {h: {"schema": {"type": "string"}, "description": d} for h, d in [
    ("ETag", "strong validator of this representation"), ("Cache-Control", "public, max-age, stale-while-revalidate, stale-if-error"),
    ("Age", "seconds since the entry was fetched"), ("X-Cache", "HIT, MISS or STALE"), ("X-Request-ID", "the client's id or a generated one")]}

retry_after = {"Retry-After": {"schema": {"type": "string", "pattern": "^[0-9]+$"}, "description": "seconds after which a retry makes sense"}}

def limited(desc):
    return dict(err(desc), headers=retry_after)

def feed_op(summary, schema, params, extra_errors=None):
    responses = {
        "200": {"description": "the feed", "headers": cache_headers, "content": {"application/json": {"schema": {"$ref": schema}}}},
        "304": {"description": "not modified (If-None-Match matched)", "headers": cache_headers},
        "400": err("invalid or missing parameter"),
        "502": err("the upstream failed or answered something unreadable"),
        "429": limited("client_rate_limited: this client made more uncached (upstream-costing) requests than its share, CLIENT_MISS_RATE_PER_MIN; see Retry-After"),
        "503": limited("the upstream is rate limited (its queue is full or the wait would be too long) or its circuit is open; see Retry-After"),
        "504": err("the upstream timed out"),
    }
    responses.update(extra_errors or {})
    return {"get": {"summary": summary, "parameters": params + [
        {"name": "If-None-Match", "in": "header", "required": False, "schema": {"type": "string"}},
        {"name": "X-Request-ID", "in": "header", "required": False, "schema": {"type": "string"},
         "description": "echoed back when it is 1-128 characters of A-Z a-z 0-9 . _ : -, otherwise replaced by a generated id"},
        {"name": "X-Forwarded-For", "in": "header", "required": False, "schema": {"type": "string"},
         "description": "names the client (for its miss quota and fair share) only when the connecting peer is in TRUSTED_PROXIES; otherwise ignored"}],
        "responses": responses}}

doc = {
  "openapi": "3.1.0",
  "info": {"title": "FeedProxy", "version": "1.0.0",
           "description": "Flickr public photos, iTunes podcast search and Kiva loans as one small, typed, cached JSON API."},
  "servers": [{"url": "http://localhost:8080"}],
  "paths": {
    "/photos": feed_op("Flickr public photos", "#/components/schemas/PhotoFeed", [
        param("tags", "comma-separated tags (at most 20, each at most 100 printable characters)", {"type": "string", "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"}),
        param("tagmode", "all tags or any", {"type": "string", "enum": ["all", "any"]}),
        param("id", "a Flickr user id", {"type": "string", "pattern": "^\\s*[0-9]+@N[0-9]{2}\\s*$"}),
        param("ids", "comma-separated Flickr user ids (at most 20)", {"type": "string", "pattern": "^\\s*[0-9]+@N[0-9]{2}\\s*(,\\s*[0-9]+@N[0-9]{2}\\s*)*$"}),
        param("lang", "language", {"type": "string", "enum": ["de-de", "en-us", "es-us", "fr-fr", "it-it", "ko-kr", "pt-br", "zh-hk"]}),
        param("limit", "items, 1-20", {"type": "integer", "minimum": 1, "maximum": 20, "default": 20})]),
    "/podcasts": feed_op("iTunes podcast search", "#/components/schemas/PodcastFeed", [
        param("term", "search words, 1-200 printable characters", {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$"}, required=True),
        param("limit", "items, 1-200", {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}),
        param("country", "ISO 3166-1 alpha-2", {"type": "string", "pattern": "^[A-Za-z]{2}$", "default": "us"}),
        param("explicit", "include explicit podcasts", {"type": "string", "enum": ["yes", "no"]})]),
    "/podcasts/{id}/episodes": feed_op("Episodes from a podcast's RSS feed", "#/components/schemas/EpisodeFeed", [
        {"name": "id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1, "maximum": 999999999999999999}},
        param("limit", "items, 1-500", {"type": "integer", "minimum": 1, "maximum": 500, "default": 100})],
        {"404": err("unknown podcast (podcast_not_found) or no feed (feed_unavailable)")}),
    "/loans": feed_op("Kiva's newest fundraising loans", "#/components/schemas/LoanFeed", [
        param("page", "page number", {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1}),
        param("limit", "items per page, 1-100", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20})]),
    "/healthz": {"get": {"summary": "liveness", "responses": {"200": {"description": "serving", "content": {"application/json": {"schema": {"type": "object", "properties": {"status": {"const": "ok"}}}}}}}}},
    "/readyz": {"get": {"summary": "readiness", "responses": {
        "200": {"description": "ready", "content": {"application/json": {"schema": {"type": "object", "properties": {"status": {"const": "ready"}}}}}},
        "503": {"description": "draining", "content": {"application/json": {"schema": {"type": "object", "properties": {"status": {"const": "draining"}}}}}}}}},
    "/metrics": {"get": {"summary": "Prometheus metrics", "responses": {"200": {"description": "text exposition format", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
    "/openapi.json": {"get": {"summary": "this document", "responses": {"200": {"description": "OpenAPI 3.1", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
  },
  "components": {"schemas": {
    "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object", "required": ["status", "code", "message"],
              "properties": {"status": {"type": "integer"}, "code": {"type": "string"}, "message": {"type": "string"}}}}},
    "Page": {"type": "object", "required": ["number", "size", "total", "pages"], "properties": {k: {"type": "integer", "minimum": 0} for k in ["number", "size", "total", "pages"]}},
    "Photo": {"type": "object", "additionalProperties": False, "required": ["id", "title", "link", "imageUrl", "largeImageUrl", "author", "authorId", "tags", "published", "taken", "description"],
              "properties": {"id": nullable("string"), "title": nullable("string"), "link": nullable("string"), "imageUrl": nullable("string"),
                             "largeImageUrl": nullable("string"), "author": nullable("string"), "authorId": nullable("string"),
                             "tags": {"type": "array", "items": {"type": "string"}}, "published": ts, "taken": ts, "description": nullable("string")}},
    "Podcast": {"type": "object", "additionalProperties": False, "required": ["id", "title", "author", "feedUrl", "artworkUrl", "genres", "primaryGenre", "episodeCount", "releaseDate", "country", "explicit", "storeUrl"],
              "properties": {"id": {"type": "integer"}, "title": nullable("string"), "author": nullable("string"), "feedUrl": nullable("string"),
                             "artworkUrl": nullable("string"), "genres": {"type": "array", "items": {"type": "string"}}, "primaryGenre": nullable("string"),
                             "episodeCount": nullable("integer"), "releaseDate": ts, "country": nullable("string"), "explicit": nullable("boolean"), "storeUrl": nullable("string")}},
    "Loan": {"type": "object", "additionalProperties": False, "required": ["id", "name", "use", "amount", "fundedAmount", "status", "country", "countryCode", "town", "sector", "activity", "imageUrl", "postedAt", "expiresAt", "borrowerCount", "lenderCount", "partnerName", "tags"],
              "properties": {"id": {"type": "integer"}, "name": nullable("string"), "use": nullable("string"), "amount": nullable("number"), "fundedAmount": nullable("number"),
                             "status": nullable("string"), "country": nullable("string"), "countryCode": nullable("string"), "town": nullable("string"),
                             "sector": nullable("string"), "activity": nullable("string"), "imageUrl": nullable("string"), "postedAt": ts, "expiresAt": ts,
                             "borrowerCount": nullable("integer"), "lenderCount": nullable("integer"), "partnerName": nullable("string"),
                             "tags": {"type": "array", "items": {"type": "string"}}}},
    "Episode": {"type": "object", "additionalProperties": False, "required": ["id", "title", "published", "audioUrl", "audioType", "audioBytes", "duration", "episode", "season", "explicit", "imageUrl", "summary", "link"],
              "properties": {"id": nullable("string"), "title": nullable("string"), "published": ts, "audioUrl": nullable("string"), "audioType": nullable("string"),
                             "audioBytes": nullable("integer"), "duration": nullable("integer"), "episode": nullable("integer"), "season": nullable("integer"),
                             "explicit": nullable("boolean"), "imageUrl": nullable("string"), "summary": nullable("string"), "link": nullable("string")}},
    "PhotoFeed": envelope("#/components/schemas/Photo", "flickr", False),
    "PodcastFeed": envelope("#/components/schemas/Podcast", "itunes", False),
    "LoanFeed": envelope("#/components/schemas/Loan", "kiva", True),
    "EpisodeFeed": envelope("#/components/schemas/Episode", "rss", False),
  }},
}
text = json.dumps(doc, separators=(",", ":"), sort_keys=True)
(root / "docs" / "openapi.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
(root / "Sources" / "Service" / "Routes" / "OpenAPIDocument.swift").write_text(
    "// Generated by scripts/openapi.py from the same description as docs/openapi.json. Do not edit.\n"
    "enum OpenAPIDocument {\n    static let json = #\"\"\"\n        " + text + "\n        \"\"\"#\n}\n")
