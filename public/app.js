// edgerag chunking preview: the page. The chunking itself happens in chunker-worker.js (the Rust
// core compiled to wasm); this file only gathers input, draws the result and talks to the worker's
// own `POST /v1/chunk` when asked to compare. No framework, no network beyond this origin.

const $ = (id) => document.getElementById(id);
const LINE_HEIGHT = 20; // px; must equal --line-height in style.css
const EDITOR_PAD = 8; // px; the editor's top padding in style.css
const DEBOUNCE_MS = 120;
const LIMIT_FIELDS = ["maxTokens", "maxLines", "overlapLines", "docstringLines", "markdownSplitDepth"];
const IGNORED_DIRS = new Set([".git", ".github", "node_modules", "dist", "build", "target", ".wrangler"]);
const MAX_FILES = 2000;

const SAMPLE = `import { EventEmitter } from "node:events";

/**
 * A 2-D point. Immutable: every operation returns a new point.
 */
export class Point {
  constructor(readonly x: number, readonly y: number) {}

  /** Distance from the origin. */
  norm(): number {
    return Math.hypot(this.x, this.y);
  }

  add(other: Point): Point {
    return new Point(this.x + other.x, this.y + other.y);
  }
}

export interface Shape {
  area(): number;
  contains(p: Point): boolean;
}

export enum Unit {
  Pixel = "px",
  Em = "em",
}

export type Polygon = readonly Point[];

/** Fires "moved" whenever the cursor position changes. */
export class Cursor extends EventEmitter {
  private position = new Point(0, 0);

  moveTo(p: Point): void {
    this.position = p;
    this.emit("moved", p);
  }
}

export function centroid(points: Polygon): Point {
  const n = points.length || 1;
  const sum = points.reduce((acc, p) => acc.add(p), new Point(0, 0));
  return new Point(sum.x / n, sum.y / n);
}
`;

// ----------------------------------------------------------------------------------------------
// State
// ----------------------------------------------------------------------------------------------

const state = {
  files: [{ path: "src/geometry.ts", text: SAMPLE }],
  current: 0,
  info: null, // {loadMs, version, defaults, presets, languages} from the worker
  result: null, // the rendered result: {path, text, options, json, chunks, ms, language}
  selected: -1,
  generation: 0,
  fileCounts: new Map(), // "path\0options\0text length" → {count} | {error}
};

// ----------------------------------------------------------------------------------------------
// The chunker (a module Web Worker; restarted after a panic)
// ----------------------------------------------------------------------------------------------

class Chunker {
  constructor() {
    this.seq = 0;
    this.pending = new Map();
    this.start();
  }

  start() {
    this.worker = new Worker(new URL("./chunker-worker.js", import.meta.url), { type: "module" });
    this.worker.onmessage = ({ data }) => {
      const p = this.pending.get(data.id);
      if (!p) return;
      this.pending.delete(data.id);
      if (data.ok) p.resolve(data);
      else p.reject(Object.assign(new Error(data.error.message), { code: data.error.code, fatal: data.fatal }));
      // A panic leaves the wasm instance unusable: start a fresh one. (A load failure is not
      // retried: it would only fail again.)
      if (data.fatal && data.error.code === "INTERNAL_PANIC") this.restart(data.error);
    };
    this.worker.onerror = (e) => {
      e.preventDefault();
      this.failAll({ code: "LOAD_FAILED", message: e.message || "the chunker script failed to load" });
    };
    this.info = this.call({ op: "info" });
  }

  failAll(error) {
    for (const p of this.pending.values()) p.reject(Object.assign(new Error(error.message), error));
    this.pending.clear();
  }

  restart(error) {
    this.worker.terminate();
    this.failAll({ code: error.code, message: "the chunker restarted after an error" });
    this.start();
  }

  call(msg) {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...msg, id });
    });
  }

  chunk(path, text, options) {
    return this.call({ op: "chunk", path, text, options });
  }
}

// Started the first time the preview tab is shown (see the end of this file): the console's
// other tabs never download the wasm.
let chunker = null;

// ----------------------------------------------------------------------------------------------
// Elements
// ----------------------------------------------------------------------------------------------

const el = {
  status: $("status"),
  statusText: $("status-text"),
  path: $("path"),
  language: $("language"),
  preset: $("preset"),
  form: $("options"),
  optionsError: $("options-error"),
  optionsJson: $("options-json"),
  fileInput: $("file-input"),
  folderInput: $("folder-input"),
  fileSelect: $("file-select"),
  fileSelectLabel: $("file-select-label"),
  clear: $("clear"),
  source: $("source"),
  shade: $("shade"),
  numbers: $("numbers"),
  bars: $("bars"),
  gutter: $("gutter"),
  totals: $("totals"),
  warnings: $("warnings"),
  chunkError: $("chunk-error"),
  list: $("chunk-list"),
  compare: $("compare"),
  compareResult: $("compare-result"),
  exportJson: $("export-json"),
  exportJsonl: $("export-jsonl"),
  dropOverlay: $("drop-overlay"),
  toast: $("toast"),
};

const current = () => state.files[state.current];

function setStatus(kind, text) {
  el.status.dataset.state = kind;
  el.statusText.textContent = text;
}

function toast(text) {
  el.toast.textContent = text;
  el.toast.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => el.toast.classList.remove("show"), 1800);
}

const escapeHtml = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

// ----------------------------------------------------------------------------------------------
// Options
// ----------------------------------------------------------------------------------------------

function presetConfig(name) {
  return state.info?.presets.find((p) => p.name === name)?.config ?? state.info?.defaults;
}

function fillLimits(config) {
  for (const f of LIMIT_FIELDS) el.form.elements[f].value = String(config[f]);
}

/** The options object sent to the chunker: the preset plus only the fields that differ from it. */
function readOptions() {
  const options = { preset: el.preset.value };
  const base = presetConfig(options.preset);
  for (const f of LIMIT_FIELDS) {
    const input = el.form.elements[f];
    if (!input.checkValidity() || input.value.trim() === "") {
      const label = document.querySelector(`label[for="${f}"]`).textContent;
      throw Object.assign(new Error(`${label}: ${input.validationMessage || "enter a whole number"}`), { field: input });
    }
    const value = Number(input.value);
    if (value !== base[f]) options[f] = value;
  }
  if (el.language.value) options.language = el.language.value;
  return options;
}

// ----------------------------------------------------------------------------------------------
// Chunking (debounced; one request in flight, the latest input wins)
// ----------------------------------------------------------------------------------------------

let timer = 0;
let running = false;
let again = false;

function schedule(delay = DEBOUNCE_MS) {
  document.body.dataset.pending = "true";
  clearTimeout(timer);
  timer = setTimeout(() => {
    timer = 0;
    run();
  }, delay);
}

/** `data-pending` is "false" once nothing is scheduled or running (the browser test waits on it). */
function settle() {
  if (!timer && !running) document.body.dataset.pending = "false";
}

async function run() {
  if (!state.info) return; // the first render happens once the chunker is ready
  if (running) {
    again = true;
    return;
  }
  let options;
  try {
    options = readOptions();
    el.optionsError.hidden = true;
  } catch (e) {
    el.optionsError.textContent = e.message;
    el.optionsError.hidden = false;
    settle();
    return;
  }
  const optionsJson = JSON.stringify(options);
  el.optionsJson.textContent = JSON.stringify(options, null, 2);
  const { path, text } = current();
  running = true;
  setStatus("busy", "Chunking…");
  try {
    const reply = await chunker.chunk(path, text, optionsJson);
    const chunks = JSON.parse(reply.json);
    state.result = { path, text, options: optionsJson, json: reply.json, chunks, ms: reply.ms };
    state.fileCounts.set(countKey(path, optionsJson, text), { count: chunks.length });
    el.chunkError.hidden = true;
    setStatus("ready", readyText(reply.ms));
  } catch (e) {
    state.result = { path, text, options: optionsJson, json: null, chunks: [], ms: 0, error: e };
    state.fileCounts.set(countKey(path, optionsJson, text), { error: e.code });
    el.chunkError.textContent = `${e.code ?? "ERROR"}: ${e.message}`;
    el.chunkError.hidden = false;
    setStatus(e.fatal ? "error" : "ready", e.fatal ? "The chunker crashed and was restarted" : readyText());
  } finally {
    running = false;
  }
  render();
  if (again) {
    again = false;
    run();
    return;
  }
  settle();
  if (el.compare.checked) compareWithServer();
  if (state.files.length > 1) countOtherFiles(optionsJson);
}

function readyText(ms) {
  const i = state.info;
  const grammars = i.version.grammars.length;
  const took = ms === undefined ? "" : ` · chunked in ${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  return `Ready · v${i.version.version}, ${grammars} grammar${grammars === 1 ? "" : "s"} · loaded in ${i.loadMs} ms${took}`;
}

const countKey = (path, options, text) => `${path}\0${options}\0${text.length}\0${text.slice(0, 64)}`;

/** Chunk counts for the file picker, computed in the background for the files not on screen. */
async function countOtherFiles(optionsJson) {
  const token = (countOtherFiles.token = {});
  for (const [i, file] of state.files.entries()) {
    if (countOtherFiles.token !== token) return;
    const key = countKey(file.path, optionsJson, file.text);
    if (i === state.current || state.fileCounts.has(key)) continue;
    try {
      const reply = await chunker.chunk(file.path, file.text, optionsJson);
      state.fileCounts.set(key, { count: JSON.parse(reply.json).length });
    } catch (e) {
      state.fileCounts.set(key, { error: e.code });
    }
    if (i % 20 === 0) renderFileSelect(optionsJson);
  }
  if (countOtherFiles.token === token) renderFileSelect(optionsJson);
}

// ----------------------------------------------------------------------------------------------
// Rendering
// ----------------------------------------------------------------------------------------------

/** Byte offset (UTF-8, what the Rust core reports) → UTF-16 index (what JS strings use). */
function byteToUtf16(text) {
  if (!/[^\x00-\x7f]/.test(text)) return (b) => b;
  const starts = []; // starts[k] = byte offset of UTF-16 index k
  let byte = 0;
  for (let i = 0; i < text.length; i++) {
    starts.push(byte);
    const c = text.charCodeAt(i);
    if (c < 0x80) byte += 1;
    else if (c < 0x800) byte += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      byte += 4;
      starts.push(byte); // the low surrogate never starts a char; map it past the pair
      i++;
    } else byte += 3; // BMP char, or a lone surrogate (sent to Rust as U+FFFD, also 3 bytes)
  }
  starts.push(byte);
  return (b) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] < b) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** True when a chunk boundary falls between two non-blank characters of one line (chunkers may
 * leave out indentation or a line's trailing newline; that is not a cut). */
function cutInsideLine(text, u0, u1) {
  const before = text.lastIndexOf("\n", u0 - 1) + 1;
  const after = text.indexOf("\n", u1);
  const blank = (s) => !/\S/.test(s);
  return !blank(text.slice(before, u0)) || !blank(text.slice(u1, after < 0 ? text.length : after));
}

function render() {
  const r = state.result;
  state.generation++;
  document.body.dataset.generation = String(state.generation);
  const toU16 = byteToUtf16(r.text);
  for (const c of r.chunks) {
    c.u0 = toU16(c.startByte);
    c.u1 = toU16(c.endByte);
    c.cutInsideLine = cutInsideLine(r.text, c.u0, c.u1);
  }
  if (state.selected >= r.chunks.length) state.selected = -1;
  renderTotals();
  renderShade();
  renderGutter();
  renderList();
  renderFileSelect(r.options);
  const auto = el.language.options[0];
  const lang = r.chunks[0]?.language;
  if (lang && !el.language.value) auto.textContent = `Auto (${lang})`;
  el.compareResult.textContent = el.compare.checked ? el.compareResult.textContent : "";
}

function renderTotals() {
  const { chunks, text } = state.result;
  if (!chunks.length) {
    el.totals.textContent = text.length ? "No chunks" : "Paste or type some text, or drop files";
    el.warnings.hidden = true;
    return;
  }
  const tokens = chunks.map((c) => c.tokenCount);
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  const totalLines = lines.length;
  const covered = new Uint8Array(totalLines + 2);
  for (const c of chunks) for (let l = c.startLine; l <= c.endLine; l++) covered[l] = 1;
  let coveredLines = 0;
  let lostLines = 0; // non-blank lines in no chunk: content the index would never see
  for (let l = 1; l <= totalLines; l++) {
    coveredLines += covered[l];
    if (!covered[l] && /\S/.test(lines[l - 1])) lostLines++;
  }
  const mean = tokens.reduce((a, b) => a + b, 0) / tokens.length;
  el.totals.innerHTML = [
    `<b>${chunks.length}</b> chunk${chunks.length === 1 ? "" : "s"}`,
    `mean <b>${Math.round(mean)}</b> tokens`,
    `max <b>${Math.max(...tokens)}</b>`,
    `lines covered <b>${coveredLines}/${totalLines}</b>`,
  ].join(" · ");
  el.totals.dataset.chunks = String(chunks.length);

  const warnings = [];
  const cut = chunks.filter((c) => c.cutInsideLine);
  if (cut.length) {
    const which = cut.slice(0, 5).map((c) => `#${c.chunkIndex}`).join(", ") + (cut.length > 5 ? "…" : "");
    warnings.push(`${cut.length} chunk${cut.length === 1 ? " was" : "s were"} cut inside a line (${which}): a single line exceeds the token limit.`);
  }
  if (lostLines) warnings.push(`${lostLines} non-blank line${lostLines === 1 ? " is" : "s are"} in no chunk.`);
  if (chunks.some((c) => c.metadata.fallback === "PARSE_OVER_BUDGET")) {
    warnings.push(
      "Too large to parse within the chunker's budget: cut by declarations without its syntax tree (PARSE_OVER_BUDGET); indexed, it has no code graph.",
    );
  }
  el.warnings.textContent = warnings.join(" ");
  el.warnings.hidden = warnings.length === 0;
}

/** The shading layer behind the textarea: a full-width band per chunk (line granularity), striped
 * bands where consecutive chunks share lines, and a red marker wherever a chunk starts or ends
 * inside a line. Only the lines with such a cut carry text (transparent, to put the marker at the
 * right column), so the layer stays cheap for megabyte files. */
function renderShade() {
  const { text, chunks } = state.result;
  const top = (line) => EDITOR_PAD + (line - 1) * LINE_HEIGHT;
  const html = [];
  for (const c of chunks) {
    const cls = `band ${c.chunkIndex % 2 ? "b" : "a"}${c.chunkIndex === state.selected ? " sel" : ""}`;
    html.push(`<div class="${cls}" style="top:${top(c.startLine)}px;height:${(c.endLine - c.startLine + 1) * LINE_HEIGHT}px"></div>`);
  }
  for (let i = 1; i < chunks.length; i++) {
    const first = chunks[i].startLine;
    const last = Math.min(chunks[i - 1].endLine, chunks[i].endLine);
    if (first <= last) {
      html.push(`<div class="band ov" style="top:${top(first)}px;height:${(last - first + 1) * LINE_HEIGHT}px"></div>`);
    }
  }
  const cuts = new Set();
  for (const c of chunks) if (c.cutInsideLine) cuts.add(c.u0).add(c.u1);
  for (const u of cuts) {
    const lineStart = text.lastIndexOf("\n", u - 1) + 1;
    const after = text.indexOf("\n", u);
    // A boundary at the very start or end of its line's content is not a cut.
    if (!/\S/.test(text.slice(lineStart, u)) || !/\S/.test(text.slice(u, after < 0 ? text.length : after))) continue;
    const line = lineOf(text, lineStart);
    html.push(`<pre class="cutline" style="top:${top(line)}px">${escapeHtml(text.slice(lineStart, u))}<span class="cut"></span></pre>`);
  }
  el.shade.innerHTML = html.join("");
  el.shade.style.width = `${el.source.scrollWidth}px`;
}

/** 1-based line number of a UTF-16 offset (counting newlines; only used for the few cut lines). */
function lineOf(text, u) {
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < u; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** Gutter: chunk bars for the whole file; line numbers only around the visible window. */
function renderGutter() {
  const { chunks } = state.result;
  const laneEnds = []; // lanes so that overlapping chunks sit side by side
  const bars = chunks.map((c) => {
    let lane = laneEnds.findIndex((end) => end < c.startLine);
    if (lane < 0) lane = laneEnds.length;
    laneEnds[lane] = c.endLine;
    const top = (c.startLine - 1) * LINE_HEIGHT;
    const height = (c.endLine - c.startLine + 1) * LINE_HEIGHT;
    const cls = `bar ${c.chunkIndex % 2 ? "b" : "a"}${c.chunkIndex === state.selected ? " sel" : ""}`;
    return `<span class="${cls}" data-index="${c.chunkIndex}" style="top:${top}px;height:${height}px;left:${lane * 5}px" title="#${c.chunkIndex} ${c.type} L${c.startLine}–${c.endLine}"></span>`;
  });
  el.bars.innerHTML = bars.join("");
  renderLineNumbers(true);
}

const NUMBERS_MARGIN = 200; // lines rendered above and below the visible ones
let numbersRange = [0, 0];

function renderLineNumbers(force = false) {
  const total = lineCount;
  const first = Math.floor(el.source.scrollTop / LINE_HEIGHT) + 1;
  const visible = Math.ceil(el.source.clientHeight / LINE_HEIGHT) + 1;
  if (!force && first - numbersRange[0] > 20 && numbersRange[1] - (first + visible) > 20) return;
  if (!force && numbersRange[0] <= 1 && numbersRange[1] >= total) return;
  const from = Math.max(1, first - NUMBERS_MARGIN);
  const to = Math.min(total, first + visible + NUMBERS_MARGIN);
  numbersRange = [from, to];
  const numbers = [];
  for (let n = from; n <= to; n++) numbers.push(n);
  el.numbers.style.top = `${EDITOR_PAD + (from - 1) * LINE_HEIGHT}px`;
  el.numbers.textContent = numbers.join("\n");
}

function chunkLabel(c) {
  const m = c.metadata;
  if (m.headingPath?.length) return m.headingPath.join(" › ");
  return m.symbolName ?? "";
}

function renderList() {
  const { chunks } = state.result;
  const short = (h) => h.slice(0, 12);
  const options = JSON.parse(state.result.options);
  const maxTokens = options.maxTokens ?? presetConfig(options.preset).maxTokens;
  const items = chunks.map((c) => {
    const m = c.metadata;
    const label = chunkLabel(c);
    const lines = c.endLine - c.startLine + 1;
    const over = c.tokenCount > maxTokens;
    const kw = c.keywords.length
      ? `<ul class="keywords" aria-label="Keywords">${c.keywords.map((k) => `<li>${escapeHtml(k)}</li>`).join("")}</ul>`
      : "";
    return `<li class="chunk" data-index="${c.chunkIndex}" data-type="${c.type}" data-start-line="${c.startLine}" data-end-line="${c.endLine}" data-start-byte="${c.startByte}" data-end-byte="${c.endByte}" data-token-count="${c.tokenCount}" data-id="${c.id}" data-text-hash="${c.textHash}"${c.chunkIndex === state.selected ? ' aria-current="true"' : ""}>
  <button type="button" class="goto" aria-label="Chunk ${c.chunkIndex}: ${c.type}${label ? ` ${escapeHtml(label)}` : ""}, lines ${c.startLine} to ${c.endLine}. Show in source.">
    <span class="idx">#${c.chunkIndex}</span>
    <span class="type t-${c.type}">${c.type}</span>
    <span class="name">${escapeHtml(label)}</span>
    <span class="lines">L${c.startLine}–${c.endLine}</span>
  </button>
  <p class="meta">
    <span>${lines} line${lines === 1 ? "" : "s"}</span>
    <span class="${over ? "over" : ""}">${c.tokenCount} tokens</span>
    ${m.overlapLines ? `<span>${m.overlapLines} overlap</span>` : ""}
    ${m.parentSymbol ? `<span>in <code>${escapeHtml(m.parentSymbol)}</code></span>` : ""}
    ${c.cutInsideLine ? `<span class="cut">cut inside a line</span>` : ""}
  </p>
  ${kw}
  <p class="hashes">
    <span>id <code title="${c.id}">${short(c.id)}</code><button type="button" class="copy" data-copy="${c.id}" aria-label="Copy id of chunk ${c.chunkIndex}">copy</button></span>
    <span>text <code title="${c.textHash}">${short(c.textHash)}</code><button type="button" class="copy" data-copy="${c.textHash}" aria-label="Copy text hash of chunk ${c.chunkIndex}">copy</button></span>
  </p>
</li>`;
  });
  el.list.innerHTML = items.join("");
}

function renderFileSelect(optionsJson) {
  const many = state.files.length > 1;
  el.fileSelect.hidden = el.fileSelectLabel.hidden = !many;
  if (!many) return;
  let total = 0;
  let known = 0;
  const opts = state.files.map((f, i) => {
    const info = state.fileCounts.get(countKey(f.path, optionsJson, f.text));
    if (info?.count !== undefined) {
      total += info.count;
      known++;
    }
    const suffix = info === undefined ? "" : info.error ? ` — ${info.error}` : ` — ${info.count} chunks`;
    return `<option value="${i}"${i === state.current ? " selected" : ""}>${escapeHtml(f.path)}${suffix}</option>`;
  });
  el.fileSelect.innerHTML = opts.join("");
  el.fileSelectLabel.textContent = `Open file (${state.files.length} files, ${total} chunks${known < state.files.length ? " so far" : ""})`;
}

// ----------------------------------------------------------------------------------------------
// Source ⇄ list
// ----------------------------------------------------------------------------------------------

function syncScroll() {
  const { scrollTop, scrollLeft } = el.source;
  el.shade.style.transform = `translate(${-scrollLeft}px, ${-scrollTop}px)`;
  el.gutter.style.transform = `translateY(${-scrollTop}px)`;
  renderLineNumbers();
}

function select(index, { scrollSource = false, scrollList = false } = {}) {
  const r = state.result;
  if (!r || index === state.selected) return;
  state.selected = index;
  for (const li of el.list.querySelectorAll('li[aria-current="true"]')) li.removeAttribute("aria-current");
  const li = el.list.querySelector(`li[data-index="${index}"]`);
  li?.setAttribute("aria-current", "true");
  if (scrollList) li?.scrollIntoView({ block: "nearest" });
  for (const band of el.shade.querySelectorAll(".band:not(.ov)")) band.classList.remove("sel");
  el.shade.querySelectorAll(".band:not(.ov)")[index]?.classList.add("sel");
  for (const bar of el.gutter.querySelectorAll(".bar")) bar.classList.toggle("sel", Number(bar.dataset.index) === index);
  const c = r.chunks[index];
  if (scrollSource && c) {
    el.source.scrollTop = Math.max(0, (c.startLine - 2) * LINE_HEIGHT);
    syncScroll();
  }
}

/** The chunk under the caret: the latest one starting at or before it (overlaps favour the later). */
function chunkAt(u16) {
  const r = state.result;
  if (!r || r.text !== el.source.value) return -1;
  let found = -1;
  for (const c of r.chunks) if (c.u0 <= u16 && (u16 < c.u1 || (u16 === c.u1 && u16 === r.text.length))) found = c.chunkIndex;
  return found;
}

// ----------------------------------------------------------------------------------------------
// Files (picker, folder, drag and drop)
// ----------------------------------------------------------------------------------------------

async function readFile(file, path) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.subarray(0, 8192).includes(0)) return { path, text: "", skipped: "BINARY_FILE" };
  try {
    return { path, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { path, text: "", skipped: "INVALID_UTF8" };
  }
}

function ignored(path) {
  return path.split("/").some((part) => IGNORED_DIRS.has(part));
}

async function walkEntry(entry, out) {
  if (out.length >= MAX_FILES) return;
  const path = entry.fullPath.replace(/^\/+/, "");
  if (ignored(path)) return;
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
    out.push(await readFile(file, path));
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    for (;;) {
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (!batch.length) break;
      for (const child of batch) await walkEntry(child, out);
    }
  }
}

async function loadFiles(list) {
  const loaded = list.filter((f) => !f.skipped).sort((a, b) => a.path.localeCompare(b.path));
  const skipped = list.length - loaded.length;
  if (!loaded.length) {
    toast(skipped ? `Skipped ${skipped} binary or non-UTF-8 file(s)` : "No files found");
    return;
  }
  state.files = loaded;
  state.fileCounts.clear();
  openFile(0);
  toast(`Loaded ${loaded.length} file${loaded.length === 1 ? "" : "s"}${skipped ? `, skipped ${skipped} binary/non-UTF-8` : ""}`);
}

async function fromInput(input) {
  const files = [...input.files].slice(0, MAX_FILES);
  const read = [];
  for (const f of files) {
    const path = f.webkitRelativePath || f.name;
    if (!ignored(path)) read.push(await readFile(f, path));
  }
  input.value = "";
  await loadFiles(read);
}

function openFile(i) {
  state.current = i;
  state.selected = -1;
  const f = current();
  el.path.value = f.path;
  el.source.value = f.text;
  lineCount = countLines(f.text);
  el.source.scrollTop = 0;
  el.source.scrollLeft = 0;
  schedule(0);
}

// ----------------------------------------------------------------------------------------------
// Export and compare (both speak exactly the `POST /v1/chunk` response format)
// ----------------------------------------------------------------------------------------------

/** `{"files":[{path, language, chunks, error?}], "chunkCount"}` — the API's response bytes, built
 * around the chunk JSON the wasm returned verbatim. */
function apiResponseJson(entries) {
  const files = entries.map((e) => {
    const head = `{"path":${JSON.stringify(e.path)},"language":${JSON.stringify(e.language)},"chunks":${e.json ?? "[]"}`;
    return e.error ? `${head},"error":${JSON.stringify({ code: e.error.code, message: e.error.message })}}` : `${head}}`;
  });
  const count = entries.reduce((n, e) => n + e.count, 0);
  return `{"files":[${files.join(",")}],"chunkCount":${count}}`;
}

async function detectLanguage(path) {
  const options = JSON.parse(state.result?.options ?? "{}");
  if (options.language) return options.language;
  return (await chunker.call({ op: "detect", path })).language;
}

/** Chunk every loaded file (the current one is already done) and build the API response. */
async function exportEntries() {
  const options = state.result.options;
  const entries = [];
  for (const f of state.files) {
    const language = await detectLanguage(f.path);
    try {
      const reply = await chunker.chunk(f.path, f.text, options);
      entries.push({ path: f.path, language, json: reply.json, count: JSON.parse(reply.json).length });
    } catch (e) {
      if (e.fatal) throw e;
      entries.push({ path: f.path, language, json: null, count: 0, error: e });
    }
  }
  return entries;
}

function download(name, body, type) {
  const url = URL.createObjectURL(new Blob([body], { type }));
  const a = Object.assign(document.createElement("a"), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

async function exportAs(kind) {
  if (!state.result) return;
  const entries = await exportEntries();
  const base = state.files.length > 1 ? "chunks" : current().path.split("/").pop() + ".chunks";
  if (kind === "json") {
    download(`${base}.json`, apiResponseJson(entries), "application/json");
  } else {
    // One chunk per line, each exactly as it appears inside the API response.
    const lines = entries.flatMap((e) => (e.json ? JSON.parse(e.json).map((c) => JSON.stringify(c)) : []));
    download(`${base}.jsonl`, lines.map((l) => l + "\n").join(""), "application/x-ndjson");
  }
}

async function compareWithServer() {
  const r = state.result;
  if (!r) return;
  const token = (compareWithServer.token = {});
  el.compareResult.dataset.state = "busy";
  el.compareResult.textContent = "Asking the server…";
  const body = JSON.stringify({ path: r.path, content: r.text, options: JSON.parse(r.options) });
  let status;
  let raw;
  try {
    // The console's API key (console.js keeps it in sessionStorage), for servers without public reads.
    const key = sessionStorage.getItem("edgerag.apiKey");
    const headers = { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) };
    const res = await fetch("/v1/chunk", { method: "POST", headers, body });
    status = res.status;
    raw = await res.text();
  } catch (e) {
    if (compareWithServer.token !== token) return;
    el.compareResult.dataset.state = "error";
    el.compareResult.textContent = `The server did not answer (${e.message}).`;
    return;
  }
  if (compareWithServer.token !== token) return;
  let server;
  try {
    server = JSON.parse(raw);
  } catch {
    server = null;
  }
  if (status === 401) {
    el.compareResult.dataset.state = "error";
    el.compareResult.textContent = "The server wants a bearer token for POST /v1/chunk (PUBLIC_READS is off): type an API key above.";
    return;
  }
  if (status !== 200 || !server?.files) {
    // Both sides rejecting the same input the same way is agreement too.
    const same = r.error && server?.error?.code === r.error.code;
    el.compareResult.dataset.state = same ? "same" : "diff";
    el.compareResult.textContent = same
      ? `Identical: the server also rejects this input (${server.error.code}).`
      : `Server answered ${status}: ${server?.error ? `${server.error.code}: ${server.error.message}` : raw.slice(0, 200)}`;
    return;
  }
  const language = await detectLanguage(r.path);
  const local = apiResponseJson([{ path: r.path, language, json: r.json, count: r.chunks.length, error: r.error }]);
  if (local === raw) {
    el.compareResult.dataset.state = "same";
    el.compareResult.textContent = `Identical to POST /v1/chunk: ${r.chunks.length} chunks, byte for byte.`;
    return;
  }
  el.compareResult.dataset.state = "diff";
  el.compareResult.textContent = describeDiff(JSON.parse(local), server);
}

/** A short human description of the first differences between two responses. */
function describeDiff(local, server) {
  const out = [];
  const lc = local.files[0]?.chunks ?? [];
  const sc = server.files[0]?.chunks ?? [];
  if (lc.length !== sc.length) out.push(`browser ${lc.length} chunks, server ${sc.length}`);
  for (let i = 0; i < Math.min(lc.length, sc.length) && out.length < 4; i++) {
    for (const key of new Set([...Object.keys(lc[i]), ...Object.keys(sc[i])])) {
      const a = JSON.stringify(lc[i][key]);
      const b = JSON.stringify(sc[i][key]);
      if (a !== b) out.push(`#${i} ${key}: browser ${a?.slice(0, 60)} ≠ server ${b?.slice(0, 60)}`);
    }
  }
  for (const key of new Set([...Object.keys(local), ...Object.keys(server)])) {
    if (key !== "files" && JSON.stringify(local[key]) !== JSON.stringify(server[key])) {
      out.push(`${key}: browser ${JSON.stringify(local[key])} ≠ server ${JSON.stringify(server[key])}`);
    }
  }
  return `Differs from POST /v1/chunk — ${out.length ? out.join("; ") : "formatting only"}.`;
}

// ----------------------------------------------------------------------------------------------
// Wiring
// ----------------------------------------------------------------------------------------------

/** Lines in the editor (kept on every input, for the line numbers). */
let lineCount = 1;
function countLines(text) {
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function onSourceInput() {
  current().text = el.source.value;
  lineCount = countLines(el.source.value);
  renderLineNumbers(true);
  schedule();
}

el.source.addEventListener("input", onSourceInput);
el.source.addEventListener("scroll", syncScroll, { passive: true });
document.addEventListener("selectionchange", () => {
  if (document.activeElement !== el.source) return;
  const i = chunkAt(el.source.selectionStart);
  if (i >= 0) select(i, { scrollList: true });
});

el.path.addEventListener("input", () => {
  current().path = el.path.value.trim() || "input.txt";
  el.language.options[0].textContent = "Auto";
  schedule();
});
el.language.addEventListener("change", () => schedule(0));
el.preset.addEventListener("change", () => {
  fillLimits(presetConfig(el.preset.value));
  schedule(0);
});
el.form.addEventListener("input", (e) => {
  if (e.target !== el.preset) schedule();
});
el.form.addEventListener("submit", (e) => e.preventDefault());

el.fileInput.addEventListener("change", () => fromInput(el.fileInput));
el.folderInput.addEventListener("change", () => fromInput(el.folderInput));
el.fileSelect.addEventListener("change", () => openFile(Number(el.fileSelect.value)));
el.clear.addEventListener("click", () => {
  state.files = [{ path: current().path, text: "" }];
  state.fileCounts.clear();
  openFile(0);
  el.source.focus();
});

el.list.addEventListener("click", async (e) => {
  const copy = e.target.closest("button.copy");
  if (copy) {
    try {
      await navigator.clipboard.writeText(copy.dataset.copy);
      toast("Copied");
    } catch {
      toast("Copy failed (clipboard unavailable)");
    }
    return;
  }
  const li = e.target.closest("li.chunk");
  if (li) select(Number(li.dataset.index), { scrollSource: true });
});
el.list.addEventListener("keydown", (e) => {
  if (!["ArrowDown", "ArrowUp", "Home", "End"].includes(e.key) || !e.target.matches("button.goto")) return;
  const buttons = [...el.list.querySelectorAll("button.goto")];
  const at = buttons.indexOf(e.target);
  const next = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: buttons.length - 1 }[e.key];
  if (buttons[next]) {
    e.preventDefault();
    buttons[next].focus();
    buttons[next].click();
  }
});
el.gutter.addEventListener("click", (e) => {
  const bar = e.target.closest(".bar");
  if (bar) select(Number(bar.dataset.index), { scrollList: true });
});

el.exportJson.addEventListener("click", () => exportAs("json").catch((e) => toast(`Export failed: ${e.message}`)));
el.exportJsonl.addEventListener("click", () => exportAs("jsonl").catch((e) => toast(`Export failed: ${e.message}`)));
el.compare.addEventListener("change", () => {
  if (el.compare.checked) compareWithServer();
  else {
    compareWithServer.token = {};
    el.compareResult.textContent = "";
    delete el.compareResult.dataset.state;
  }
});

// Drag and drop anywhere on the page; folders are walked (ignoring .git, node_modules, ...).
let dragDepth = 0;
// Only while the preview is the open tab (the console's other tabs take folders through their forms).
const previewPanel = document.getElementById("panel-preview");
const previewShown = () => !previewPanel.hidden;
window.addEventListener("dragenter", (e) => {
  if (!e.dataTransfer?.types.includes("Files") || !previewShown()) return;
  dragDepth++;
  el.dropOverlay.hidden = false;
});
window.addEventListener("dragleave", () => {
  if (--dragDepth <= 0) {
    dragDepth = 0;
    el.dropOverlay.hidden = true;
  }
});
window.addEventListener("dragover", (e) => e.preventDefault());
window.addEventListener("drop", async (e) => {
  e.preventDefault();
  dragDepth = 0;
  el.dropOverlay.hidden = true;
  if (!previewShown()) return;
  const dt = e.dataTransfer;
  if (!dt) return;
  const entries = [...dt.items].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
  const out = [];
  if (entries.length) for (const entry of entries) await walkEntry(entry, out);
  else for (const f of dt.files) out.push(await readFile(f, f.name));
  await loadFiles(out);
});

// ----------------------------------------------------------------------------------------------
// Start: the page is usable at once; the wasm loads in the worker, then the first chunking runs.
// ----------------------------------------------------------------------------------------------

el.path.value = current().path;
el.source.value = current().text;
lineCount = countLines(current().text);

function startChunker() {
  if (chunker || !previewShown()) return;
  chunker = new Chunker();
  chunker.info.then(
    ({ info }) => {
      state.info = info;
      el.preset.innerHTML = info.presets.map((p) => `<option value="${p.name}">${p.name}</option>`).join("");
      el.language.innerHTML =
        `<option value="">Auto</option>` +
        info.languages.map((l) => `<option value="${l.name}">${l.name}</option>`).join("");
      fillLimits(info.defaults);
      document.body.dataset.loadMs = String(info.loadMs);
      setStatus("ready", readyText());
      schedule(0);
    },
    (e) => {
      setStatus("error", `The chunker could not load: ${e.message}. Build it with scripts/build-preview.sh.`);
      document.body.dataset.pending = "false";
    },
  );
}
// console.js (which runs after this module) hides the panel when the address names another tab;
// DOMContentLoaded comes after both modules ran.
document.addEventListener("DOMContentLoaded", startChunker);
new MutationObserver(startChunker).observe(previewPanel, { attributes: true, attributeFilter: ["hidden"] });
