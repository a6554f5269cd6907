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
// An image through this server's image proxy (a relative /images URL) or an absolute one.
const imageURL = value => typeof value === "string" && value.startsWith("/images?") ? value : safeURL(value);

class APIError extends Error {
  constructor(status, message, retryAfter) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

// One request for JSON: the response and its body. A 304 (the answer to an If-None-Match)
// has no body; any other status but 2xx is an APIError.
async function request(path, signal, {headers = {}, cache = "default", method = "GET", send = undefined} = {}) {
  const response = await fetch(path, {signal, cache, method, body: send, headers: {Accept: "application/json", ...headers}});
  if (response.status === 304) return {response, body: null};
  let body = null;
  try { body = await response.json(); } catch { body = null; }
  if (!response.ok) {
    const message = body && body.error && body.error.message ? body.error.message : response.statusText;
    throw new APIError(response.status, message, response.headers.get("Retry-After"));
  }
  return {response, body};
}

async function getJSON(path, signal) {
  return (await request(path, signal)).body;
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
      const art = podcast.images && podcast.images["100"] ? imageURL(podcast.images["100"].url) : null;
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

// One episode: its title, podcast (in the library), date and length, audio, notes, and
// (when the feed points to any) its chapters and transcript on request.
function episodeItem(episode, podcastID, podcastTitle) {
  const item = el("li", {}, el("h4", {text: episode.title || "Untitled episode"}));
  // Artwork from the image proxy (IMAGE_PROXY_KEY): 60 px, 120 px on a 2x screen; never the publisher's file.
  const small = episode.images && episode.images["60"] ? imageURL(episode.images["60"].url) : null;
  const large = episode.images && episode.images["120"] ? imageURL(episode.images["120"].url) : null;
  if (small) item.prepend(el("img", {class: "thumb", src: small, srcset: large ? `${small} 1x, ${large} 2x` : null, alt: "", width: 60, height: 60, loading: "lazy"}));
  const facts = [];
  if (podcastTitle) facts.push(el("span", {class: "podcast", text: podcastTitle}));
  if (episode.published) facts.push(el("time", {datetime: episode.published, text: new Date(episode.published).toLocaleDateString("en")}));
  const length = duration(episode.duration);
  if (length) facts.push(length);
  const line = el("p");
  facts.forEach((fact, index) => {
    if (index) line.append(" · ");
    line.append(fact);
  });
  item.append(line);
  const audio = safeURL(episode.audioUrl);
  const player = audio ? el("audio", {controls: "", preload: "none", src: audio, "aria-label": `Play ${episode.title || "episode"}`}) : null;
  if (player) item.append(player);
  const extras = (episode.chapters ? ["chapters"] : []).concat(Array.isArray(episode.transcripts) && episode.transcripts.length ? ["transcript"] : []);
  if (extras.length && isPodcastID(podcastID) && typeof episode.id === "string") {
    const details = el("div", {class: "details"});
    const button = el("button", {type: "button", "aria-expanded": "false", text: `Show ${extras.join(" and ")}`});
    button.addEventListener("click", () => showDetails(podcastID, episode, extras, player, details, button), {once: true});
    item.append(button, details);
  }
  const notes = el("div", {class: "notes"});
  // notesHtml is sanitized by the server (an allow-list over an HTML5 parse); the plain summary otherwise.
  if (typeof episode.notesHtml === "string") notes.innerHTML = episode.notesHtml;
  else notes.textContent = episode.summary || "";
  item.append(notes);
  return item;
}

const clock = seconds => {
  const s = Math.floor(seconds), h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), r = String(s % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${r}` : `${m}:${r}`;
};

// One request for the episode with its chapters and transcript: chapters become jump
// marks under the player, the transcript a list under the episode (all set as text).
async function showDetails(podcastID, episode, extras, player, details, button) {
  button.setAttribute("aria-expanded", "true");
  button.disabled = true;
  const status = el("p", {class: "status", role: "status", text: "Loading…"});
  details.replaceChildren(status);
  try {
    const body = await getJSON(`podcasts/${podcastID}/episodes/${encodeURIComponent(episode.id)}?include=${extras.join(",")}`);
    details.replaceChildren();
    const marks = (Array.isArray(body.chapters) ? body.chapters : []).filter(chapter => chapter.toc !== false && Number.isFinite(chapter.start));
    if (marks.length) {
      const list = el("ol", {class: "chapters"});
      for (const chapter of marks) {
        const jump = el("button", {type: "button", "data-start": String(chapter.start), text: `${clock(chapter.start)} ${chapter.title || "Chapter"}`});
        jump.addEventListener("click", () => {
          if (!player) return;
          player.currentTime = chapter.start;
          player.play().catch(() => {});
        });
        list.append(el("li", {}, jump));
      }
      details.append(el("nav", {"aria-label": `Chapters of ${episode.title || "this episode"}`}, list));
    }
    const transcript = body.transcript;
    if (transcript && Array.isArray(transcript.segments) && transcript.segments.length) {
      const list = el("ol", {class: "transcript", tabindex: "0", "aria-label": "Transcript"});
      for (const segment of transcript.segments) {
        const line = el("li");
        if (Number.isFinite(segment.start)) line.append(el("time", {text: clock(segment.start)}), " ");
        if (segment.speaker) line.append(el("b", {text: `${segment.speaker}: `}));
        line.append(segment.text || "");
        list.append(line);
      }
      const more = transcript.truncated ? el("p", {class: "hint", text: "The transcript is longer than shown."}) : null;
      details.append(el("details", {open: ""}, el("summary", {text: "Transcript"}), list, more));
    }
    const problems = Array.isArray(body.problems) ? body.problems : [];
    if (!marks.length && !(transcript && transcript.segments && transcript.segments.length)) {
      details.append(el("p", {class: "hint", text: problems.length ? `Not available: ${problems.map(problem => problem.message).join("; ")}.` : "Nothing to show."}));
    }
  } catch (error) { tell(status, error); }
}

let episodesController = null;
async function openEpisodes(podcast) {
  remember(podcast);
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
    list.replaceChildren(...feed.items.map(episode => episodeItem(episode, podcast.id)));
    say(status, `${feed.items.length} episodes.`);
  } catch (error) { tell(status, error); }
}

// The podcast view's tabs, Search and Library; the arrow keys, Home and End move between them.
const podcastTabs = [...document.querySelectorAll("#podcasts-view [role=tab]")];
function selectTab(tab) {
  for (const other of podcastTabs) {
    const selected = other === tab;
    other.setAttribute("aria-selected", String(selected));
    other.tabIndex = selected ? 0 : -1;
    $(other.getAttribute("aria-controls")).hidden = !selected;
  }
  if (tab.id === "podcasts-tab-library") openLibrary(); else listen(null);
}
for (const tab of podcastTabs) {
  tab.addEventListener("click", () => selectTab(tab));
  tab.addEventListener("keydown", event => {
    const index = podcastTabs.indexOf(tab), last = podcastTabs.length - 1;
    const next = {ArrowRight: index === last ? 0 : index + 1, ArrowLeft: index === 0 ? last : index - 1, Home: 0, End: last}[event.key];
    if (next === undefined) return;
    event.preventDefault();
    podcastTabs[next].focus();
    selectTab(podcastTabs[next]);
  });
}

// Library: the podcasts whose episodes were opened or imported (up to 500, most recent
// first, in localStorage), their newest episodes in one request: GET /episodes?podcasts=…
// (POST /episodes, the same as a form, when the ids would not fit a URL).
const libraryKey = "feedproxy-demo-library", librarySize = 500, longestURL = 4000;
const isPodcastID = id => /^[0-9]+$/.test(String(id));
function readLibrary() {
  try {
    const saved = JSON.parse(localStorage.getItem(libraryKey) || "[]");
    return Array.isArray(saved) ? saved.filter(podcast => podcast && isPodcastID(podcast.id)).slice(0, librarySize) : [];
  } catch { return []; }
}
function remember(...podcasts) {
  const added = podcasts.filter(podcast => isPodcastID(podcast.id)).map(podcast => ({id: String(podcast.id), title: podcast.title || ""}));
  const ids = new Set(added.map(podcast => podcast.id));
  const library = [...added, ...readLibrary().filter(saved => !ids.has(String(saved.id)))].slice(0, librarySize);
  try { localStorage.setItem(libraryKey, JSON.stringify(library)); } catch { /* storage off: nothing is remembered */ }
}

// One podcast in the last answer: ok with its episode count, an error and why, or still loading.
function libraryFeedItem(podcast, title) {
  let state = "still loading";
  if (podcast.status === "ok") state = Number.isFinite(podcast.episodeCount) ? `ok, ${podcast.episodeCount} episodes` : "ok";
  else if (podcast.status === "error") state = `error: ${podcast.error && podcast.error.message ? podcast.error.message : "not available"}`;
  return el("li", {"data-status": podcast.status}, el("strong", {text: title}), ` — ${state}`);
}

let libraryController = null, libraryTimer = null, libraryShown = null;  // libraryShown: {path, etag} of the answer shown
const libraryQuery = library => `podcasts=${library.map(podcast => podcast.id).join(",")}&limit=50`;
const libraryPath = library => `episodes?${libraryQuery(library)}`;
// The library's answer: a GET (conditional on the shown ETag), or a form POST (never 304).
function fetchLibrary(library, signal, etag) {
  const path = libraryPath(library);
  if (path.length <= longestURL) return request(path, signal, {cache: "no-store", headers: etag ? {"If-None-Match": etag} : {}});
  return request("episodes", signal, {method: "POST", send: new URLSearchParams(libraryQuery(library)), cache: "no-store"});
}
function openLibrary() {
  const library = readLibrary();
  if (!library.length || !libraryShown || libraryShown.path !== libraryPath(library)) loadLibrary();
}
// A refresh sends the shown answer's ETag: a 304 keeps the list. Podcasts still loading
// (status pending) are asked for once more after the answer's Retry-After.
async function loadLibrary(retry = false) {
  if (libraryController) libraryController.abort();
  clearTimeout(libraryTimer);
  const status = $("library-status"), feeds = $("library-podcasts"), list = $("library-episodes");
  const library = readLibrary();
  $("library-refresh").hidden = !library.length;
  $("library-export").hidden = !library.length;
  if (!library.length) {
    libraryShown = null;
    feeds.replaceChildren();
    list.replaceChildren();
    say(status, "Your library is empty. Search for a podcast and open its episodes: it is kept here, and all of them are refreshed in one request.");
    return;
  }
  libraryController = new AbortController();
  const path = libraryPath(library);
  const etag = libraryShown && libraryShown.path === path ? libraryShown.etag : null;
  say(status, retry ? "Asking again for the podcasts still loading…" : `Refreshing ${library.length} podcasts…`);
  try {
    const {response, body} = await fetchLibrary(library, libraryController.signal, etag);
    if (response.status === 304) {
      say(status, `Nothing new in your ${library.length} podcasts.`);
      return;
    }
    libraryShown = {path, etag: response.headers.get("ETag")};
    listen(library, body.syncToken);
    const podcasts = Array.isArray(body.podcasts) ? body.podcasts : [];
    const titles = new Map(library.map(podcast => [String(podcast.id), podcast.title]));
    for (const podcast of podcasts) if (podcast.title) titles.set(String(podcast.id), podcast.title);
    const titleOf = id => titles.get(String(id)) || `Podcast ${id}`;
    feeds.replaceChildren(...podcasts.map(podcast => libraryFeedItem(podcast, titleOf(podcast.id))));
    list.replaceChildren(...body.items.map(episode => episodeItem(episode, episode.podcastId, titleOf(episode.podcastId))));
    let text = `${body.items.length} latest episodes from ${library.length} podcasts.`;
    const pending = podcasts.filter(podcast => podcast.status === "pending").length;
    if (pending && !retry) {
      const seconds = Number.parseInt(response.headers.get("Retry-After"), 10);
      const wait = seconds > 0 ? Math.min(seconds, 60) : 3;
      text += ` ${pending} still loading: asking again in ${wait} s.`;
      libraryTimer = setTimeout(() => loadLibrary(true), wait * 1000);
    } else if (pending) {
      text += ` ${pending} still loading: press Refresh in a moment.`;
    }
    say(status, text);
  } catch (error) { tell(status, error); }
}
$("library-refresh").addEventListener("click", () => loadLibrary());

// While the Library tab is open, new episodes come by themselves: an event stream of the
// library (GET /episodes/events) from the shown answer's sync token; an event with new
// episodes refreshes the list (a conditional GET). EventSource reconnects by itself,
// from its last event's id.
let events = null, eventsPath = null;
function listen(library, token) {
  const path = library && library.length && library.length <= 200 && token
    ? `episodes/events?podcasts=${library.map(podcast => podcast.id).join(",")}&limit=50&sync=${encodeURIComponent(token)}` : null;
  if (path && eventsPath === libraryPath(library)) return;
  if (events) events.close();
  events = null;
  eventsPath = null;
  if (!path) return;
  events = new EventSource(path);
  eventsPath = libraryPath(library);
  events.addEventListener("episodes", event => {
    let answer = null;
    try { answer = JSON.parse(event.data); } catch { return; }
    if (answer && answer.count > 0) {
      say($("library-import-status"), `${answer.count} new episode${answer.count === 1 ? "" : "s"} just arrived.`);
      loadLibrary();
    }
  });
}

// Import: another app's OPML export, each feed named by FeedProxy (POST /library/opml);
// a podcast that moved is kept under its new id. Export: the library as an OPML file
// (POST /library/opml/export: 500 ids do not fit a URL), saved as a download.
$("library-import").addEventListener("change", async event => {
  const file = event.target.files && event.target.files[0], status = $("library-import-status");
  if (!file) return;
  say(status, `Importing ${file.name}…`);
  try {
    const {body} = await request("library/opml", undefined, {method: "POST", send: file, cache: "no-store", headers: {"Content-Type": "text/x-opml"}});
    const outlines = Array.isArray(body.outlines) ? body.outlines : [];
    const kept = outlines.filter(outline => outline.status !== "error" && isPodcastID(outline.id)).map(outline =>
      outline.movedTo && isPodcastID(outline.movedTo.id) ? {id: outline.movedTo.id, title: outline.title || outline.text} : {id: outline.id, title: outline.title || outline.text});
    const seen = new Set(), added = kept.filter(podcast => !seen.has(String(podcast.id)) && seen.add(String(podcast.id)));
    remember(...added);
    const failed = outlines.filter(outline => outline.status === "error");
    let text = `Imported ${added.length} podcasts from ${file.name}.`;
    if (failed.length) text += ` ${failed.length} could not be: ${failed.slice(0, 3).map(outline => `${outline.text || outline.xmlUrl} (${outline.error ? outline.error.message : "error"})`).join("; ")}${failed.length > 3 ? "; …" : ""}.`;
    say(status, text);
    loadLibrary();
  } catch (error) { tell(status, error); }
  event.target.value = "";
});
$("library-export").addEventListener("click", async () => {
  const status = $("library-import-status"), library = readLibrary();
  try {
    const form = new URLSearchParams({podcasts: library.map(podcast => podcast.id).join(",")});
    const response = await fetch("library/opml/export", {method: "POST", body: form, cache: "no-store"});
    if (!response.ok) {
      let message = response.statusText;
      try { message = (await response.json()).error.message; } catch { /* not JSON */ }
      throw new APIError(response.status, message, response.headers.get("Retry-After"));
    }
    const link = el("a", {href: URL.createObjectURL(await response.blob()), download: "feedproxy-library.opml"});
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    say(status, `Exported ${library.length} podcasts as feedproxy-library.opml.`);
  } catch (error) { tell(status, error); }
});

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
