// The chunking preview in a real browser: Debian chromium driven by playwright-core, against the
// page served by the worker in workerd (tests/browser/server.mjs). Checks that what the page shows
// is what `POST /v1/chunk` answers for the same input, that limits, files and drops update it,
// that export and "compare with server" speak the API's exact bytes, and saves screenshots to
// target/artifacts/.
//
//   node --test tests/browser/*.test.mjs   (after scripts/build-preview.sh and the worker build)
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium, root, startServer } from "./server.mjs";

const input = (name) => readFileSync(new URL(`./inputs/${name}`, import.meta.url), "utf8");
const artifacts = join(root, "target", "artifacts");

let server;
let context;
let page;
let profile;
const pageErrors = [];
const foreignRequests = [];

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startServer();
  profile = mkdtempSync(join(tmpdir(), "edgerag-chromium-"));
  context = await launchChromium(profile);
  page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (e) => pageErrors.push(e.message));
  // The page runs under the Content-Security-Policy of public/_headers: a violation is an error.
  page.on("console", (m) => /Content Security Policy/i.test(m.text()) && pageErrors.push(m.text()));
  page.on("request", (r) => {
    if (!r.url().startsWith(server.url) && !r.url().startsWith("data:") && !r.url().startsWith("blob:")) {
      foreignRequests.push(r.url());
    }
  });
});

after(async () => {
  await context?.close();
  await server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

// ------------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------------

/** The chunks as the page lists them (from the list items' data attributes). */
const listedChunks = () =>
  page.$$eval("#chunk-list li.chunk", (items) =>
    items.map((li) => ({
      chunkIndex: Number(li.dataset.index),
      type: li.dataset.type,
      startLine: Number(li.dataset.startLine),
      endLine: Number(li.dataset.endLine),
      startByte: Number(li.dataset.startByte),
      endByte: Number(li.dataset.endByte),
      tokenCount: Number(li.dataset.tokenCount),
      id: li.dataset.id,
      textHash: li.dataset.textHash,
    })),
  );

const pick = (c) => ({
  chunkIndex: c.chunkIndex,
  type: c.type,
  startLine: c.startLine,
  endLine: c.endLine,
  startByte: c.startByte,
  endByte: c.endByte,
  tokenCount: c.tokenCount,
  id: c.id,
  textHash: c.textHash,
});

const generation = () => page.evaluate(() => Number(document.body.dataset.generation ?? 0));

/** Wait until the page has rendered a result newer than `since` and nothing is pending. */
async function settled(since) {
  await page.waitForFunction(
    (g) => document.body.dataset.pending === "false" && Number(document.body.dataset.generation ?? 0) > g,
    since,
    { timeout: 30_000 },
  );
}

/** Type a path and paste a text, like a person would, then wait for the chunks. */
async function paste(path, text) {
  const since = await generation();
  await page.fill("#path", path);
  await page.focus("#source");
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
  await settled(since);
}

/** The options the page says it uses (its "Options as JSON" panel). */
const pageOptions = async () => JSON.parse(await page.textContent("#options-json"));

/** `POST /v1/chunk` for one file: {status, raw body, parsed}. */
async function serverChunk(path, content, options) {
  const res = await fetch(`${server.url}/v1/chunk`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ path, content, options }),
  });
  const raw = await res.text();
  return { status: res.status, raw, body: JSON.parse(raw) };
}

/** Static mode only: the same wasm in node stands in for the server (no /v1/chunk there). */
let nodeWasm;
async function wasmChunk(path, content, options) {
  if (!nodeWasm) {
    nodeWasm = await import(join(root, "public/pkg/edgerag_preview.js"));
    nodeWasm.initSync({ module: readFileSync(join(root, "public/pkg/edgerag_preview_bg.wasm")) });
  }
  return JSON.parse(nodeWasm.chunk(path, content, JSON.stringify(options)));
}

/** What the page must show for this input: the server's chunks (the wasm in node in static mode). */
async function expectedChunks(path, content, options) {
  if (server.kind === "static") return wasmChunk(path, content, options);
  const { status, body } = await serverChunk(path, content, options);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.files.length, 1);
  assert.equal(body.files[0].path, path);
  return body.files[0].chunks;
}

/** Does a chunk boundary split a line between two non-blank characters? (bytes, like the core) */
function cutsInsideLine(text, chunk) {
  const bytes = Buffer.from(text);
  const lineStart = bytes.lastIndexOf(0x0a, chunk.startByte - 1) + 1;
  let lineEnd = bytes.indexOf(0x0a, chunk.endByte);
  if (lineEnd < 0) lineEnd = bytes.length;
  const blank = (b) => !/\S/.test(b.toString());
  return !blank(bytes.subarray(lineStart, chunk.startByte)) || !blank(bytes.subarray(chunk.endByte, lineEnd));
}

// ------------------------------------------------------------------------------------------------
// Tests (sequential, one page)
// ------------------------------------------------------------------------------------------------

test("the page loads, lazy-loads the chunker and shows the sample's chunks", async () => {
  const started = Date.now();
  await page.goto(server.url + "/");
  // The page is interactive before the wasm arrives: the editor is there at once.
  await page.waitForSelector("#source", { state: "visible" });
  await settled(0);
  const readyMs = Date.now() - started;
  const loadMs = Number(await page.evaluate(() => document.body.dataset.loadMs));
  console.log(`# ${server.kind}: page ready with chunks after ${readyMs} ms (wasm fetch+compile+init ${loadMs} ms)`);
  assert.match(await page.textContent("#status"), /Ready/);
  const listed = await listedChunks();
  assert.ok(listed.length > 0, "the sample is chunked on load");
  const preset = await page.$$eval("#preset option", (o) => o.map((x) => x.value));
  assert.deepEqual(preset.slice(0, 2), ["default", "compact"]);
});

test("a pasted TypeScript class gives exactly the chunks of POST /v1/chunk", async () => {
  const text = input("shapes.ts");
  await paste("src/shapes.ts", text);
  const options = await pageOptions();
  assert.deepEqual(options, { preset: "default" });
  const expected = await expectedChunks("src/shapes.ts", text, options);
  assert.deepEqual(await listedChunks(), expected.map(pick));
  assert.match(await page.textContent("#language option[value='']"), /typescript/);
  const version = await page.evaluate(() => document.getElementById("status").textContent);
  if (/1[23] grammars/.test(version)) {
    // With the grammar compiled in, the class is a definition chunk, not lines.
    assert.ok(expected.some((c) => c.type === "code-class"), JSON.stringify(expected.map((c) => c.type)));
  }
  // Totals agree with the list.
  assert.equal(await page.getAttribute("#totals", "data-chunks"), String(expected.length));
  await page.locator("#chunk-list li.chunk").nth(Math.min(2, expected.length - 1)).locator("button.goto").click();
  await page.screenshot({ path: join(artifacts, "preview.png") });
});

test("a pasted Markdown document (non-ASCII) gives exactly the chunks of POST /v1/chunk", async () => {
  const text = input("guide.md");
  await paste("docs/guide.md", text);
  const options = await pageOptions();
  const expected = await expectedChunks("docs/guide.md", text, options);
  const listed = await listedChunks();
  assert.deepEqual(listed, expected.map(pick));
  assert.ok(listed.every((c) => c.type === "markdown-section"));
  // Heading breadcrumbs are shown for every section chunk that has one.
  const names = await page.$$eval("#chunk-list li.chunk .name", (n) => n.map((x) => x.textContent));
  expected.forEach((c, i) => assert.equal(names[i], (c.metadata.headingPath ?? []).join(" › ") || (c.metadata.symbolName ?? "")));
});

test("changing a limit re-chunks live, still equal to the server", async () => {
  const text = input("guide.md");
  const before = await listedChunks();
  const since = await generation();
  await page.fill("#maxLines", "4");
  await settled(since);
  const options = await pageOptions();
  assert.deepEqual(options, { preset: "default", maxLines: 4 });
  const after = await listedChunks();
  assert.notDeepEqual(after, before, "a smaller maxLines must change the chunks");
  assert.ok(after.length > before.length, `${after.length} chunks vs ${before.length}`);
  assert.deepEqual(after, (await expectedChunks("docs/guide.md", text, options)).map(pick));
  // Overlapping neighbours are drawn as striped bands.
  const overlaps = after.filter((c, i) => i > 0 && c.startLine <= after[i - 1].endLine).length;
  assert.equal(await page.locator("#shade .band.ov").count(), overlaps);

  // A bad value is caught before chunking, with a message, and nothing changes.
  await page.fill("#overlapLines", "-2");
  await page.waitForSelector("#options-error:not([hidden])");
  assert.match(await page.textContent("#options-error"), /Overlap lines/);
  assert.deepEqual(await listedChunks(), after);
  const since2 = await generation();
  await page.fill("#overlapLines", "3");
  await settled(since2);
  assert.equal(await page.isHidden("#options-error"), true);

  // The preset resets the limits to its own values.
  const since3 = await generation();
  await page.selectOption("#preset", "compact");
  await settled(since3);
  assert.deepEqual(await pageOptions(), { preset: "compact" });
  assert.equal(await page.inputValue("#maxTokens"), "500");
  const since4 = await generation();
  await page.selectOption("#preset", "default");
  await settled(since4);
  assert.deepEqual(await pageOptions(), { preset: "default" });
});

test("a line longer than the token limit is cut inside the line, and the page warns", async () => {
  const text = `short first line\n${"word ".repeat(400)}\nlast line\n`;
  const since = await generation();
  await page.fill("#maxTokens", "100");
  await settled(since);
  await paste("notes/long.txt", text);
  const options = await pageOptions();
  assert.equal(options.maxTokens, 100);
  const expected = await expectedChunks("notes/long.txt", text, options);
  assert.deepEqual(await listedChunks(), expected.map(pick));
  const cut = expected.filter((c) => cutsInsideLine(text, c));
  assert.ok(cut.length > 0, "a 2000-char line over a 100-token limit has to be cut");
  await page.waitForSelector("#warnings:not([hidden])");
  assert.match(await page.textContent("#warnings"), /cut inside a line/);
  assert.equal(await page.locator("#chunk-list .cut").count(), cut.length);
  const since2 = await generation();
  await page.fill("#maxTokens", "2000");
  await settled(since2);
  assert.equal(await page.isHidden("#warnings"), true);
});

test("a file too large to parse within the budget is cut without its syntax tree, and the page says so", async () => {
  // About 190 KB of table literals: past the parse budget (150 KB of them already is).
  const row = (i) => `    [${Array.from({ length: 40 }, (_, j) => (i * 31 + j) % 251).join(", ")}]`;
  const text = `pub static TABLE: [[u8; 40]; 1000] = [\n${Array.from({ length: 1000 }, (_, i) => row(i)).join(",\n")}\n];\n`;
  await paste("src/table.rs", text);
  const options = await pageOptions();
  const expected = await expectedChunks("src/table.rs", text, options);
  assert.deepEqual(await listedChunks(), expected.map(pick));
  const version = await page.evaluate(() => document.getElementById("status").textContent);
  const overBudget = expected.filter((c) => c.metadata.fallback === "PARSE_OVER_BUDGET").length;
  if (/1[23] grammars/.test(version)) assert.equal(overBudget, expected.length, "every chunk says why");
  if (overBudget) {
    await page.waitForSelector("#warnings:not([hidden])");
    assert.match(await page.textContent("#warnings"), /without its syntax tree \(PARSE_OVER_BUDGET\)/);
  }
  await paste("src/small.rs", "pub fn small() -> u32 {\n    1\n}\n");
  assert.equal(await page.isHidden("#warnings"), true, "a file within the budget has no warning");
});

test("export JSON is byte for byte the API response; JSONL is its chunks", async () => {
  const text = input("shapes.ts");
  await paste("src/shapes.ts", text);
  const options = await pageOptions();
  const [json] = await Promise.all([page.waitForEvent("download"), page.click("#export-json")]);
  const exported = readFileSync(await json.path(), "utf8");
  assert.equal(json.suggestedFilename(), "shapes.ts.chunks.json");
  if (server.kind === "worker") {
    const { raw } = await serverChunk("src/shapes.ts", text, options);
    assert.equal(exported, raw);
  } else {
    assert.deepEqual(JSON.parse(exported).files[0].chunks, await wasmChunk("src/shapes.ts", text, options));
  }
  const [jsonl] = await Promise.all([page.waitForEvent("download"), page.click("#export-jsonl")]);
  const lines = readFileSync(await jsonl.path(), "utf8").trimEnd().split("\n");
  assert.deepEqual(lines.map((l) => JSON.parse(l)), JSON.parse(exported).files[0].chunks);
});

test("compare with server reports identical", async (t) => {
  if (server.kind !== "worker") return t.skip("static server: no POST /v1/chunk");
  await page.check("#compare");
  await page.waitForSelector('#compare-result[data-state="same"], #compare-result[data-state="diff"], #compare-result[data-state="error"]');
  assert.equal(await page.getAttribute("#compare-result", "data-state"), "same", await page.textContent("#compare-result"));
  assert.match(await page.textContent("#compare-result"), /byte for byte/);
  // And it follows edits.
  const since = await generation();
  await page.fill("#maxLines", "7");
  await settled(since);
  await page.waitForFunction(() => document.getElementById("compare-result").dataset.state !== "busy");
  assert.equal(await page.getAttribute("#compare-result", "data-state"), "same", await page.textContent("#compare-result"));
  await page.uncheck("#compare");
  const since2 = await generation();
  await page.fill("#maxLines", "100");
  await settled(since2);
  assert.deepEqual(await pageOptions(), { preset: "default" });
});

test("clicking a chunk scrolls the source to it, and the caret selects its chunk", async () => {
  const text = `${Array.from({ length: 400 }, (_, i) => `line ${i + 1}`).join("\n")}\n`;
  await paste("notes/lines.txt", text);
  const listed = await listedChunks();
  assert.ok(listed.length >= 4, `${listed.length} chunks`);
  const target = listed[3];
  await page.locator(`#chunk-list li.chunk[data-index="3"] button.goto`).click();
  assert.equal(await page.getAttribute(`#chunk-list li.chunk[data-index="3"]`, "aria-current"), "true");
  const scrollTop = await page.$eval("#source", (s) => s.scrollTop);
  assert.equal(scrollTop, (target.startLine - 2) * 20);
  assert.equal(await page.locator("#shade .band.sel").count(), 1);

  // Keyboard: arrow keys walk the list.
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement.closest("li")?.dataset.index), "4");
  assert.equal(await page.getAttribute(`#chunk-list li.chunk[data-index="4"]`, "aria-current"), "true");

  // The caret in the source selects the chunk under it.
  const second = listed[1];
  const offset = Buffer.from(text).subarray(0, second.startByte).toString().length + 2;
  await page.$eval("#source", (s, at) => {
    s.focus();
    s.setSelectionRange(at, at);
  }, offset);
  await page.waitForSelector(`#chunk-list li.chunk[data-index="1"][aria-current="true"]`);
});

test("opening files and dropping a file chunk them like the server", async () => {
  const ts = input("shapes.ts");
  const py = input("util.py");
  const since = await generation();
  await page.setInputFiles("#file-input", [
    { name: "util.py", mimeType: "text/x-python", buffer: Buffer.from(py) },
    { name: "shapes.ts", mimeType: "text/plain", buffer: Buffer.from(ts) },
    { name: "blob.bin", mimeType: "application/octet-stream", buffer: Buffer.from([0, 1, 2, 0]) },
  ]);
  await settled(since);
  // Sorted by path, binary skipped; the first file is open.
  assert.equal(await page.inputValue("#path"), "shapes.ts");
  assert.equal(await page.isVisible("#file-select"), true);
  assert.deepEqual(await page.$$eval("#file-select option", (o) => o.map((x) => x.value)), ["0", "1"]);
  const options = await pageOptions();
  assert.deepEqual(await listedChunks(), (await expectedChunks("shapes.ts", ts, options)).map(pick));

  const since2 = await generation();
  await page.selectOption("#file-select", "1");
  await settled(since2);
  assert.equal(await page.inputValue("#path"), "util.py");
  assert.equal(await page.inputValue("#source"), py);
  assert.deepEqual(await listedChunks(), (await expectedChunks("util.py", py, options)).map(pick));

  // A drop (DataTransfer with a File) replaces the set.
  const md = input("guide.md");
  const since3 = await generation();
  await page.evaluate((content) => {
    const dt = new DataTransfer();
    dt.items.add(new File([content], "dropped.md", { type: "text/markdown" }));
    document.body.dispatchEvent(new DragEvent("dragenter", { dataTransfer: dt, bubbles: true }));
    document.body.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, md);
  await settled(since3);
  assert.equal(await page.inputValue("#path"), "dropped.md");
  assert.equal(await page.isHidden("#file-select"), true);
  assert.equal(await page.isHidden("#drop-overlay"), true);
  assert.deepEqual(await listedChunks(), (await expectedChunks("dropped.md", md, options)).map(pick));
});

test("choosing a folder loads its text files, skipping ignored dirs and binaries; copy copies the id", async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgerag-folder-"));
  try {
    const put = (path, content) => {
      mkdirSync(join(dir, path, ".."), { recursive: true });
      writeFileSync(join(dir, path), content);
    };
    const ts = input("shapes.ts");
    const md = input("guide.md");
    put("proj/src/shapes.ts", ts);
    put("proj/docs/guide.md", md);
    put("proj/node_modules/dep/index.js", "module.exports = 1;\n");
    put("proj/.git/HEAD", "ref: refs/heads/main\n");
    put("proj/dist/bundle.js", "console.log(1);\n");
    put("proj/logo.bin", Buffer.from([0, 1, 2, 0]));
    const since = await generation();
    await page.setInputFiles("#folder-input", join(dir, "proj"));
    await settled(since);
    // Relative paths from the chosen folder, sorted; node_modules, .git, dist and the binary left out.
    const listed = await page.$$eval("#file-select option", (o) => o.map((x) => x.textContent.replace(/ — .*$/, "")));
    assert.deepEqual(listed, ["proj/docs/guide.md", "proj/src/shapes.ts"]);
    assert.equal(await page.inputValue("#path"), "proj/docs/guide.md");
    const options = await pageOptions();
    const expected = await expectedChunks("proj/docs/guide.md", md, options);
    assert.deepEqual(await listedChunks(), expected.map(pick));

    // The copy button next to a chunk id puts exactly that id on the clipboard.
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.click("#chunk-list li.chunk >> nth=1 >> button.copy >> nth=0");
    await page.waitForFunction(() => document.body.textContent.includes("Copied"), null, { timeout: 5_000 });
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), expected[1].id);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("every control has an accessible name; the page fits a phone", async () => {
  const unnamed = await page.$$eval("input, select, textarea, button", (els) =>
    els
      .filter((e) => !e.hidden && e.type !== "file")
      .filter((e) => !(e.labels?.length || e.getAttribute("aria-label") || e.textContent.trim()))
      .map((e) => e.outerHTML.slice(0, 80)),
  );
  assert.deepEqual(unnamed, []);
  // File inputs are visually hidden but reachable through their labels.
  assert.equal(await page.locator("label[for=file-input]").count(), 1);

  await page.setViewportSize({ width: 390, height: 844 });
  await paste("src/shapes.ts", input("shapes.ts"));
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page is ${overflow}px wider than a phone`);
  await page.screenshot({ path: join(artifacts, "preview-phone.png"), fullPage: true });
  await page.setViewportSize({ width: 1400, height: 900 });
});

test("no page errors, no requests beyond the server", () => {
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(foreignRequests, []);
});
