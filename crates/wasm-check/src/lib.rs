//! One chunking entry point shared by the native binary and the wasm32 module, so both sides of
//! the determinism check run exactly the same code path: `(path, text, config JSON)` → JSON of
//! the chunks and the file's code graph.
//!
//! The wasm32 build exports a raw C ABI (no wasm-bindgen, no JS glue) so the module has no
//! imports at all and `scripts/wasm/compare.mjs` can drive it from plain node.
use edgerag_core::graph::chunk_with_graph;
use edgerag_core::{chunk_text, ChunkConfig};

/// Chunks `text` as file `path` with `config_json` (a `ChunkConfig` in JSON, `""` for defaults)
/// and returns `{"chunks": [...], "graph": {...} | null}` (the graph of a code file, from the same
/// parse, before cross-file resolution), or `{"error": ...}` for a bad config.
pub fn chunk_to_json(path: &str, text: &str, config_json: &str) -> String {
    let config = match parse_config(config_json) {
        Ok(c) => c,
        Err(e) => return serde_json::json!({ "error": e }).to_string(),
    };
    // The code graph comes from the same parse, so its ids are checked in the same pass.
    let (chunks, graph) = chunk_with_graph(path, text, &config);
    serde_json::to_string(&serde_json::json!({ "chunks": chunks, "graph": graph }))
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string())
}

/// Number of chunks only: what the throughput measurement calls, so JSON encoding is not timed.
pub fn chunk_count(path: &str, text: &str, config_json: &str) -> usize {
    parse_config(config_json).map(|c| chunk_text(path, text, &c).len()).unwrap_or(0)
}

/// Chunks plus the file's graph from the same parse ([`chunk_with_graph`]), counted: the other
/// side of the graph-extraction cost measurement. Returns chunks + nodes, so neither is dead code.
pub fn chunk_graph_count(path: &str, text: &str, config_json: &str) -> usize {
    parse_config(config_json)
        .map(|c| {
            let (chunks, graph) = chunk_with_graph(path, text, &c);
            chunks.len() + graph.map_or(0, |g| g.nodes.len())
        })
        .unwrap_or(0)
}

fn parse_config(config_json: &str) -> Result<ChunkConfig, String> {
    if config_json.trim().is_empty() {
        return Ok(ChunkConfig::default());
    }
    serde_json::from_str(config_json).map_err(|e| e.to_string())
}

#[cfg(target_arch = "wasm32")]
mod exports;
