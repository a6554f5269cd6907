#!/usr/bin/env python3
"""The built-in demo page (`GET /demo`) in a real browser: Chromium driven by Playwright.

Usage: FEEDPROXY_BIN=path/to/feedproxy python3 scripts/tests/demo-test.py [--screenshots]
(run by `make test`; --screenshots also writes docs/demo-{photos,podcasts,library,loans}.png)

Against `feedproxy --fixtures` (offline: the upstream CDNs' images may not load, their alt
text stands in), each view found by its roles and labels:
  photos: the grid fills with 150 px squares that have alt text and link to the photo;
  podcasts: typing in "Search podcasts" shows results with their covers (the fixtures'
    through /images); one opens playable episodes;
  library: empty at first; after two podcasts are opened (kept in localStorage), the Library
    tab shows both podcasts' episodes newest first with their titles from one
    /episodes?podcasts= request; Refresh sends If-None-Match and keeps the list on 304; a
    pending answer is asked again once after its Retry-After (answers faked by page.route);
    an Overcast OPML export imports (duplicates and moves folded, broken outlines told) and
    the library exports as an OPML download;
  loans: cards show, a sector filter applies, "Next page" pages forward;
and: the Content-Security-Policy forbids inline and evaluated script, axe-core finds no
serious or critical violation in any view, and the page logs no console error (resource
loads that fail offline aside). Exits 1 on any failure. Stops what it starts, by PID.
"""
import json
import os
import time
import re
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from loopback import check, failures, free_port, start_feedproxy, stop  # noqa: E402  (the scripts' shared helpers)



def main():
    binary = os.environ.get("FEEDPROXY_BIN") or sys.argv[1]
    screenshots = "--screenshots" in sys.argv
    from playwright.sync_api import sync_playwright
    from axe_playwright_python.sync_playwright import Axe

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_URL")}
    proxy = start_feedproxy(binary, port, env)
    try:
        base = f"http://127.0.0.1:{port}"
        print(f"demo test: feedproxy --fixtures on :{port}, {base}/demo")
        head = urllib.request.urlopen(f"{base}/demo", timeout=5)
        csp = head.headers.get("Content-Security-Policy", "")
        check("Content-Security-Policy of /demo", csp,
              "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp and "connect-src 'self'" in csp,
              "script-src 'self', connect-src 'self', no unsafe-inline or unsafe-eval")
        check("X-Content-Type-Options / ETag", f"{head.headers.get('X-Content-Type-Options')} / {head.headers.get('ETag')}",
              head.headers.get("X-Content-Type-Options") == "nosniff" and head.headers.get("ETag"), "nosniff / an ETag")

        axe = Axe()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            errors = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Failed to load resource" not in m.text else None)
            page.on("pageerror", lambda e: errors.append(str(e)))

            def audit(view):
                results = axe.run(page)
                bad = [v for v in results.response["violations"] if v.get("impact") in ("serious", "critical")]
                check(f"axe-core on the {view} view: serious or critical violations", [v["id"] for v in bad], not bad, "none")

            # Photos.
            page.goto(f"{base}/demo#photos")
            grid = page.get_by_role("list", name="Photos")
            grid.get_by_role("img").first.wait_for(timeout=10_000)
            images = grid.get_by_role("img")
            alts = [images.nth(i).get_attribute("alt") for i in range(images.count())]
            hrefs = [a.get_attribute("href") for a in grid.get_by_role("link").all()]
            check("photo grid", f"{len(alts)} images, {sum(1 for a in alts if a)} with alt text, {len(hrefs)} links",
                  alts and all(alts) and hrefs and all(h.startswith("http") for h in hrefs), "squares with alt text linking to their pages")
            page.get_by_label("Photo tags").fill("sunset")
            page.get_by_role("button", name="Show photos").click()
            page.get_by_text("tagged sunset").wait_for(timeout=10_000)
            check("photo tags applied", page.locator("#photos-status").inner_text(), True, "a status naming the tags")
            audit("photos")
            if screenshots:
                page.screenshot(path="docs/demo-photos.png")

            # Podcasts: typed as a person types.
            page.get_by_role("link", name="Podcasts").click()
            library_requests = []
            page.on("request", lambda r: library_requests.append(r) if "/episodes?podcasts=" in r.url else None)
            page.get_by_role("tab", name="Library").click()
            empty = page.locator("#library-status")
            page.get_by_text("Your library is empty").wait_for(timeout=5_000)
            check("empty library", f"{empty.inner_text()[:60]}…, {len(library_requests)} requests", not library_requests,
                  "a word on how to fill it, no request")
            page.get_by_role("tab", name="Search").click()
            box = page.get_by_label("Search podcasts")
            box.press_sequentially("swift", delay=120)
            results = page.get_by_role("list", name="Podcasts found")
            results.get_by_role("button").first.wait_for(timeout=10_000)
            check("podcast search results", f"{results.get_by_role('button').count()} podcasts", results.get_by_role("button").count() > 0, "> 0")
            # Their artwork offline: the fixtures' covers through the image proxy, as production serves it.
            # Every cover done (loaded or failed), not just the first: on a busy machine the others may still be decoding.
            page.wait_for_function("() => { const imgs = [...document.querySelectorAll('#podcast-results img')]; "
                                   "return imgs.length > 0 && imgs.every(i => i.complete) && imgs.some(i => i.naturalWidth > 0) }",
                                   timeout=20_000)
            art = page.eval_on_selector_all("#podcast-results img", "imgs => imgs.map(i => ({src: i.currentSrc, width: i.naturalWidth}))")
            check("search results' artwork", f"{sum(1 for a in art if a['width'])} of {len(art)} loaded, widths {sorted({a['width'] for a in art})}",
                  art and all(a["src"].startswith(base + "/images?") and 0 < a["width"] <= 100 for a in art),
                  "every cover loaded through /images, at most 100 px")
            # From here on, the images the episode list asks for.
            image_requests = []
            page.on("request", lambda r: image_requests.append(r.url) if r.resource_type == "image" else None)
            results.get_by_role("button", name=re.compile("Swift by Sundell")).click()
            page.locator("#episode-list audio[controls]").first.wait_for(timeout=10_000)
            audios = page.locator("#episode-list audio[controls]")
            srcs = [audios.nth(i).get_attribute("src") for i in range(audios.count())]
            check("episodes with <audio controls>", f"{len(srcs)} playable", srcs and all(s.startswith("http") for s in srcs), "> 0, http(s) sources")
            # Thumbnails through the image proxy (--fixtures turns it on): small, loaded, and no
            # request to a publisher's host for them.
            page.wait_for_function("() => [...document.querySelectorAll('#episode-list img.thumb')].some(i => i.complete && i.naturalWidth > 0)",
                                   timeout=10_000)
            thumbs = page.eval_on_selector_all("#episode-list img.thumb", """imgs => imgs.map(i => ({
                src: i.currentSrc, width: i.naturalWidth, alt: i.getAttribute("alt")}))""")
            loaded = [t for t in thumbs if t["width"]]
            check("episode thumbnails", f"{len(loaded)} of {len(thumbs)} loaded, widths {sorted({t['width'] for t in loaded})}, "
                  f"{len(image_requests)} image requests, all to {base}: {all(u.startswith(base + '/images?') for u in image_requests)}",
                  loaded and all(t["src"].startswith(base + "/images?") and t["width"] <= 120 and t["alt"] == "" for t in loaded)
                  and image_requests and all(u.startswith(base + "/images?") for u in image_requests),
                  "proxied /images thumbnails of at most 120 px, decorative (alt=\"\"), every image request to this server")
            audit("podcasts")
            if screenshots:
                page.screenshot(path="docs/demo-podcasts.png")

            # The library: the podcasts opened, newest episodes first across them, in one request.
            results.get_by_role("button", name=re.compile("Swift over Coffee")).click()
            page.locator("#episodes-status", has_text=re.compile(r"^\d+ episodes\.$")).wait_for(timeout=10_000)
            saved = page.evaluate("() => JSON.parse(localStorage.getItem('feedproxy-demo-library'))")
            check("library in localStorage", [(p["id"], p["title"]) for p in saved],
                  [p["id"] for p in saved] == ["1526489823", "1200361736"], "Swift over Coffee, then Swift by Sundell: most recent first")
            with page.expect_response(lambda r: "/episodes?podcasts=" in r.url) as answer:
                page.get_by_role("tab", name="Library").click()
            first = answer.value
            page.locator("#library-status", has_text="latest episodes").wait_for(timeout=10_000)
            page.wait_for_timeout(300)
            check("library: /episodes?podcasts= requests", [r.url.split("/", 3)[3] for r in library_requests],
                  len(library_requests) == 1 and library_requests[0].url.endswith("/episodes?podcasts=1526489823,1200361736&limit=50"),
                  "exactly one, episodes?podcasts=1526489823,1200361736&limit=50")
            rows = page.eval_on_selector_all("#library-episodes > li", """items => items.map(li => ({
                podcast: li.querySelector(".podcast") ? li.querySelector(".podcast").textContent : null,
                published: li.querySelector("time") ? li.querySelector("time").getAttribute("datetime") : null,
                audio: li.querySelector("audio[controls]") ? li.querySelector("audio").getAttribute("src") : null}))""")
            dated = [r["published"] for r in rows if r["published"]]
            newest_first = dated == sorted(dated, reverse=True) and all(r["published"] for r in rows[:len(dated)])
            check("library episodes", f"{len(rows)}: " + ", ".join(f"{r['podcast']} {(r['published'] or 'undated')[:10]}" for r in rows),
                  {r["podcast"] for r in rows} == {"Swift by Sundell", "Swift over Coffee"} and newest_first and [r for r in rows if r["audio"]],
                  "both podcasts, each episode with its podcast's title, newest first (undated last), playable audio")
            feeds = page.get_by_role("list", name="Podcasts in your library").get_by_role("listitem")
            states = [feeds.nth(i).inner_text() for i in range(feeds.count())]
            check("library podcast states", states, len(states) == 2 and all(" — ok" in s for s in states), "one per podcast, both ok")
            etag = first.headers.get("etag")
            with page.expect_response(lambda r: "/episodes?podcasts=" in r.url) as answer:
                page.get_by_role("button", name="Refresh").click()
            again = answer.value
            sent = again.request.all_headers().get("if-none-match")
            page.locator("#library-status", has_text="Nothing new").wait_for(timeout=10_000)
            kept = page.locator("#library-episodes > li").count()
            check("Refresh", f"If-None-Match {sent}, HTTP {again.status}, {page.locator('#library-status').inner_text()!r}, {kept} episodes kept",
                  etag and sent == etag and again.status == 304 and kept == len(rows) and "if-none-match" not in first.request.all_headers(),
                  f"the first answer's ETag {etag}, 304, nothing new, the list kept")
            audit("podcast library")
            if screenshots:
                page.screenshot(path="docs/demo-library.png")

            # Pending podcasts (faked: the fixtures answer at once): a note, one more request after
            # Retry-After, then no more; an error shows its message.
            def fake(route):
                route.fulfill(status=200, headers={"Content-Type": "application/json", "ETag": '"fake"', "Retry-After": "1"}, body=json.dumps({
                    "source": "rss", "count": 0, "items": [], "page": {"size": 50, "total": 0, "next": None, "nextCursor": None},
                    "podcasts": [{"id": 1526489823, "status": "pending", "title": None, "updated": None, "episodeCount": None, "error": None},
                                 {"id": 1200361736, "status": "error", "title": None, "updated": None, "episodeCount": None,
                                  "error": {"code": "feed_unavailable", "message": "the feed could not be fetched"}}]}))
            page.route(lambda url: "/episodes?podcasts=" in url, fake, times=2)
            before = len(library_requests)
            page.get_by_role("button", name="Refresh").click()
            page.locator("#library-status", has_text="asking again in 1 s").wait_for(timeout=5_000)
            states = [feeds.nth(i).inner_text() for i in range(feeds.count())]
            page.locator("#library-status", has_text="press Refresh in a moment").wait_for(timeout=5_000)
            page.wait_for_timeout(1_500)
            retried = library_requests[before:]
            check("pending, retried once", f"{states}, {len(retried)} requests, If-None-Match {[r.headers.get('if-none-match') for r in retried]}",
                  len(retried) == 2 and retried[1].headers.get("if-none-match") == '"fake"'
                  and states == ["Swift over Coffee — still loading", "Swift by Sundell — error: the feed could not be fetched"],
                  "a note, the states with the stored titles, one more request after Retry-After and no more")
            page.get_by_role("button", name="Refresh").click()
            page.locator("#library-status", has_text="latest episodes").wait_for(timeout=10_000)
            check("library after the fake", page.locator("#library-status").inner_text(), page.locator("#library-episodes > li").count() == len(rows),
                  "the full list again")
            # Another app's library moved in (Overcast's export, its feeds at the fixture upstream),
            # then out again as a file.
            feed_url = json.load(urllib.request.urlopen(f"{base}/podcasts/1200361736", timeout=5))["item"]["feedUrl"]
            fixture_host = feed_url.split("/")[2]
            with open("Fixtures/library/overcast.opml", encoding="utf-8") as f:
                opml = f.read().replace("FIXTURES", fixture_host).encode()
            with page.expect_response(lambda r: r.url.endswith("/library/opml")) as imported:
                page.get_by_label("Import a subscription list (OPML)").set_input_files(
                    files=[{"name": "overcast.opml", "mimeType": "text/x-opml", "buffer": opml}])
            import_status = page.locator("#library-import-status")
            import_status.filter(has_text="Imported").wait_for(timeout=10_000)
            page.locator("#library-status", has_text="latest episodes").wait_for(timeout=10_000)
            saved = page.evaluate("() => JSON.parse(localStorage.getItem('feedproxy-demo-library'))")
            titles = [feeds.nth(i).inner_text() for i in range(feeds.count())]
            check("OPML import", f"HTTP {imported.value.status}, {import_status.inner_text()!r}, {len(saved)} in the library, {titles}",
                  imported.value.status == 200 and import_status.inner_text().startswith("Imported 5 podcasts")
                  and "4 could not be" in import_status.inner_text() and len(saved) == 7
                  and any(t.startswith("Kitchen Table Radio — ok") for t in titles),
                  "5 podcasts (a duplicate and a move folded), 4 broken outlines told, the library refreshed with them")
            with page.expect_download() as download:
                page.get_by_role("button", name="Export as OPML").click()
            with open(download.value.path(), encoding="utf-8") as f:
                exported = f.read()
            check("OPML export", f"{download.value.suggested_filename}: {exported.count('<outline ')} outlines",
                  download.value.suggested_filename == "feedproxy-library.opml" and exported.count("<outline ") == 7
                  and f"http://{fixture_host}/rss/indie.xml" in exported, "the 7 podcasts, each with its feed URL")
            audit("library import")
            page.get_by_role("tab", name="Library").press("ArrowLeft")
            search_tab = page.get_by_role("tab", name="Search")
            check("tabs by keyboard (ArrowLeft from Library)",
                  f"Search selected: {search_tab.get_attribute('aria-selected')}, focused: {search_tab.evaluate('t => t === document.activeElement')}",
                  search_tab.get_attribute("aria-selected") == "true" and box.is_visible() and not page.locator("#library-episodes").is_visible(),
                  "Search selected and focused, its panel shown")

            # Loans: a filter, then the next page.
            page.get_by_role("link", name="Loans").click()
            cards = page.get_by_role("list", name="Loans")
            cards.get_by_role("listitem").first.wait_for(timeout=10_000)
            first_status = page.locator("#loans-status").inner_text()
            page.get_by_role("link", name="Next page").click()
            page.get_by_text("Page 2 of").wait_for(timeout=10_000)
            check("loans page forward", f"{first_status} -> {page.locator('#loans-status').inner_text()}", True, "page 1 then page 2")
            page.get_by_label("Sector").select_option("retail")
            page.get_by_role("button", name="Show loans").click()
            page.wait_for_timeout(500)
            check("sector filter", page.locator("#loans-status").inner_text(), "Sorry" not in page.locator("#loans-status").inner_text(), "answered")
            audit("loans")
            if screenshots:
                page.get_by_label("Sector").select_option("")
                page.get_by_role("button", name="Show loans").click()
                page.wait_for_timeout(500)
                page.screenshot(path="docs/demo-loans.png")

            # One episode, complete: from the library, its chapters as jump marks under the
            # player and its transcript under the episode, from one request.
            page.evaluate("""() => localStorage.setItem("feedproxy-demo-library",
                JSON.stringify([{id: "1580000009", title: "Chapters and Transcripts"}]))""")
            page.get_by_role("link", name="Podcasts").click()
            page.get_by_role("tab", name="Library").click()
            episode = page.locator("#library-episodes > li").filter(has=page.get_by_role("heading", name="JSON chapters, WebVTT transcript"))
            episode.wait_for(timeout=10_000)
            with page.expect_response(lambda r: "/episodes/ct-json?include=" in r.url) as answer:
                episode.get_by_role("button", name="Show chapters and transcript").click()
            marks = episode.get_by_role("navigation").get_by_role("button")
            marks.first.wait_for(timeout=10_000)
            labels = marks.all_inner_texts()
            check("chapters as jump marks", labels, len(labels) == 5 and labels[:2] == ["0:00 Intro", "2:48 Hearing Aids"],
                  "the 5 table-of-contents chapters, each with its time, from one request "
                  f"({answer.value.url.split('/', 3)[3]})")
            marks.nth(1).click()
            seek = episode.locator("audio").evaluate("a => a.currentTime")
            check("a jump mark moves the player", seek, seek == 168, "168 s")
            lines = episode.locator(".transcript li").all_inner_texts()
            check("transcript under the episode", lines,
                  len(lines) == 3 and lines[0] == "0:00 Ada Host: Welcome back to the show." and "Grace Guest: " in lines[1], "3 timed lines with speakers")
            audit("episode details")

            # New episodes come by themselves while the Library tab is open: its event stream,
            # a new episode at the publisher, the publisher's ping, the list refreshed.
            page.evaluate("""() => localStorage.setItem("feedproxy-demo-library",
                JSON.stringify([{id: "1590000031", title: "Library Show"}]))""")
            with page.expect_request(lambda r: "/episodes/events?" in r.url, timeout=10_000) as opened:
                page.get_by_role("tab", name="Search").click()
                page.get_by_role("tab", name="Library").click()
            before = page.locator("#library-episodes > li").count()
            now = int(time.time())
            urllib.request.urlopen(urllib.request.Request(f"http://{fixture_host}/__fixture/publish/1590000031?at={now}", method="POST"), timeout=5)
            ping = urllib.request.urlopen(f"{base}/hub/notify?id=1590000031", timeout=5)
            page.locator("#library-import-status", has_text="just arrived").wait_for(timeout=10_000)
            page.wait_for_function(f"() => document.querySelectorAll('#library-episodes > li').length > {before}", timeout=10_000)
            newest = page.locator("#library-episodes > li h4, #library-episodes > li h3").first.inner_text()
            check("a new episode without a refresh", f"stream {opened.value.url.split('/', 3)[3][:60]}…, ping HTTP {ping.status}, "
                  f"{page.locator('#library-import-status').inner_text()!r}, newest: {newest!r}",
                  ping.status == 202 and "sync=" in opened.value.url, "the stream from the shown answer's token; the ping's episode listed")

            # The CSP at work: an inline script injected into the page does not run, and the
            # browser reports the violation. (eval is refused by the same policy, which has no
            # 'unsafe-eval'; code evaluated through DevTools, as Playwright's is, is exempt, so it
            # is checked in the header above.)
            blocked = page.evaluate("""() => new Promise(resolve => {
                let violation = null;
                document.addEventListener("securitypolicyviolation", e => { violation = e.effectiveDirective; }, {once: true});
                const s = document.createElement("script");
                s.textContent = "window.__inline = true";
                document.body.append(s);
                setTimeout(() => resolve({inline: window.__inline === true, violation}), 200);
            })""")
            errors[:] = [e for e in errors if "Content Security Policy" not in e]
            check("an injected inline script under the page's CSP", blocked,
                  blocked["inline"] is False and (blocked["violation"] or "").startswith("script-src"), "blocked, reported as a script-src violation")
            check("console errors", errors, not errors, "none")
            browser.close()
    finally:
        stop(proxy)
    print(f"demo test: {'all passed' if not failures else str(len(failures)) + ' failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
