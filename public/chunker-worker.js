// Runs the wasm chunker off the main thread so typing never waits for parsing.
// Protocol: {id, op: "info"} → {id, ok, info}; {id, op: "chunk", path, text, options} →
// {id, ok, json, ms} | {id, ok: false, error: {code, message}, fatal}.
// A panic (INTERNAL_PANIC) or a trap leaves the instance unusable: the reply says `fatal` and the
// page starts a fresh worker.
import init, * as preview from "./pkg/edgerag_preview.js";

const started = performance.now();
const ready = init({ module_or_path: new URL("./pkg/edgerag_preview_bg.wasm", import.meta.url) }).then(() => ({
  loadMs: Math.round(performance.now() - started),
  version: JSON.parse(preview.version()),
  defaults: JSON.parse(preview.defaults()),
  presets: JSON.parse(preview.presets()),
  languages: JSON.parse(preview.languages()),
}));

self.onmessage = async ({ data }) => {
  const { id, op } = data;
  try {
    const info = await ready;
    if (op === "info") {
      self.postMessage({ id, ok: true, info });
    } else if (op === "chunk") {
      const t0 = performance.now();
      const json = preview.chunk(data.path, data.text, data.options);
      self.postMessage({ id, ok: true, json, ms: performance.now() - t0 });
    } else if (op === "detect") {
      self.postMessage({ id, ok: true, language: preview.detectLanguage(data.path) });
    } else {
      self.postMessage({ id, ok: false, error: { code: "UNKNOWN_OP", message: `unknown op ${op}` } });
    }
  } catch (e) {
    const code = typeof e?.code === "string" ? e.code : e instanceof WebAssembly.RuntimeError ? "INTERNAL_PANIC" : "LOAD_FAILED";
    const fatal = code === "INTERNAL_PANIC" || code === "LOAD_FAILED";
    self.postMessage({ id, ok: false, fatal, error: { code, message: String(e?.message ?? e) } });
    if (fatal) self.close();
  }
};
