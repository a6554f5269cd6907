extension DemoAssets {
    /// The page: landmarks, labelled controls, no inline script or style (the CSP forbids both).
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>FeedProxy demo</title>
        <link rel="stylesheet" href="demo/app.css">
        <script type="module" src="demo/app.js"></script>
        </head>
        <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <h1>FeedProxy demo</h1>
          <p>Three small apps on this server's public JSON API: <a href="openapi.json">openapi.json</a>.</p>
          <nav aria-label="Views">
            <ul>
              <li><a href="#photos" data-view="photos">Photos</a></li>
              <li><a href="#podcasts" data-view="podcasts">Podcasts</a></li>
              <li><a href="#loans" data-view="loans">Loans</a></li>
            </ul>
          </nav>
        </header>
        <main id="main" tabindex="-1">
          <section id="photos-view" aria-labelledby="photos-heading" hidden>
            <h2 id="photos-heading">Photos</h2>
            <form id="photos-form" role="search">
              <label for="photo-tags">Photo tags</label>
              <input id="photo-tags" name="tags" type="search" placeholder="e.g. cats,sunset" autocomplete="off">
              <button type="submit">Show photos</button>
            </form>
            <p class="status" id="photos-status" role="status" aria-live="polite"></p>
            <ul class="grid" id="photos-grid" aria-label="Photos"></ul>
          </section>
          <section id="podcasts-view" aria-labelledby="podcasts-heading" hidden>
            <h2 id="podcasts-heading">Podcasts</h2>
            <div class="tabs" role="tablist" aria-label="Podcast views">
              <button type="button" role="tab" id="podcasts-tab-search" aria-controls="podcasts-search-panel" aria-selected="true">Search</button>
              <button type="button" role="tab" id="podcasts-tab-library" aria-controls="podcasts-library-panel" aria-selected="false" tabindex="-1">Library</button>
            </div>
            <div role="tabpanel" id="podcasts-search-panel" aria-labelledby="podcasts-tab-search">
              <div role="search">
                <label for="podcast-search">Search podcasts</label>
                <input id="podcast-search" type="search" placeholder="Type to search" autocomplete="off">
              </div>
              <p class="status" id="podcasts-status" role="status" aria-live="polite"></p>
              <ul class="list" id="podcast-results" aria-label="Podcasts found"></ul>
              <section id="episodes" aria-labelledby="episodes-heading" hidden>
                <h3 id="episodes-heading" tabindex="-1">Episodes</h3>
                <p class="status" id="episodes-status" role="status" aria-live="polite"></p>
                <ol class="episodes" id="episode-list"></ol>
              </section>
            </div>
            <div role="tabpanel" id="podcasts-library-panel" aria-labelledby="podcasts-tab-library" hidden>
              <h3 id="library-heading">Latest in your library</h3>
              <p class="hint">The podcasts whose episodes you opened or imported (up to 500), refreshed in one request.</p>
              <div class="library-file">
                <label for="library-import">Import a subscription list (OPML)</label>
                <input type="file" id="library-import" accept=".opml,.xml,text/x-opml,text/xml,application/xml">
                <button type="button" id="library-export" hidden>Export as OPML</button>
              </div>
              <p class="status" id="library-import-status" role="status" aria-live="polite"></p>
              <button type="button" id="library-refresh">Refresh</button>
              <p class="status" id="library-status" role="status" aria-live="polite"></p>
              <ul class="feeds" id="library-podcasts" aria-label="Podcasts in your library"></ul>
              <ol class="episodes" id="library-episodes" aria-label="Latest episodes in your library"></ol>
            </div>
          </section>
          <section id="loans-view" aria-labelledby="loans-heading" hidden>
            <h2 id="loans-heading">Loans</h2>
            <form id="loans-form">
              <label for="loan-sector">Sector</label>
              <select id="loan-sector" name="sector">
                <option value="">Any sector</option>
                <option value="agriculture">Agriculture</option>
                <option value="arts">Arts</option>
                <option value="clothing">Clothing</option>
                <option value="construction">Construction</option>
                <option value="education">Education</option>
                <option value="entertainment">Entertainment</option>
                <option value="food">Food</option>
                <option value="health">Health</option>
                <option value="housing">Housing</option>
                <option value="manufacturing">Manufacturing</option>
                <option value="personal-use">Personal use</option>
                <option value="retail">Retail</option>
                <option value="services">Services</option>
                <option value="transportation">Transportation</option>
                <option value="wholesale">Wholesale</option>
              </select>
              <label for="loan-country">Country code</label>
              <input id="loan-country" name="country" type="text" inputmode="text" maxlength="2" placeholder="e.g. KE" autocomplete="off">
              <button type="submit">Show loans</button>
            </form>
            <p class="status" id="loans-status" role="status" aria-live="polite"></p>
            <ul class="cards" id="loan-cards" aria-label="Loans"></ul>
            <nav aria-label="Loan pages"><a id="loans-next" href="#loans" hidden>Next page</a></nav>
          </section>
        </main>
        <footer><p>Served by FeedProxy at <code>/demo</code>; turn it off with <code>DEMO_PAGE=false</code>.</p></footer>
        </body>
        </html>

        """#
}
