//! The one place that knows the worker's binding names and reads its environment: every var,
//! secret and binding lookup goes through here (the parsers — `Config`,
//! `EmbedderConfig`, the search model configs — take a `name → value` function built on [`var`]).
//!
//! | binding | kind | used by |
//! | --- | --- | --- |
//! | `DB` (default; see `D1_BINDINGS`) | D1 | catalog, keys, embedding cache; namespaces' rows |
//! | `AI` | Workers AI | embedder, generator, reranker |
//! | `VECTORIZE` | Vectorize | the vector index (else the local D1 index) |
//! | `FETCH_QUEUE`, `CHUNK_QUEUE`, `EMBED_QUEUE`, `INDEX_QUEUE`, `DEAD_LETTER_QUEUE` | Queues | the pipeline |
use wasm_bindgen::JsValue;
use worker::Env;

/// The default (and first) D1 binding: holds the catalog of namespaces' databases.
pub const DB: &str = "DB";
/// Workers AI.
pub const AI: &str = "AI";
/// Cloudflare Vectorize.
pub const VECTORIZE: &str = "VECTORIZE";
/// Stage queues' producer bindings (see `wrangler.toml`).
pub const FETCH_QUEUE: &str = "FETCH_QUEUE";
pub const CHUNK_QUEUE: &str = "CHUNK_QUEUE";
pub const EMBED_QUEUE: &str = "EMBED_QUEUE";
pub const INDEX_QUEUE: &str = "INDEX_QUEUE";
pub const DEAD_LETTER_QUEUE: &str = "DEAD_LETTER_QUEUE";

/// Var listing the D1 bindings namespaces are spread over, comma separated (`DB,DB_2`); the first
/// holds the catalog. Default: `DB` alone.
pub const D1_BINDINGS: &str = "D1_BINDINGS";

/// A string var or secret, `None` when absent or not a string.
pub fn var(env: &Env, name: &str) -> Option<String> {
    js_sys::Reflect::get(env, &JsValue::from_str(name)).ok()?.as_string()
}

/// A binding object (`VECTORIZE`, …), `None` when absent.
pub fn object(env: &Env, name: &str) -> Option<JsValue> {
    js_sys::Reflect::get(env, &JsValue::from_str(name)).ok().filter(|v| !v.is_undefined() && !v.is_null())
}

/// The D1 binding names from the `D1_BINDINGS` value: trimmed, empty entries and repeats dropped,
/// `DB` when nothing is left.
pub fn d1_binding_names(value: Option<&str>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in value.unwrap_or_default().split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    if names.is_empty() {
        names.push(DB.to_string());
    }
    names
}

/// The configured D1 bindings, catalog first.
pub fn d1_bindings(env: &Env) -> Vec<String> {
    d1_binding_names(var(env, D1_BINDINGS).as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d1_bindings_default_to_db_and_keep_their_order() {
        assert_eq!(d1_binding_names(None), ["DB"]);
        assert_eq!(d1_binding_names(Some(" , ")), ["DB"]);
        assert_eq!(d1_binding_names(Some("DB, DB_2,DB")), ["DB", "DB_2"]);
        assert_eq!(d1_binding_names(Some("SHARD_B,SHARD_A")), ["SHARD_B", "SHARD_A"]);
    }
}
