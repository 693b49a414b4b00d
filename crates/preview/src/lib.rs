//! The browser build of the edgerag chunker (`wasm-bindgen --target web` → `public/pkg/`).
//!
//! Exports only: every function converts its inputs, calls `edgerag-core`, and converts the result
//! or the error. Chunks come back as the JSON text `serde_json` writes for `Vec<Chunk>` — the same
//! serializer and the same core the worker uses for `POST /v1/chunk`, so the bytes match.
//!
//! Errors are thrown as JS `Error` objects carrying a stable `code` (`INVALID_OPTIONS`,
//! `UNKNOWN_PRESET`, `FILE_TOO_LARGE`, `BINARY_FILE`, `INVALID_UTF8`, `INTERNAL_PANIC`) next to the
//! `message`. A Rust panic never surfaces as a bare `RuntimeError: unreachable`: the panic hook
//! throws an `INTERNAL_PANIC` error instead. After one, discard the instance (Rust considers itself
//! still panicking, so a second panic in the same instance traps).

use std::sync::Once;

use edgerag_core::chunk::{ChunkConfig, CHUNK_SCHEMA_VERSION};
use edgerag_core::options::{parse_options, PRESETS};
use edgerag_core::{chunk_bytes, Language};
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// Chunk one file. `options` is the options JSON of `POST /v1/chunk` (a `ChunkConfig` in camelCase
/// plus an optional `preset`; empty means defaults). Returns the chunks as a JSON array.
#[wasm_bindgen]
pub fn chunk(path: &str, text: &str, options: &str) -> Result<String, JsValue> {
    install_panic_hook();
    let config = parse_options(options).map_err(|e| error(e.code(), &e.to_string()))?;
    let chunks = chunk_bytes(path, text.as_bytes(), &config).map_err(|e| error(e.code(), &e.to_string()))?;
    to_json(&chunks)
}

/// The language the chunker would pick for `path` (lowercase name, `text` when unknown).
#[wasm_bindgen(js_name = detectLanguage)]
pub fn detect_language(path: &str) -> String {
    install_panic_hook();
    Language::detect(path).as_str().to_string()
}

/// The default `ChunkConfig` as JSON.
#[wasm_bindgen]
pub fn defaults() -> Result<String, JsValue> {
    install_panic_hook();
    to_json(&ChunkConfig::default())
}

/// `[{"name": "default", "config": {...}}, ...]`: every preset and the config it stands for.
#[wasm_bindgen]
pub fn presets() -> Result<String, JsValue> {
    install_panic_hook();
    #[derive(Serialize)]
    struct Named {
        name: edgerag_core::chunk::Preset,
        config: ChunkConfig,
    }
    let list: Vec<Named> = PRESETS.iter().map(|&p| Named { name: p, config: p.config() }).collect();
    to_json(&list)
}

/// `[{"name": "typescript", "grammar": true}, ...]`: every language the `language` option takes,
/// and whether this build carries its tree-sitter grammar (otherwise heuristics / lines apply).
#[wasm_bindgen]
pub fn languages() -> Result<String, JsValue> {
    install_panic_hook();
    #[derive(Serialize)]
    struct Entry {
        name: &'static str,
        grammar: bool,
    }
    let grammars = grammars();
    let list: Vec<Entry> = Language::ALL
        .iter()
        .map(|l| Entry { name: l.as_str(), grammar: grammars.contains(&l.as_str()) })
        .collect();
    to_json(&list)
}

/// `{"version": crate version, "chunkSchemaVersion": n, "grammars": [...]}`.
#[wasm_bindgen]
pub fn version() -> Result<String, JsValue> {
    install_panic_hook();
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Version {
        version: &'static str,
        chunk_schema_version: u32,
        grammars: Vec<&'static str>,
    }
    to_json(&Version {
        version: env!("CARGO_PKG_VERSION"),
        chunk_schema_version: CHUNK_SCHEMA_VERSION,
        grammars: grammars(),
    })
}

/// Languages whose grammar this build was compiled with (the crate's `lang-*` features).
fn grammars() -> Vec<&'static str> {
    [
        (cfg!(feature = "lang-typescript"), "typescript"),
        (cfg!(feature = "lang-typescript"), "tsx"),
        (cfg!(feature = "lang-javascript"), "javascript"),
        (cfg!(feature = "lang-python"), "python"),
        (cfg!(feature = "lang-rust"), "rust"),
        (cfg!(feature = "lang-go"), "go"),
        (cfg!(feature = "lang-java"), "java"),
        (cfg!(feature = "lang-c"), "c"),
        (cfg!(feature = "lang-cpp"), "cpp"),
        (cfg!(feature = "lang-csharp"), "csharp"),
        (cfg!(feature = "lang-ruby"), "ruby"),
        (cfg!(feature = "lang-php"), "php"),
        (cfg!(feature = "lang-kotlin"), "kotlin"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect()
}

fn to_json<T: Serialize>(value: &T) -> Result<String, JsValue> {
    serde_json::to_string(value).map_err(|e| error("INTERNAL_ERROR", &e.to_string()))
}

/// A JS `Error` with a stable `code` property beside `message`.
fn error(code: &str, message: &str) -> JsValue {
    let err = js_sys::Error::new(message);
    // Setting a property on a fresh Error object cannot fail; if it somehow did, the message stays.
    let _ = js_sys::Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(code));
    err.into()
}

/// Turn Rust panics into a thrown `INTERNAL_PANIC` error. Called by every export (idempotent), so
/// it is in place whichever entry point runs first, in the page, in node and in tests.
pub fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            // Throwing unwinds the wasm frames straight to the JS caller; without this the abort
            // would surface as an opaque `RuntimeError: unreachable`.
            wasm_bindgen::throw_val(error("INTERNAL_PANIC", &format!("the chunker panicked: {info}")));
        }));
    });
}
