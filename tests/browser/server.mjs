// Where the browser test finds the page: the built worker running in workerd (the real thing: it
// serves public/ as static assets and answers POST /v1/chunk), through the worker's e2e harness.
//
// EDGERAG_PREVIEW_URL=http://127.0.0.1:8787 uses a worker that is already running instead.
// EDGERAG_PREVIEW_STATIC=1 serves public/ from a plain node server instead (no /v1/chunk); the test
// then compares the page with the same wasm run in node and skips the server comparisons. Only for
// working on the page without building the worker.
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const root = fileURLToPath(new URL("../..", import.meta.url));
const publicDir = join(root, "public");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".svg": "image/svg+xml",
};

/** @returns {Promise<{url: string, kind: "worker" | "static", close: () => Promise<void>}>} */
export async function startServer() {
  if (process.env.EDGERAG_PREVIEW_STATIC === "1") return startStatic();
  // A worker that is already running (e.g. `scripts/dev.sh`); it must be built with the same
  // grammar features as public/pkg, or code files chunk differently.
  const running = process.env.EDGERAG_PREVIEW_URL;
  if (running) return { url: running.replace(/\/+$/, ""), kind: "worker", close: async () => {} };
  // The worker's own e2e harness: `wrangler dev --env local` on a free port with a fresh local D1.
  // /v1/chunk needs no embedder, so no embedding double is started.
  const { startEdgerag } = await import("../e2e/harness.mjs");
  const worker = await startEdgerag();
  return { url: worker.url, kind: "worker", close: () => worker.stop(), logs: worker.logs };
}

async function startStatic() {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).replace(/^(\.\.[/\\])+/, "");
    let file = join(publicDir, path);
    try {
      if (req.method !== "GET" && req.method !== "HEAD") throw Object.assign(new Error(), { status: 405 });
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch (e) {
      res.writeHead(e.status ?? 404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "NOT_FOUND", message: "static test server" } }));
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    kind: "static",
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// Debian's chromium, headless, with nothing that phones home (TOOLCHAIN: no browser downloads here).
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-quic",
  "--disable-sync",
];

/** A persistent chromium context in `profileDir` (`CHROMIUM` overrides the binary). */
export function launchChromium(profileDir, { viewport = { width: 1400, height: 900 } } = {}) {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: CHROMIUM_FLAGS,
    viewport,
    acceptDownloads: true,
  });
}
