// edgerag console: the tabs, the API key or sign-in, and the Search and Repositories tabs (the
// chunking preview is app.js). It talks only to this origin's public HTTP API, with the key the
// user typed or the access token of a sign-in with GitHub (the console is an OAuth public client
// of this deployment: code + PKCE, registered once per browser): kept in sessionStorage (this tab
// only, gone when it closes), sent as `Authorization: Bearer`, never put in a URL. Everything the API returns reaches the page as text nodes (`h()` below),
// never as HTML. No framework.

const $ = (id) => document.getElementById(id);
const KEY_STORE = "edgerag.apiKey";
// Sign-in: the refresh token and login beside the access token (sessionStorage), the console's
// client id (public; localStorage, so it is registered once per browser), the PKCE verifier and
// state of a sign-in in progress.
const SIGNIN = { refresh: "edgerag.refreshToken", login: "edgerag.login", client: "edgerag.oauthClient", pending: "edgerag.signin" };
const TABS = ["preview", "search", "repos"];
const POLL_MS = 1000; // a running job's status, while its repository is open
const LIST_POLL_MS = 3000; // the repository list, while any repository is indexing
const CONTEXT_LINES = 12; // lines shown around a match, and added by "earlier" / "later"
const MAX_FILE_ROWS = 500;
const IGNORED_DIRS = new Set([".git", "node_modules", "dist", "build", "target", ".wrangler", ".edgerag"]);
const TERMINAL = new Set(["SUCCEEDED", "FAILED"]);

// ----------------------------------------------------------------------------------------------
// DOM and API helpers
// ----------------------------------------------------------------------------------------------

/**
 * `h("a", {class: "x", onclick: f, dataset: {k: v}}, "text", child)`: an element whose strings
 * are text nodes. The only way this file puts API data on the page.
 */
function h(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) if (c !== undefined && c !== null && c !== false) e.append(c);
  return e;
}

const fill = (parent, ...children) => parent.replaceChildren(...children.flat().filter((c) => c != null && c !== false));

function showError(el, err) {
  el.hidden = !err;
  el.textContent = err ? describe(err) : "";
}

/** An API refusal as a person reads it; what to do about the common ones. */
function describe(err) {
  if (!(err instanceof ApiError)) return `Request failed: ${err.message}`;
  const hint = {
    UNAUTHORIZED: apiKey() ? " Check the API key above." : " Type an API key above.",
    KEY_REVOKED: " Type another key above.",
    SCOPE_FORBIDDEN: " This key's scopes do not allow it.",
    NAMESPACE_FORBIDDEN: " This key may not touch this repository.",
    WRITES_DISABLED: " The server has no API_TOKEN set, so nothing can be written.",
  }[err.code] ?? "";
  return `${err.code}: ${err.message}${hint}`;
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const apiKey = () => sessionStorage.getItem(KEY_STORE) ?? "";

/** One call to the API: JSON in and out; a non-2xx answer throws its `{error: {code, message}}`.
 *  A signed-in user's expired access token is refreshed once, then the call is made again. */
async function api(method, path, body, retried = false) {
  const headers = { accept: "application/json" };
  const key = apiKey();
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
    credentials: "omit",
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    if (res.status === 401 && json?.error?.code === "TOKEN_EXPIRED" && !retried && (await refreshSignIn())) {
      return api(method, path, body, true);
    }
    throw new ApiError(res.status, json?.error?.code ?? `HTTP_${res.status}`, json?.error?.message ?? text.slice(0, 200));
  }
  return json;
}

// ----------------------------------------------------------------------------------------------
// Sign-in with GitHub (OAuth 2.1: the deployment's /oauth endpoints, GitHub behind them)
// ----------------------------------------------------------------------------------------------

const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const redirectUri = () => `${location.origin}${location.pathname}`;
const apiResource = () => `${location.origin}/v1`;

/** A form POST to an OAuth endpoint; an error answers RFC 6749's `{error, error_description, code}`. */
async function oauthPost(path, fields) {
  const res = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: new URLSearchParams(fields),
    cache: "no-store",
    credentials: "omit",
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, json.code ?? json.error ?? `HTTP_${res.status}`, json.error_description ?? "");
  return json;
}

/** The console's client id, registered (RFC 7591) the first time for this page's address. */
async function consoleClient() {
  const saved = JSON.parse(localStorage.getItem(SIGNIN.client) ?? "null");
  if (saved?.redirect === redirectUri()) return saved.id;
  const res = await fetch("/oauth/register", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({
      client_name: "edgerag console",
      redirect_uris: [redirectUri()],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
    credentials: "omit",
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, json.code ?? `HTTP_${res.status}`, json.error_description ?? "");
  localStorage.setItem(SIGNIN.client, JSON.stringify({ id: json.client_id, redirect: redirectUri() }));
  return json.client_id;
}

async function signIn() {
  try {
    const client = await consoleClient();
    const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
    const challenge = b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
    const state = b64url(crypto.getRandomValues(new Uint8Array(16)));
    sessionStorage.setItem(SIGNIN.pending, JSON.stringify({ client, verifier, state, tab: document.body.dataset.tab }));
    const q = new URLSearchParams({
      response_type: "code",
      client_id: client,
      redirect_uri: redirectUri(),
      code_challenge: challenge,
      code_challenge_method: "S256",
      state,
      resource: apiResource(),
      scope: "read admin",
    });
    location.assign(`/oauth/authorize?${q}`);
  } catch (err) {
    renderKeyState(`Sign-in is not available (${err.code}).`);
  }
}

/** Back from the sign-in (`?code=&state=`): the code and the PKCE verifier for tokens. */
async function finishSignIn() {
  const params = new URLSearchParams(location.search);
  if (!params.has("code") && !params.has("error")) return false;
  const pending = JSON.parse(sessionStorage.getItem(SIGNIN.pending) ?? "null");
  sessionStorage.removeItem(SIGNIN.pending);
  // The code never stays in the address bar or the history.
  history.replaceState(null, "", `${redirectUri()}#${pending?.tab ?? "repos"}`);
  if (!pending || params.get("state") !== pending.state) {
    renderKeyState("Sign-in refused: it was not started from this tab.");
    return true;
  }
  if (!params.has("code")) {
    renderKeyState("Sign-in cancelled.");
    return true;
  }
  try {
    const tokens = await oauthPost("/oauth/token", {
      grant_type: "authorization_code",
      code: params.get("code"),
      client_id: pending.client,
      redirect_uri: redirectUri(),
      code_verifier: pending.verifier,
      resource: apiResource(),
    });
    sessionStorage.setItem(KEY_STORE, tokens.access_token);
    sessionStorage.setItem(SIGNIN.refresh, tokens.refresh_token);
    const me = await api("GET", "/v1/me");
    sessionStorage.setItem(SIGNIN.login, me.login ?? "");
    renderKeyState();
  } catch (err) {
    forgetSignIn();
    renderKeyState(`Sign-in failed (${err.code}).`);
  }
  return true;
}

/** A new access token from the refresh token (which rotates); `false` when the sign-in ended. */
async function refreshSignIn() {
  const refresh = sessionStorage.getItem(SIGNIN.refresh);
  const client = JSON.parse(localStorage.getItem(SIGNIN.client) ?? "null")?.id;
  if (!refresh || !client) return false;
  try {
    const tokens = await oauthPost("/oauth/token", { grant_type: "refresh_token", refresh_token: refresh, client_id: client });
    sessionStorage.setItem(KEY_STORE, tokens.access_token);
    sessionStorage.setItem(SIGNIN.refresh, tokens.refresh_token);
    return true;
  } catch {
    forgetSignIn();
    renderKeyState("Your sign-in ended: sign in again.");
    return false;
  }
}

function forgetSignIn() {
  for (const k of [KEY_STORE, SIGNIN.refresh, SIGNIN.login]) sessionStorage.removeItem(k);
}

/** Whether this deployment offers sign-in (its authorization-server metadata answers). */
let signInOffered = false;
async function offerSignIn() {
  try {
    const res = await fetch("/.well-known/oauth-authorization-server", { credentials: "omit", cache: "no-store" });
    signInOffered = res.ok;
  } catch {
    signInOffered = false;
  }
  renderKeyState();
}

const enc = encodeURIComponent;
const repoPath = (owner, name) => `/v1/repos/${enc(owner)}/${enc(name)}`;
const filePath = (path) => path.split("/").map(enc).join("/");

function ago(iso) {
  if (!iso) return "—";
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (!Number.isFinite(s)) return iso;
  if (s < 60) return `${Math.max(s, 0)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return iso.slice(0, 10);
}

function seconds(s) {
  if (s === null || s === undefined || !Number.isFinite(s)) return "—";
  if (s < 90) return `${Math.round(s)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

function bytes(n) {
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1000).toFixed(1)} kB`;
  return `${(n / 1e6).toFixed(1)} MB`;
}

const count = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const badge = (status) => h("span", { class: `badge s-${String(status).toLowerCase()}` }, String(status));

// ----------------------------------------------------------------------------------------------
// Tabs (WAI-ARIA tabs: arrows, Home and End move between them; the hash keeps the choice)
// ----------------------------------------------------------------------------------------------

const tab = (name) => $(`tab-${name}`);

function showTab(name, { focus = false } = {}) {
  if (!TABS.includes(name)) name = "preview";
  for (const t of TABS) {
    const selected = t === name;
    tab(t).setAttribute("aria-selected", String(selected));
    tab(t).tabIndex = selected ? 0 : -1;
    $(`panel-${t}`).hidden = !selected;
  }
  document.body.dataset.tab = name;
  if (location.hash !== `#${name}`) history.replaceState(null, "", `#${name}`);
  if (focus) tab(name).focus();
  if (name === "search") loadRepoChoices();
  if (name === "repos") loadRepos();
  else stopPolling();
}

$("tabs").addEventListener("click", (e) => {
  const t = e.target.closest("[role=tab]");
  if (t) showTab(t.id.slice(4));
});
$("tabs").addEventListener("keydown", (e) => {
  const i = TABS.indexOf(document.body.dataset.tab);
  const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 }[e.key];
  if (next === undefined) return;
  e.preventDefault();
  showTab(TABS[(next + TABS.length) % TABS.length], { focus: true });
});
window.addEventListener("hashchange", () => showTab(location.hash.slice(1)));

// ----------------------------------------------------------------------------------------------
// The API key
// ----------------------------------------------------------------------------------------------

function renderKeyState(note) {
  const key = apiKey();
  const login = sessionStorage.getItem(SIGNIN.login);
  const id = /^erk_([0-9a-f]{16})_/.exec(key)?.[1];
  const who = !key
    ? "No key: only what the server lets anyone read."
    : login
      ? `Signed in as ${login} (GitHub).`
      : id
        ? `Using key ${id}.`
        : "Using the key you typed.";
  $("key-state").textContent = note ? `${note} ${who}` : who;
  $("key-forget").disabled = !key || !!login;
  $("signin").hidden = !signInOffered || !!login;
  $("signout").hidden = !login;
  document.body.dataset.key = key ? "set" : "none";
}

/** Bumped when the key changes: an answer to a request sent with another key is dropped. */
let keyEpoch = 0;

/** Everything read with the previous key is stale: read it again. */
function keyChanged() {
  keyEpoch++;
  repos.seq++;
  stopPolling();
  repos.list = null;
  repos.selected = null;
  fill($("repo-list"));
  fill($("repos-state"));
  fill($("search-repo"), h("option", { value: "" }, "All I may read"));
  fill($("repo-body"), h("p", { class: "help" }, "Choose a repository to see its jobs and files."));
  setRepoActions(null);
  search.seq++;
  search.detailSeq++;
  search.history = [];
  search.opener = null;
  $("search-go").disabled = false;
  $("detail-back").hidden = $("detail-to-match").hidden = true;
  fill($("detail-body"), h("p", { class: "help" }, "Open a match to read its file around it, or a symbol to see its callers and callees."));
  fill($("matches"));
  fill($("search-summary"));
  fill($("search-warnings"));
  fill($("search-modules"));
  fill($("search-extra"));
  $("search-warnings").hidden = $("search-modules").hidden = true;
  const tabName = document.body.dataset.tab;
  if (tabName === "repos") loadRepos();
  if (tabName === "search") loadRepoChoices();
}

$("key-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const key = $("api-key").value.trim();
  if (!key) return;
  forgetSignIn();
  sessionStorage.setItem(KEY_STORE, key);
  $("api-key").value = "";
  try {
    // Check it at once: an unknown key is refused (401) even where anonymous reads pass.
    await api("GET", "/v1/repos");
    renderKeyState("Key accepted.");
  } catch (err) {
    if (err.status === 401) sessionStorage.removeItem(KEY_STORE);
    renderKeyState(err.status === 401 ? `Key refused (${err.code}).` : `Key kept, but: ${describe(err)}`);
  }
  keyChanged();
});
$("signin").addEventListener("click", () => signIn());
$("signout").addEventListener("click", async () => {
  const refresh = sessionStorage.getItem(SIGNIN.refresh);
  // Revoking the refresh token ends the whole sign-in on the server (its access tokens too).
  if (refresh) await oauthPost("/oauth/revoke", { token: refresh }).catch(() => {});
  forgetSignIn();
  renderKeyState("Signed out.");
  keyChanged();
});
$("key-forget").addEventListener("click", () => {
  sessionStorage.removeItem(KEY_STORE);
  renderKeyState("Key forgotten.");
  keyChanged();
  $("api-key").focus();
});

// ----------------------------------------------------------------------------------------------
// Search
// ----------------------------------------------------------------------------------------------

const search = { query: "", history: [], seq: 0, detailSeq: 0, opener: null };

async function loadRepoChoices() {
  const select = $("search-repo");
  const keep = select.value;
  const epoch = keyEpoch;
  try {
    const { repos: list } = await api("GET", "/v1/repos");
    if (epoch !== keyEpoch) return;
    fill(
      select,
      h("option", { value: "" }, "All I may read"),
      list.map((r) => h("option", { value: `${r.owner}/${r.name}` }, `${r.owner}/${r.name}${r.ready ? "" : ` (${r.status.toLowerCase()})`}`)),
    );
    if ([...select.options].some((o) => o.value === keep)) select.value = keep;
    showError($("search-error"), null);
  } catch (err) {
    if (epoch === keyEpoch) showError($("search-error"), err);
  }
}

const splitList = (s) => s.split(",").map((x) => x.trim()).filter(Boolean);

$("search-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const rawQuery = $("q").value.trim();
  if (!rawQuery) return;
  const body = { rawQuery };
  const profile = $("search-profile").value;
  if (profile) body.profile = profile;
  const filters = {};
  for (const [field, id] of [["paths", "filter-paths"], ["languages", "filter-languages"], ["tags", "filter-tags"]]) {
    const values = splitList($(id).value);
    if (values.length) filters[field] = values;
  }
  if (Object.keys(filters).length) body.filters = filters;
  if ($("search-debug").checked) body.debug = true;
  const repo = $("search-repo").value;
  if (repo) [body.owner, body.name] = repo.split("/");
  const seq = ++search.seq;
  const summary = $("search-summary");
  summary.dataset.state = "busy";
  summary.textContent = "Searching…";
  $("search-go").disabled = true;
  const started = performance.now();
  try {
    const res = await api("POST", repo ? "/v1/search" : "/v1/search/global", body);
    if (seq !== search.seq) return;
    search.query = rawQuery;
    renderResults(res, Math.round(performance.now() - started), !repo);
    showError($("search-error"), null);
  } catch (err) {
    if (seq !== search.seq) return;
    summary.dataset.state = "error";
    summary.textContent = "";
    fill($("matches"));
    fill($("search-extra"));
    $("search-warnings").hidden = true;
    $("search-modules").hidden = true;
    showError($("search-error"), err);
  } finally {
    if (seq === search.seq) $("search-go").disabled = false;
  }
});

const STOPWORDS = new Set("the and for are was were how does what where when which who why with from that this into not can has have its".split(" "));

/** The question's words (3+ letters, no stopwords), as one case-insensitive pattern. */
function termPattern(query) {
  const words = [...new Set((query.toLowerCase().match(/[\p{L}\p{N}_]{3,}/gu) ?? []).filter((w) => !STOPWORDS.has(w)))];
  if (!words.length) return null;
  words.sort((a, b) => b.length - a.length);
  return new RegExp(words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "giu");
}

/** `text` as text nodes, with the question's words wrapped in <mark>. */
function highlighted(text, pattern) {
  if (!pattern) return [text];
  const out = [];
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(h("mark", {}, m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function renderResults(res, ms, global) {
  const summary = $("search-summary");
  const direct = res.matches.filter((m) => !m.metadata.neighborOfSpanHash).length;
  const parts = [count(res.matches.length, "match", "matches")];
  if (direct !== res.matches.length) parts.push(`${res.matches.length - direct} of them context around a match`);
  parts.push(`profile ${res.profile}`);
  if (!global) parts.push(`${res.repoOwner}/${res.repoName}`);
  if (res.rerankApplied) parts.push("reranked");
  parts.push(`${ms} ms`);
  if (res.noResults) parts.push(res.noResultsReason === "INDEX_NOT_READY" ? "the index is not ready yet" : "nothing found");
  summary.textContent = parts.join(" · ");
  summary.dataset.state = "done";

  const warnings = $("search-warnings");
  fill(warnings, res.warnings.map((w) => h("li", {}, w)));
  warnings.hidden = !res.warnings.length;
  const modules = $("search-modules");
  fill(modules, res.appliedModules.map((m) => h("li", {}, m)));
  modules.hidden = !res.appliedModules.length;

  fill($("search-extra"), promptBlock(res), debugBlock(res.debug));
  const pattern = termPattern(search.query);
  fill(
    $("matches"),
    res.matches.map((m) => renderMatch(m, pattern, global)),
  );
}

/** What an agent would be handed: the context followed by the question. */
function promptBlock(res) {
  if (!res.augmentedPrompt) return null;
  return h(
    "details",
    { class: "extra prompt" },
    h("summary", {}, "The prompt an agent gets"),
    res.instructions ? h("p", { class: "help" }, res.instructions) : null,
    h("pre", { class: "snippet" }, h("code", {}, res.augmentedPrompt)),
  );
}

/** `debug: true`: the plan after the guard, the sub-queries, the keyword query, each module's time. */
function debugBlock(debug) {
  if (!debug) return null;
  return h(
    "details",
    { class: "extra debug", open: true },
    h("summary", {}, `Plan and timings (${debug.totalMs.toFixed(1)} ms in the pipeline)`),
    debug.subQueries.length ? h("p", {}, "Sub-queries: ", debug.subQueries.map((q, i) => [i ? ", " : "", h("q", {}, q)])) : null,
    debug.keywordQuery ? h("p", {}, "Keyword query: ", h("code", {}, debug.keywordQuery)) : null,
    h(
      "table",
      { class: "timings" },
      h("caption", {}, "Modules"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Module"), h("th", { scope: "col" }, "ms"))),
      h("tbody", {}, debug.timings.map((t) => h("tr", {}, h("td", { class: "mono" }, t.module), h("td", {}, t.ms.toFixed(1))))),
    ),
    h("details", {}, h("summary", {}, "Plan"), h("pre", { class: "snippet" }, h("code", {}, JSON.stringify(debug.plan, null, 2)))),
  );
}

function renderMatch(m, pattern, global) {
  const md = m.metadata;
  const repo = { owner: md.repoOwner, name: md.repoName };
  const open = h(
    "button",
    {
      type: "button",
      class: "open-lines",
      "aria-label": `Open ${m.path} lines ${m.startLine} to ${m.endLine}`,
      onclick: (e) => openDetail({ kind: "lines", repo, path: m.path, from: m.startLine, to: m.endLine }, { opener: e.currentTarget }),
    },
    h("span", { class: "path" }, m.path),
    h("span", { class: "lines" }, `${m.startLine}–${m.endLine}`),
  );
  const symbol = m.symbol
    ? md.symbolId
      ? h(
          "button",
          {
            type: "button",
            class: "symbol",
            "aria-label": `Callers and callees of ${m.symbol}`,
            onclick: (e) => openDetail({ kind: "symbol", repo, id: md.symbolId }, { opener: e.currentTarget }),
          },
          m.symbol,
        )
      : h("span", { class: "symbol-name" }, m.symbol)
    : null;
  const meta = [
    h("span", { class: "score", title: "Relevance after every module" }, `score ${m.score.toFixed(3)}`),
    h("span", { class: "lang" }, m.language),
    h("span", {}, md.chunkType),
    global ? h("span", { class: "repo" }, `${repo.owner}/${repo.name}`) : null,
    md.neighborOfSpanHash ? h("span", { class: "neighbor" }, "context around a match") : null,
    md.tags?.length ? h("span", {}, `tags: ${md.tags.join(", ")}`) : null,
    md.uses?.length ? h("span", {}, `uses ${md.uses.join(", ")}`) : null,
    md.usedBy?.length ? h("span", {}, `used by ${md.usedBy.join(", ")}`) : null,
  ];
  return h(
    "li",
    { class: "match", dataset: { path: m.path, startLine: m.startLine, endLine: m.endLine, repo: `${repo.owner}/${repo.name}` } },
    h("div", { class: "match-head" }, open, symbol),
    h("p", { class: "meta" }, meta),
    h("pre", { class: "snippet" }, h("code", {}, highlighted(m.snippet, pattern))),
  );
}

// Details: a file's lines, or a symbol with its callers and callees; "Back" walks the history.

async function openDetail(view, { push = true, opener, refocus } = {}) {
  // A match opens a new walk; links inside the details extend it.
  if (opener) {
    search.opener = opener;
    search.history = [];
  }
  if (push) search.history.push(view);
  $("detail-to-match").hidden = !search.opener?.isConnected;
  $("detail-back").hidden = search.history.length < 2;
  showError($("detail-error"), null);
  const body = $("detail-body");
  body.dataset.state = "busy";
  const seq = ++search.detailSeq;
  try {
    const content = view.kind === "lines" ? await renderLines(view) : await renderSymbol(view);
    if (seq !== search.detailSeq) return; // a later click won
    fill(body, content);
    body.querySelector(".line.hit")?.scrollIntoView({ block: "center" });
    body.dataset.state = "done";
  } catch (err) {
    if (seq !== search.detailSeq) return;
    body.dataset.state = "error";
    showError($("detail-error"), err);
  }
  // "Earlier" / "Later" keep the focus on themselves; anything else lands on the details.
  const again = refocus && body.querySelector(`button[data-action="${refocus}"]:not(:disabled)`);
  (again || $("detail-heading")).focus();
}

/** Back to the match the details were opened from (also Escape inside the details). */
function toMatch() {
  if (search.opener?.isConnected) search.opener.focus();
}
$("detail-to-match").addEventListener("click", toMatch);
document.querySelector("section.detail").addEventListener("keydown", (e) => {
  if (e.key === "Escape") toMatch();
});

$("detail-back").addEventListener("click", () => {
  if (search.history.length < 2) return;
  search.history.pop();
  openDetail(search.history[search.history.length - 1], { push: false });
});

/**
 * Lines `from..to + extra` of a file, or as many of the `extra` lines as the file has: the API
 * refuses a range past the end (BAD_RANGE), so the end is found by bisection (a few reads, and
 * only near the end of a file).
 */
async function readLines(repo, path, from, to, extra) {
  const base = `${repoPath(repo.owner, repo.name)}/files/${filePath(path)}/lines`;
  const read = (n) => api("GET", `${base}?start=${from}&end=${to + n}`);
  const pastEnd = (err) => {
    if (err.code !== "BAD_RANGE") throw err;
  };
  try {
    return await read(extra);
  } catch (err) {
    pastEnd(err);
  }
  let best = await read(0);
  let [lo, hi] = [0, extra];
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    try {
      best = await read(mid);
      lo = mid;
    } catch (err) {
      pastEnd(err);
      hi = mid;
    }
  }
  return best;
}

async function renderLines(view) {
  const { repo, path } = view;
  view.start ??= Math.max(1, view.from - CONTEXT_LINES);
  view.end ??= view.to + CONTEXT_LINES;
  const wanted = view.end;
  const res = await readLines(repo, path, view.start, view.to, Math.max(0, wanted - view.to));
  view.end = res.end;
  view.atEnd = res.end < wanted;
  const lines = res.text.split("\n");
  const code = h(
    "code",
    {},
    lines.map((text, i) => {
      const n = res.start + i;
      const hit = n >= view.from && n <= view.to;
      return h("span", { class: hit ? "line hit" : "line", dataset: { line: n } }, h("span", { class: "ln", "aria-hidden": "true" }, String(n)), text, "\n");
    }),
  );
  const earlier = h("button", {
    type: "button",
    dataset: { action: "earlier" },
    disabled: res.start <= 1,
    onclick: () => {
      view.start = Math.max(1, view.start - CONTEXT_LINES);
      openDetail(view, { push: false, refocus: "earlier" });
    },
  }, "Earlier lines");
  const later = h("button", {
    type: "button",
    dataset: { action: "later" },
    disabled: view.atEnd,
    onclick: () => {
      view.end += CONTEXT_LINES;
      openDetail(view, { push: false, refocus: "later" });
    },
  }, "Later lines");
  return [
    h("p", { class: "file-title" }, h("span", { class: "path" }, path), ` lines ${res.start}–${res.end} of ${repo.owner}/${repo.name}`),
    h("div", { class: "row" }, earlier, later),
    h("pre", { class: "file-view", tabindex: "0", "aria-label": `${path}, lines ${res.start} to ${res.end}`, dataset: { path, start: res.start, end: res.end } }, code),
  ];
}

async function renderSymbol(view) {
  const base = `${repoPath(view.repo.owner, view.repo.name)}/symbols/${enc(view.id)}/references`;
  const [callers, callees] = await Promise.all([
    api("GET", `${base}?direction=callers&limit=50`),
    api("GET", `${base}?direction=callees&limit=50`),
  ]);
  const s = callers.symbol;
  const linesOf = (path, from, to = from) => () => openDetail({ kind: "lines", repo: view.repo, path, from, to });
  const edgeList = (label, res) =>
    h(
      "section",
      { class: "edges", "aria-label": label },
      h("h3", {}, `${label} (${res.references.length}${res.nextOffset ? "+" : ""})`),
      res.references.length
        ? h(
            "ul",
            { class: "edge-list", dataset: { direction: label.toLowerCase() } },
            res.references.map((r) =>
              h(
                "li",
                { dataset: { name: r.symbol?.name ?? r.dstName ?? "" } },
                r.symbol
                  ? h("button", { type: "button", class: "follow", "aria-label": `Follow ${r.symbol.kind.toLowerCase()} ${r.symbol.name}`, onclick: () => openDetail({ kind: "symbol", repo: view.repo, id: r.symbol.id }) }, h("span", { class: "kind" }, r.symbol.kind.toLowerCase()), " ", r.symbol.name)
                  : h("span", { class: "external", title: "Outside the index" }, r.dstName ?? "?"),
                " ",
                h("button", { type: "button", class: "site", "aria-label": `Open ${r.path} at line ${r.line}`, onclick: linesOf(r.path, r.line) }, `${r.path}:${r.line}`),
                r.depth > 1 ? h("span", { class: "help" }, " (indirect)") : null,
              ),
            ),
          )
        : h("p", { class: "help" }, "None in the index."),
    );
  return [
    h("p", { class: "symbol-title", dataset: { symbolId: s.id } }, h("span", { class: "kind" }, s.kind.toLowerCase()), " ", h("strong", {}, s.name)),
    s.fqn !== s.name ? h("p", { class: "help" }, s.fqn) : null,
    h("p", {}, h("button", { type: "button", class: "open-lines", onclick: linesOf(s.path, s.startLine, s.endLine) }, h("span", { class: "path" }, s.path), h("span", { class: "lines" }, `${s.startLine}–${s.endLine}`))),
    s.signature ? h("pre", { class: "snippet" }, h("code", {}, s.signature)) : null,
    s.doc ? h("p", { class: "doc" }, s.doc) : null,
    s.route ? h("p", {}, `${s.httpMethod ?? "ANY"} ${s.route}`) : null,
    edgeList("Callers", callers),
    edgeList("Callees", callees),
  ];
}

// ----------------------------------------------------------------------------------------------
// Repositories
// ----------------------------------------------------------------------------------------------

const repos = { list: null, selected: null, status: null, filesFor: null, files: null, timer: 0, listTimer: 0, seq: 0 };

function stopPolling() {
  clearTimeout(repos.timer);
  clearTimeout(repos.listTimer);
  repos.timer = repos.listTimer = 0;
}

const reposVisible = () => document.body.dataset.tab === "repos" && !document.hidden;

async function loadRepos() {
  clearTimeout(repos.listTimer);
  const state = $("repos-state");
  const epoch = keyEpoch;
  try {
    const { repos: list } = await api("GET", "/v1/repos");
    if (epoch !== keyEpoch) return;
    repos.list = list;
    showError($("repos-error"), null);
    state.textContent = list.length ? count(list.length, "repository", "repositories") : "No repository this key may read yet.";
    renderRepoList();
    if (repos.selected && !list.some((r) => `${r.owner}/${r.name}` === repos.selected)) selectRepo(null);
    else if (repos.selected && !repos.timer) loadRepo();
    if (list.some((r) => r.status === "INDEXING") && reposVisible()) repos.listTimer = setTimeout(loadRepos, LIST_POLL_MS);
  } catch (err) {
    if (epoch !== keyEpoch) return;
    repos.list = [];
    state.textContent = "";
    fill($("repo-list"));
    showError($("repos-error"), err);
  }
}

function renderRepoList() {
  fill(
    $("repo-list"),
    repos.list.map((r) => {
      const full = `${r.owner}/${r.name}`;
      return h(
        "li",
        { dataset: { repo: full, status: r.status } },
        h(
          "button",
          { type: "button", class: "repo", "aria-current": repos.selected === full ? "true" : undefined, onclick: () => selectRepo(full) },
          h("span", { class: "name" }, full),
          badge(r.status),
          h("span", { class: "counts" }, `${count(r.fileCount, "file")} · ${count(r.chunkCount, "chunk")} · ${ago(r.updatedAt)}`),
        ),
      );
    }),
  );
}

function selectRepo(full) {
  repos.selected = full;
  repos.status = null;
  repos.files = null;
  repos.filesFor = null;
  clearTimeout(repos.timer);
  repos.timer = 0;
  showError($("repo-error"), null);
  if (repos.list) renderRepoList();
  if (!full) {
    fill($("repo-body"), h("p", { class: "help" }, "Choose a repository to see its jobs and files."));
    $("repo-heading").textContent = "Repository";
    setRepoActions(null);
    return;
  }
  $("repo-heading").textContent = full;
  fill($("repo-body"), h("p", { class: "help" }, "Loading…"));
  loadRepo().then(() => $("repo-heading").focus());
}

async function loadRepo() {
  clearTimeout(repos.timer);
  repos.timer = 0;
  const full = repos.selected;
  if (!full) return;
  const [owner, name] = full.split("/");
  const seq = ++repos.seq;
  try {
    const status = await api("GET", `${repoPath(owner, name)}/status`);
    // Files change only when a job finishes: read them again when the latest job is another one
    // or has just ended.
    const mark = `${status.job?.id}:${status.job?.status}`;
    if (repos.filesFor !== mark) {
      const files = await api("GET", `${repoPath(owner, name)}/files`);
      if (seq !== repos.seq) return;
      repos.files = files.files;
      repos.filesFor = mark;
    }
    if (seq !== repos.seq) return;
    const was = repos.status;
    repos.status = status;
    renderRepo(status);
    showError($("repo-error"), null);
    const running = status.job && !TERMINAL.has(status.job.status);
    if (running && reposVisible()) repos.timer = setTimeout(loadRepo, POLL_MS);
    // A job that just ended changes the list's status and counts.
    if (was?.job && !TERMINAL.has(was.job.status) && !running) loadRepos();
    else if (running && !repos.listTimer && reposVisible()) repos.listTimer = setTimeout(loadRepos, LIST_POLL_MS);
  } catch (err) {
    if (seq !== repos.seq) return;
    showError($("repo-error"), err);
    if (err.code === "REPO_NOT_FOUND") loadRepos();
    // A job was running: keep watching, more slowly (rate limit, a network hiccup).
    else if (repos.status?.job && !TERMINAL.has(repos.status.job.status) && reposVisible()) {
      repos.timer = setTimeout(loadRepo, 5 * POLL_MS);
    }
  }
}

function setRepoActions(status) {
  const reindex = $("repo-reindex");
  const del = $("repo-delete");
  reindex.hidden = del.hidden = !status;
  if (!status) return;
  const github = Boolean(status.github) || status.repo.source === "github";
  reindex.textContent = github ? "Re-index from GitHub" : "Re-index from a folder…";
  reindex.dataset.mode = github ? "github" : "folder";
}

function jobLine(job) {
  const f = job.files;
  const c = job.chunks;
  return [
    `${job.progress.toFixed(0)} %`,
    job.stage ? `stage ${job.stage}` : null,
    job.status === "RUNNING" ? `ETA ${seconds(job.etaSeconds)}` : null,
    `files ${f.done}/${f.total}`,
    c.total ? `chunks ${c.indexed}/${c.total} indexed` : null,
    job.attempt > 1 ? `attempt ${job.attempt} of ${job.maxAttempts}` : null,
  ]
    .filter(Boolean)
    .join(" · ");
}

const errorText = (e) => `${e.code} (${e.stage}, attempt ${e.attempt}): ${e.message}`;

function renderRepo(status) {
  setRepoActions(status);
  const r = status.repo;
  const job = status.job;
  const running = job && !TERMINAL.has(job.status);
  const facts = [
    ["Status", badge(r.status)],
    ["Searchable", r.readyAt ? `since ${ago(r.readyAt)}` : "not yet"],
    ["Files", String(r.fileCount)],
    ["Chunks", String(r.chunkCount)],
    ["Source", r.source ?? "—"],
    r.ref ? ["Ref", r.ref] : null,
    status.embedder ? ["Embedder", `${status.embedder.model} (${status.embedder.dims} dims)`] : null,
    ["Vector index", status.vectorIndex],
    status.github ? ["GitHub", [status.github.ref ?? "default branch", status.github.webhook ? "push webhook" : null, status.github.syncIntervalMinutes ? `every ${status.github.syncIntervalMinutes} min` : null].filter(Boolean).join(" · ")] : null,
    status.github?.queuedFetch ? ["Queued fetch", `after job ${status.github.queuedFetch.afterJob}`] : null,
  ].filter(Boolean);
  const latest = job
    ? h(
        "section",
        { class: "job-now", "aria-label": "Latest job", dataset: { jobId: job.id, jobStatus: job.status } },
        h("h3", {}, running ? "Indexing now" : "Latest job", " ", badge(job.status)),
        running ? h("progress", { max: "100", value: String(job.progress), "aria-label": "Indexing progress" }) : null,
        h("p", { class: "job-line" }, jobLine(job)),
        job.lastError ? h("p", { class: "error" }, errorText(job.lastError)) : null,
      )
    : h("p", { class: "help" }, "No job yet.");
  const jobsTable = h(
    "table",
    { class: "jobs" },
    h("caption", {}, "Recent jobs"),
    h("thead", {}, h("tr", {}, ["Job", "Source", "Status", "Queued", "Files", "Chunks", "Error"].map((c) => h("th", { scope: "col" }, c)))),
    h(
      "tbody",
      {},
      status.recentJobs.map((j) =>
        h(
          "tr",
          { dataset: { jobId: j.id, status: j.status } },
          h("td", { class: "mono", title: j.id }, j.id.slice(0, 12)),
          h("td", {}, j.source),
          h("td", {}, badge(j.status)),
          h("td", { title: j.queuedAt }, ago(j.queuedAt)),
          h("td", {}, `${j.files.done}/${j.files.total}${j.files.skipped ? ` (${j.files.skipped} skipped)` : ""}`),
          h("td", {}, `${j.chunks.indexed}/${j.chunks.total}`),
          h("td", { class: j.lastError ? "err" : "" }, j.lastError ? errorText(j.lastError) : ""),
        ),
      ),
    ),
  );
  const files = repos.files ?? [];
  const filter = h("input", { type: "search", id: "file-filter", "aria-label": "Filter files by path", placeholder: "Filter by path", spellcheck: "false" });
  const tbody = h("tbody", {});
  const note = h("p", { class: "help", role: "status" });
  const drawFiles = () => {
    const q = filter.value.trim().toLowerCase();
    const shown = files.filter((f) => !q || f.path.toLowerCase().includes(q));
    fill(
      tbody,
      shown.slice(0, MAX_FILE_ROWS).map((f) =>
        h(
          "tr",
          { dataset: { path: f.path } },
          h("td", { class: "mono path" }, f.path),
          h("td", {}, f.language),
          h("td", {}, String(f.chunkCount)),
          h("td", {}, bytes(f.size)),
          h("td", {}, f.tags.join(", ")),
        ),
      ),
    );
    note.textContent = shown.length > MAX_FILE_ROWS ? `Showing ${MAX_FILE_ROWS} of ${shown.length} files.` : `${shown.length} of ${files.length} files.`;
  };
  filter.addEventListener("input", drawFiles);
  const previous = document.getElementById("file-filter");
  if (previous) filter.value = previous.value;
  drawFiles();
  fill(
    $("repo-body"),
    h("dl", { class: "facts" }, facts.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v)))),
    status.lastError && !job?.lastError ? h("p", { class: "error" }, errorText(status.lastError)) : null,
    latest,
    h("div", { class: "table-wrap" }, jobsTable),
    h("section", { class: "files", "aria-label": "Indexed files" }, h("h3", {}, "Files"), filter, note, h("div", { class: "table-wrap" }, h("table", { class: "files-table" }, h("caption", { class: "visually-hidden" }, "Indexed files"), h("thead", {}, h("tr", {}, ["Path", "Language", "Chunks", "Size", "Tags"].map((c) => h("th", { scope: "col" }, c)))), tbody))),
  );
  if (previous === document.activeElement) filter.focus();
}

// Re-index, upload, delete

/** Text files of a folder input: paths relative to the chosen folder; ignored dirs and binaries out. */
async function readFolder(fileList) {
  const out = [];
  for (const f of fileList) {
    const rel = (f.webkitRelativePath || f.name).split("/");
    if (rel.length > 1) rel.shift(); // the chosen folder itself is the repository's root
    if (rel.slice(0, -1).some((d) => IGNORED_DIRS.has(d))) continue;
    const buf = new Uint8Array(await f.arrayBuffer());
    if (buf.subarray(0, 8000).includes(0)) continue; // binary
    let content;
    try {
      content = new TextDecoder("utf-8", { fatal: true }).decode(buf);
    } catch {
      continue;
    }
    out.push({ path: rel.join("/"), content });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

async function upload(full, fileList, replace) {
  const [owner, name] = full.split("/");
  const files = await readFolder(fileList);
  if (!files.length) throw new Error("the folder has no text file to index");
  const res = await api("POST", `${repoPath(owner, name)}/files`, { files, replace });
  return res;
}

$("upload-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const full = $("upload-repo").value.trim();
  const go = $("upload-go");
  go.disabled = true;
  try {
    const res = await upload(full, $("upload-files").files, $("upload-replace").checked);
    $("repos-state").textContent = `Job ${res.job.id} ${res.reused ? "joined" : "started"} for ${full}: ${res.received} files sent.`;
    $("upload-form").reset();
    $("upload-replace").checked = true;
    await loadRepos();
    selectRepo(full);
  } catch (err) {
    showError($("repos-error"), err);
  } finally {
    go.disabled = false;
  }
});

const reindexInput = h("input", { type: "file", webkitdirectory: true, multiple: true, hidden: true, id: "reindex-files", "aria-label": "Folder to re-index from" });
document.body.append(reindexInput);
reindexInput.addEventListener("change", async () => {
  const full = repos.selected;
  if (!full || !reindexInput.files.length) return;
  try {
    await upload(full, reindexInput.files, true);
    reindexInput.value = "";
    await loadRepo();
  } catch (err) {
    showError($("repo-error"), err);
  }
});

$("repo-reindex").addEventListener("click", async () => {
  const full = repos.selected;
  if (!full) return;
  if ($("repo-reindex").dataset.mode === "folder") {
    reindexInput.click();
    return;
  }
  const [owner, name] = full.split("/");
  const ref = repos.status?.github?.ref ?? repos.status?.repo.ref;
  try {
    await api("POST", `${repoPath(owner, name)}/index`, ref ? { ref } : {});
    await loadRepo();
  } catch (err) {
    showError($("repo-error"), err);
  }
});

const dialog = $("delete-dialog");
$("repo-delete").addEventListener("click", () => {
  const full = repos.selected;
  if (!full) return;
  $("delete-text").textContent = `${full}: its files, chunks, vectors and jobs are removed for good.`;
  $("delete-confirm").value = "";
  $("delete-go").disabled = true;
  dialog.returnValue = "";
  dialog.showModal();
});
$("delete-confirm").addEventListener("input", () => {
  $("delete-go").disabled = $("delete-confirm").value.trim() !== repos.selected;
});
dialog.addEventListener("close", async () => {
  const full = repos.selected;
  if (dialog.returnValue !== "delete" || !full || $("delete-confirm").value.trim() !== full) {
    $("repo-delete").focus();
    return;
  }
  const [owner, name] = full.split("/");
  try {
    const res = await api("DELETE", repoPath(owner, name));
    $("repos-state").textContent = `Deleted ${full}: ${res.deleted.files} files, ${res.deleted.chunks} chunks.`;
    selectRepo(null);
    await loadRepos();
    $("repos-heading").focus();
  } catch (err) {
    showError($("repo-error"), err);
    $("repo-delete").focus();
  }
});

$("repos-refresh").addEventListener("click", () => {
  loadRepos();
});
document.addEventListener("visibilitychange", () => {
  if (reposVisible()) loadRepos();
});

// ----------------------------------------------------------------------------------------------
// Start
// ----------------------------------------------------------------------------------------------

renderKeyState();
offerSignIn();
finishSignIn().then((back) => {
  if (back) keyChanged();
});
showTab(location.hash.slice(1) || "preview");
