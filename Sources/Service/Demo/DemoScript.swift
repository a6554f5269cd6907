extension DemoAssets {
    /// The page's one module. Upstream text is only ever set as text; the only HTML inserted
    /// is an episode's `notesHtml`, which the server has sanitized.
    static let js = #"""
        // FeedProxy demo: three apps on the public API of the server that serves this page.
        const $ = id => document.getElementById(id);

        function el(tag, props = {}, ...children) {
          const node = document.createElement(tag);
          for (const [key, value] of Object.entries(props)) {
            if (value === null || value === undefined) continue;
            if (key === "text") node.textContent = value;
            else node.setAttribute(key, value);
          }
          for (const child of children) if (child) node.append(child);
          return node;
        }

        // Only absolute http(s) URLs become links, images or audio (the server checks too).
        const safeURL = value => typeof value === "string" && /^https?:\/\//i.test(value) ? value : null;

        class APIError extends Error {
          constructor(status, message, retryAfter) {
            super(message);
            this.status = status;
            this.retryAfter = retryAfter;
          }
        }

        async function getJSON(path, signal) {
          const response = await fetch(path, {signal, headers: {Accept: "application/json"}});
          let body = null;
          try { body = await response.json(); } catch { body = null; }
          if (!response.ok) {
            const message = body && body.error && body.error.message ? body.error.message : response.statusText;
            throw new APIError(response.status, message, response.headers.get("Retry-After"));
          }
          return body;
        }

        // Errors told to a person: what happened, and when to try again.
        function tell(status, error) {
          if (error && error.name === "AbortError") return;
          status.classList.add("error");
          if (error instanceof APIError) {
            let text = `Sorry, that did not work: ${error.message} (HTTP ${error.status}).`;
            if (error.retryAfter) text += ` Try again in ${error.retryAfter} s.`;
            status.textContent = text;
          } else {
            status.textContent = "Sorry, the server could not be reached. Check the connection and try again.";
          }
        }

        function say(status, text) {
          status.classList.remove("error");
          status.textContent = text;
        }

        // Views: one per fragment.
        const views = ["photos", "podcasts", "loans"];
        const started = new Set();
        function show() {
          const name = views.includes(location.hash.slice(1)) ? location.hash.slice(1) : "photos";
          for (const view of views) {
            $(`${view}-view`).hidden = view !== name;
            const link = document.querySelector(`nav a[data-view="${view}"]`);
            if (view === name) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
          }
          if (!started.has(name)) {
            started.add(name);
            if (name === "photos") loadPhotos("");
            if (name === "loans") loadLoans(loansPath());
          }
        }
        window.addEventListener("hashchange", show);

        // Photos: the 150 px squares, each linking to its page.
        let photosController = null;
        async function loadPhotos(tags) {
          if (photosController) photosController.abort();
          photosController = new AbortController();
          const status = $("photos-status"), grid = $("photos-grid");
          say(status, "Loading photos…");
          try {
            const feed = await getJSON(tags ? `photos?tags=${encodeURIComponent(tags)}` : "photos", photosController.signal);
            grid.replaceChildren(...feed.items.map(photo => {
              const square = photo.images && photo.images.q ? safeURL(photo.images.q.url) : null;
              const title = photo.title || "Untitled photo";
              const image = square ? el("img", {src: square, alt: title, width: 150, height: 150, loading: "lazy"}) : el("span", {text: title});
              const link = safeURL(photo.link);
              return el("li", {}, link ? el("a", {href: link}, image) : image);
            }));
            say(status, `${feed.items.length} photos${tags ? ` tagged ${tags}` : ""}.`);
          } catch (error) { tell(status, error); }
        }
        $("photos-form").addEventListener("submit", event => {
          event.preventDefault();
          loadPhotos($("photo-tags").value.trim());
        });

        // Podcasts: search as the person types, debounced; each newer search aborts the older one.
        let searchController = null, searchTimer = null;
        $("podcast-search").addEventListener("input", event => {
          clearTimeout(searchTimer);
          const term = event.target.value.trim();
          searchTimer = setTimeout(() => searchPodcasts(term), 250);
        });
        async function searchPodcasts(term) {
          if (searchController) searchController.abort();
          const status = $("podcasts-status"), list = $("podcast-results");
          if (term.length < 2) {
            list.replaceChildren();
            say(status, term ? "Type at least two characters." : "");
            return;
          }
          searchController = new AbortController();
          say(status, `Searching for ${term}…`);
          try {
            const feed = await getJSON(`podcasts?term=${encodeURIComponent(term)}&limit=20`, searchController.signal);
            list.replaceChildren(...feed.items.map(podcast => {
              const art = podcast.images && podcast.images["100"] ? safeURL(podcast.images["100"].url) : null;
              const button = el("button", {type: "button"},
                art ? el("img", {src: art, alt: "", width: 100, height: 100, loading: "lazy"}) : null,
                el("span", {}, el("strong", {text: podcast.title || "Untitled podcast"}), el("br"), el("span", {text: podcast.author || ""})));
              button.addEventListener("click", () => openEpisodes(podcast));
              return el("li", {}, button);
            }));
            say(status, feed.items.length ? `${feed.items.length} podcasts for ${term}.` : `No podcasts for ${term}.`);
          } catch (error) { tell(status, error); }
        }

        function duration(seconds) {
          if (!Number.isFinite(seconds)) return null;
          const h = Math.floor(seconds / 3600), m = Math.floor(seconds % 3600 / 60), s = seconds % 60;
          return h ? `${h} h ${m} min` : `${m} min ${s} s`;
        }

        let episodesController = null;
        async function openEpisodes(podcast) {
          if (episodesController) episodesController.abort();
          episodesController = new AbortController();
          const section = $("episodes"), status = $("episodes-status"), list = $("episode-list");
          section.hidden = false;
          $("episodes-heading").textContent = `Episodes of ${podcast.title || "this podcast"}`;
          $("episodes-heading").focus();
          list.replaceChildren();
          say(status, "Loading episodes…");
          try {
            const feed = await getJSON(`podcasts/${encodeURIComponent(podcast.id)}/episodes?limit=20`, episodesController.signal);
            list.replaceChildren(...feed.items.map(episode => {
              const item = el("li", {}, el("h4", {text: episode.title || "Untitled episode"}));
              const facts = el("p");
              if (episode.published) facts.append(el("time", {datetime: episode.published, text: new Date(episode.published).toLocaleDateString("en")}));
              const length = duration(episode.duration);
              if (length) facts.append(document.createTextNode(` · ${length}`));
              item.append(facts);
              const audio = safeURL(episode.audioUrl);
              if (audio) item.append(el("audio", {controls: "", preload: "none", src: audio, "aria-label": `Play ${episode.title || "episode"}`}));
              const notes = el("div", {class: "notes"});
              // notesHtml is sanitized by the server (an allow-list over an HTML5 parse); the plain summary otherwise.
              if (typeof episode.notesHtml === "string") notes.innerHTML = episode.notesHtml;
              else notes.textContent = episode.summary || "";
              item.append(notes);
              return item;
            }));
            say(status, `${feed.items.length} episodes.`);
          } catch (error) { tell(status, error); }
        }

        // Loans: filters, cards, and the next page from the response's paging links.
        function loansPath() {
          const params = new URLSearchParams({limit: "12"});
          const sector = $("loan-sector").value, country = $("loan-country").value.trim();
          if (sector) params.set("sector", sector);
          if (country) params.set("country", country);
          return `loans?${params}`;
        }
        let loansController = null;
        async function loadLoans(path) {
          if (loansController) loansController.abort();
          loansController = new AbortController();
          const status = $("loans-status"), cards = $("loan-cards"), next = $("loans-next");
          say(status, "Loading loans…");
          try {
            const feed = await getJSON(path, loansController.signal);
            cards.replaceChildren(...feed.items.map(loan => {
              const photo = loan.images ? safeURL((window.innerWidth > 900 && loan.images.w800 ? loan.images.w800 : loan.images.w480h300).url) : null;
              const amount = Number.isFinite(loan.amount) ? `${loan.amount.toLocaleString("en", {style: "currency", currency: "USD"})}` : "";
              return el("li", {},
                photo ? el("img", {src: photo, alt: loan.name ? `${loan.name}, the borrower` : "The borrower", loading: "lazy"}) : null,
                el("div", {class: "body"},
                  el("h3", {text: loan.name || "A borrower"}),
                  el("p", {text: [loan.sector, loan.country].filter(Boolean).join(" · ")}),
                  el("p", {text: [amount, loan.use].filter(Boolean).join(" ")})));
            }));
            const page = feed.page;
            say(status, page ? `Page ${page.number} of ${page.pages} (${page.total} loans).` : `${feed.items.length} loans.`);
            next.hidden = !(page && page.next);
            next.dataset.path = page && page.next ? page.next.replace(/^\//, "") : "";
          } catch (error) { tell(status, error); }
        }
        $("loans-form").addEventListener("submit", event => {
          event.preventDefault();
          loadLoans(loansPath());
        });
        $("loans-next").addEventListener("click", event => {
          event.preventDefault();
          if (event.currentTarget.dataset.path) loadLoans(event.currentTarget.dataset.path);
          $("loans-heading").scrollIntoView();
        });

        show();

        """#
}
