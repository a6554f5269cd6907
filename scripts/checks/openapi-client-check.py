#!/usr/bin/env python3
"""A client generated from /openapi.json calls every route (run by `make api-check`).

Usage: python3 scripts/checks/openapi-client-check.py path/to/feedproxy

openapi-python-client (pip, installed when missing) generates a typed Python client from
docs/openapi.json; its calls are named by operationId and grouped by tag. Against
`feedproxy --fixtures` on loopback, every operation is called once through it, and each
answer must parse into the generated model (JSON routes) or at least arrive (text routes);
one error answer must parse into the Error model.
"""
import importlib
import os
import urllib.parse
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from loopback import free_port, start_feedproxy, stop  # noqa: E402  (the scripts' shared helpers)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# operationId (as the generator names its module) → (tag module, arguments, the model class the answer parses into).
CALLS = [
    ("photos", "list_photos", {"tags": "sunset"}, "PhotoFeed"),
    ("podcasts", "search_podcasts", {"term": "swift"}, "PodcastFeed"),
    ("podcasts", "get_podcast", {"id": 1200361736}, "PodcastItem"),
    ("podcasts", "list_podcast_episodes", {"id": 1200361736, "limit": 2}, "EpisodeFeed"),
    ("podcasts", "list_library_episodes", {"podcasts": "1200361736,1526489823", "limit": 3}, "EpisodeBatch"),
    ("loans", "list_loans", {"limit": 5}, "LoanFeed"),
    ("loans", "get_loan", {"id": 2812304}, "LoanItem"),
    ("operations", "get_index", {}, None),
    ("operations", "get_health", {}, None),
    ("operations", "get_readiness", {}, None),
    ("operations", "get_metrics", {}, None),
    ("operations", "get_open_api_document", {}, None),
    ("operations", "get_demo_page", {}, None),
]


def main():
    try:
        importlib.import_module("openapi_python_client")
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "openapi-python-client"], check=True)
    work = tempfile.mkdtemp(prefix="feedproxy-client-")
    config = os.path.join(work, "config.yaml")
    with open(config, "w") as f:
        f.write("post_hooks: []\n")
    package = os.path.join(work, "feedproxy_client")
    subprocess.run([sys.executable, "-m", "openapi_python_client", "generate", "--path", os.path.join(ROOT, "docs", "openapi.json"),
                    "--output-path", package, "--config", config, "--meta", "none"], check=True, stdout=subprocess.DEVNULL)
    sys.path.insert(0, work)
    client_module = importlib.import_module("feedproxy_client")
    models = importlib.import_module("feedproxy_client.models")
    port = free_port()
    proc = start_feedproxy(sys.argv[1], port, dict(os.environ, LOG_LEVEL="warn", CLIENT_MISS_RATE_PER_MIN="0", IMAGE_PROXY_KEY="client-check"))
    failures = 0
    try:
        client = client_module.Client(base_url=f"http://127.0.0.1:{port}", raise_on_unexpected_status=True)
        tags = set()
        for tag, operation, arguments, model in CALLS:
            module = importlib.import_module(f"feedproxy_client.api.{tag}.{operation}")
            tags.add(tag)
            response = module.sync_detailed(client=client, **arguments)
            parsed = response.parsed
            ok = response.status_code == 200 and (model is None or isinstance(parsed, getattr(models, model)))
            failures += not ok
            print(f"  {'ok  ' if ok else 'FAIL'} {tag}.{operation}({', '.join(f'{k}={v!r}' for k, v in arguments.items())}): "
                  f"{response.status_code.value if hasattr(response.status_code, 'value') else response.status_code}, "
                  f"{type(parsed).__name__ if parsed is not None else 'no model'}")
        # An image, by the signed URL an episode list hands out.
        episodes = importlib.import_module("feedproxy_client.api.podcasts.list_podcast_episodes").sync_detailed(client=client, id=1200361736, limit=1)
        link = urllib.parse.urlsplit(episodes.parsed.items[0].images.field_120.url)
        query = dict(urllib.parse.parse_qsl(link.query))
        # An image body has no model: the generated client hands back its bytes when told not to raise.
        raw = client_module.Client(base_url=f"http://127.0.0.1:{port}", raise_on_unexpected_status=False)
        image = importlib.import_module("feedproxy_client.api.images.get_image").sync_detailed(
            client=raw, url_query=query["url"], w=models.GetImageW(int(query["w"])), sig=query["sig"], accept="image/webp")
        ok = image.status_code == 200 and image.headers.get("content-type", "").startswith("image/") and len(image.content) > 0
        failures += not ok
        tags.add("images")
        print(f"  {'ok  ' if ok else 'FAIL'} images.get_image(url=…, w={query['w']}, sig=…): {image.status_code}, "
              f"{image.headers.get('content-type')}, {len(image.content)} bytes")
        error = importlib.import_module("feedproxy_client.api.podcasts.list_library_episodes").sync_detailed(client=client, podcasts="12,abc")
        ok = isinstance(error.parsed, models.Error) and error.status_code == 400
        failures += not ok
        print(f"  {'ok  ' if ok else 'FAIL'} a bad request parses into Error: {type(error.parsed).__name__}")
        print(f"openapi client: {len(CALLS) + 1} operations in {len(tags)} tags called through the generated client, {failures} failed")
        return 1 if failures else 0
    finally:
        stop(proc)


if __name__ == "__main__":
    sys.exit(main())
