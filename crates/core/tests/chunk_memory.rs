//! Heap of chunking one file with its code graph, as the worker's chunk stage does per file,
//! tree-sitter's own allocations counted (on wasm32 they come from the same allocator). A large
//! table of literals makes a syntax tree of about 250 B a token: its parse stops at the parse
//! budget and the file is cut without a tree. Prints the figures (`cargo test -p edgerag-core
//! --release --test chunk_memory -- --nocapture`; `EDGERAG_MEMORY_FILE=PATH` measures a real file
//! too).
#![cfg(feature = "lang-rust")]

#[path = "../benches/support/peak_alloc.rs"]
mod peak_alloc;

use std::sync::Mutex;

use edgerag_core::chunk::{invariants, ChunkFallback};
use edgerag_core::graph::chunk_with_graph;
use edgerag_core::{chunk_text, ChunkConfig};

#[global_allocator]
static ALLOC: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

/// One measurement at a time: the counter is global and tests run on threads.
static MEASURING: Mutex<()> = Mutex::new(());

/// Peak heap above what was in use when `f` started, and what `f` left in use (its result
/// included).
fn heap_of<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    peak_alloc::count_tree_sitter();
    let base = peak_alloc::start();
    let out = f();
    (out, peak_alloc::peak_since(base), peak_alloc::live().saturating_sub(base))
}

/// A Rust module of about `bytes` bytes: a function, then a static table of byte literals, 16 a
/// line, as generated lookup tables are written.
fn literal_table(bytes: usize) -> String {
    let mut out = String::from(
        "/// Looks a byte up in the table.\npub fn lookup(i: usize) -> u8 {\n    TABLE[i % TABLE.len()]\n}\n\n",
    );
    let rows = bytes / 97;
    out.push_str(&format!("pub static TABLE: [u8; {}] =\n  [", rows * 16));
    let mut x: u32 = 0x9e37_79b9;
    for row in 0..rows {
        if row > 0 {
            out.push_str("\n   ");
        }
        for col in 0..16 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let last = row + 1 == rows && col == 15;
            out.push_str(&format!("0x{:02x}{}", x & 0xff, if last { "" } else { ", " }));
        }
    }
    out.push_str("];\n");
    out
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

#[test]
fn a_large_table_of_literals_is_chunked_without_its_tree_within_budget() {
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let config = ChunkConfig::default();
    let mut files = vec![("tables/dictionary.rs".to_string(), literal_table(760_000))];
    if let Ok(path) = std::env::var("EDGERAG_MEMORY_FILE") {
        files.push((path.clone(), std::fs::read_to_string(&path).expect("EDGERAG_MEMORY_FILE")));
    }
    for (path, text) in &files {
        let ((chunks, graph), peak, kept) = heap_of(|| chunk_with_graph(path, text, &config));
        eprintln!(
            "[chunk memory] {path}: {:.2} MB, {} chunks, graph {}, fallback {:?}: peak heap {:.1} MB, kept {:.1} MB",
            mb(text.len()),
            chunks.len(),
            graph.is_some(),
            chunks[0].metadata.fallback,
            mb(peak),
            mb(kept)
        );
        // The whole tree of the generated table is 57 MB (90 MB at the peak of chunking it with
        // the graph); the stopped parse holds at most about 15 MB.
        assert!(peak < 20_000_000, "{path}: peak heap {peak} B");
        // The chunks themselves (the text once more, keywords): nothing of the stopped parse is
        // kept by the thread's parser.
        assert!(kept < 2 * text.len() + 1_000_000, "{path}: {kept} B kept");
        if path.starts_with("tables/") {
            assert!(graph.is_none(), "no tree, no graph");
            assert!(chunks.iter().all(|c| c.metadata.fallback == Some(ChunkFallback::ParseOverBudget)));
            assert!(
                chunks.iter().any(|c| c.metadata.symbol_name.as_deref() == Some("lookup")),
                "cut by the declaration heuristics, not by lines"
            );
        }
        assert_eq!(chunks, chunk_text(path, text, &config), "the same chunks as chunking alone");
        invariants::check(text, &chunks, &config).expect("invariants");
    }
}

#[test]
fn a_table_under_the_parse_budget_keeps_its_tree_and_graph() {
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let config = ChunkConfig::default();
    let text = literal_table(60_000);
    let ((chunks, graph), peak, _) = heap_of(|| chunk_with_graph("tables/small.rs", &text, &config));
    eprintln!("[chunk memory] tables/small.rs: {} B, peak heap {:.1} MB", text.len(), mb(peak));
    let graph = graph.expect("a graph");
    assert!(graph.nodes.iter().any(|n| n.name == "lookup"), "the function is in the graph");
    assert!(chunks.iter().all(|c| c.metadata.fallback.is_none()));
    assert!(chunks.iter().all(|c| c.metadata.symbol_id.is_some()), "every chunk has its graph node");
}
