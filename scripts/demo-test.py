#!/usr/bin/env python3
"""The built-in demo page (`GET /demo`) in a real browser: Chromium driven by Playwright.

Usage: FEEDPROXY_BIN=path/to/feedproxy python3 scripts/demo-test.py [--screenshots]
(run by `make test`; --screenshots also writes docs/demo-{photos,podcasts,loans}.png)

Against `feedproxy --fixtures` (offline: the upstream CDNs' images may not load, their alt
text stands in), each view found by its roles and labels:
  photos: the grid fills with 150 px squares that have alt text and link to the photo;
  podcasts: typing in "Search podcasts" shows results; one opens playable episodes;
  loans: cards show, a sector filter applies, "Next page" pages forward;
and: the Content-Security-Policy forbids inline and evaluated script, axe-core finds no
serious or critical violation in any view, and the page logs no console error (resource
loads that fail offline aside). Exits 1 on any failure. Stops what it starts, by PID.
"""
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
            box = page.get_by_label("Search podcasts")
            box.press_sequentially("swift", delay=120)
            results = page.get_by_role("list", name="Podcasts found")
            results.get_by_role("button").first.wait_for(timeout=10_000)
            check("podcast search results", f"{results.get_by_role('button').count()} podcasts", results.get_by_role("button").count() > 0, "> 0")
            results.get_by_role("button").first.click()
            page.locator("#episode-list audio[controls]").first.wait_for(timeout=10_000)
            audios = page.locator("#episode-list audio[controls]")
            srcs = [audios.nth(i).get_attribute("src") for i in range(audios.count())]
            check("episodes with <audio controls>", f"{len(srcs)} playable", srcs and all(s.startswith("http") for s in srcs), "> 0, http(s) sources")
            audit("podcasts")
            if screenshots:
                page.screenshot(path="docs/demo-podcasts.png")

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
