#!/usr/bin/env python3
"""A request for every upstream route, from the API document (a served /openapi.json or a file),
so the scripts that smoke a running service need no list of routes or upstreams.

Prints one line per GET operation whose 200 answer names its source
(`"source": {"const": …}` in its schema), in path order: the path with its parameters filled,
a tab, the source. Path parameters take their `example`; required query parameters their
example, default, first enum value or minimum, else the first of a few plain words their
schema allows (length and pattern); optional ones are left out. An operation whose required
parameters cannot be filled that way (a signature, say) is left out and named on stderr.

Usage: scripts/lib/smoke-requests.py URL-or-FILE
"""
import json
import re
import sys
import urllib.parse
import urllib.request

WORDS = ("feedproxy", "aa", "1")


def load(where: str) -> dict:
    if where.startswith(("http://", "https://")):
        with urllib.request.urlopen(where, timeout=10) as r:
            return json.load(r)
    with open(where, encoding="utf-8") as f:
        return json.load(f)


def value(parameter: dict):
    schema = parameter.get("schema", {})
    for key in ("example", "default"):
        if key in parameter:
            return parameter[key]
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("type") == "integer" and "minimum" in schema:
        return schema["minimum"]
    if schema.get("type") == "string":
        for word in WORDS:
            if schema.get("minLength", 0) <= len(word) <= schema.get("maxLength", len(word)) and (
                "pattern" not in schema or re.search(schema["pattern"], word)
            ):
                return word
    return None


def requests(document: dict):
    schemas = document.get("components", {}).get("schemas", {})
    for path, item in sorted(document.get("paths", {}).items()):
        get = item.get("get", {})
        answer = get.get("responses", {}).get("200", {}).get("content", {}).get("application/json", {})
        ref = answer.get("schema", {}).get("$ref", "")
        source = schemas.get(ref.rsplit("/", 1)[-1], {}).get("properties", {}).get("source", {}).get("const")
        if not source:
            continue
        query, filled, missing = [], path, []
        for p in get.get("parameters", []):
            if p.get("in") == "path" or (p.get("in") == "query" and p.get("required")):
                v = value(p)
                if v is None:
                    missing.append(p["name"])
                elif p["in"] == "path":
                    filled = filled.replace("{" + p["name"] + "}", urllib.parse.quote(str(v), safe=""))
                else:
                    query.append((p["name"], str(v)))
        if missing:
            print(f"smoke-requests: {path} left out (no value for {', '.join(missing)})", file=sys.stderr)
            continue
        yield filled + ("?" + urllib.parse.urlencode(query) if query else ""), source


if __name__ == "__main__":
    for request, source in requests(load(sys.argv[1])):
        print(f"{request}\t{source}")
