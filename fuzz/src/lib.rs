//! The fuzz targets' bodies: each `check(data)` decodes one input, runs the code under test and
//! panics when an invariant breaks (not only on a crash). The `cargo fuzz` binaries
//! (`fuzz_targets/`) call them, and `tests/replay.rs` runs the saved regression inputs and the seeds
//! through the same functions on stable, without libFuzzer.
pub mod archive;
pub mod chunk;
pub mod chunk_code;
pub mod chunk_text;
pub mod fts5;
pub mod fts_query;
pub mod search_request;
pub mod seeds;

/// The worker's archive reader, compiled from its own source: `src/ingest` is pure and imports only
/// `edgerag-core`, `tar` and `flate2`, while depending on the worker crate would compile the whole
/// Workers runtime (web-sys, wasm-bindgen) into every fuzz build.
#[path = "../../src/ingest/mod.rs"]
#[allow(dead_code, clippy::all)]
pub mod ingest;

/// The names of the targets, as `cargo fuzz` and the replay test know them.
pub const TARGETS: [&str; 5] = ["chunk_code", "chunk_text", "archive", "search_request", "fts_query"];

/// Run `data` through the named target.
pub fn check(target: &str, data: &[u8]) {
    match target {
        "chunk_code" => chunk_code::check(data),
        "chunk_text" => chunk_text::check(data),
        "archive" => archive::check(data),
        "search_request" => search_request::check(data),
        "fts_query" => fts_query::check(data),
        other => panic!("unknown fuzz target {other}"),
    }
}
