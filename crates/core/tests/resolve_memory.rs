//! Peak heap of cross-file resolution, all at once against in pages (`SymbolTable`), over a
//! generated namespace whose graphs are stored as JSON (as the worker keeps them): the split's
//! peak must stay a fraction of the whole one, and the edges the same. Prints both peaks
//! (`cargo test -p edgerag-core --release --test resolve_memory -- --nocapture`;
//! `EDGERAG_MEMORY_FILES` sets the namespace's size, 2,000 files by default).
#![cfg(feature = "lang-python")]

#[path = "../benches/support/peak_alloc.rs"]
mod peak_alloc;

use edgerag_core::graph::{extract_graph, resolve, FileGraph, SymbolTable};
use edgerag_core::Language;

#[global_allocator]
static ALLOC: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

/// Peak heap above what was in use when `f` started.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = peak_alloc::start();
    let out = f();
    (out, peak_alloc::peak_since(base))
}

/// Module `i` of `packages` packages: classes, helpers and calls across packages, many calls
/// per function as real code has.
fn module(p: usize, i: usize, packages: usize, modules: usize) -> String {
    let q = (p + 1) % packages;
    let j = (i * 7 + 3) % modules;
    let mut out = format!(
        "from pkg{q}.mod{j} import Base{q}x{j}, helper_{q}_{j}\n\n\nclass Base{p}x{i}:\n    def scale_{p}_{i}(self, x):\n        return x * 2\n\n\n"
    );
    for f in 0..12 {
        out.push_str(&format!(
            "def helper_{p}_{i}{}(x):\n    y = helper_{q}_{j}(x) + helper_{q}_{j}(x + 1)\n    z = print(y) or len(str(y))\n    return y + z + {f}\n\n\n",
            if f == 0 { String::new() } else { format!("_{f}") }
        ));
    }
    out.push_str(&format!(
        "class Model{p}x{i}(Base{q}x{j}):\n    def run_{p}_{i}(self, x):\n        return helper_{q}_{j}(x) + self.scale_{q}_{j}(x)\n"
    ));
    out
}

#[test]
fn resolution_in_pages_peaks_at_a_fraction_of_resolving_every_file_at_once() {
    let files: usize =
        std::env::var("EDGERAG_MEMORY_FILES").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000);
    let packages = 20;
    let modules = files.div_ceil(packages);
    // The stored form: each file's graph as JSON, in path order.
    let mut stored: Vec<(String, String)> = Vec::new();
    for p in 0..packages {
        for i in 0..modules {
            let path = format!("pkg{p}/mod{i}.py");
            let graph =
                extract_graph(&path, &module(p, i, packages, modules), Language::Python).expect("a graph");
            stored.push((path, serde_json::to_string(&graph).expect("json")));
        }
    }
    stored.sort();
    let json_bytes: usize = stored.iter().map(|(_, g)| g.len()).sum();
    let parse = |g: &String| serde_json::from_str::<FileGraph>(g).expect("a stored graph");

    // All at once, as the job's end did: every graph parsed, then resolved together.
    let (whole, whole_peak) = peak_of(|| {
        let mut all: Vec<FileGraph> = stored.iter().map(|(_, g)| parse(g)).collect();
        resolve(&mut all);
        all.iter().map(|f| serde_json::to_string(&f.edges).expect("json")).collect::<Vec<_>>()
    });

    // In pages of 50 files: definitions first, then each page resolved and dropped (its edges
    // kept here only to compare them; the worker writes them).
    let page = 50;
    let mut edges: Vec<String> = Vec::new();
    let ((), paged_peak) = peak_of(|| {
        let mut table = SymbolTable::new();
        for chunk in stored.chunks(page) {
            for (_, g) in chunk {
                table.add(&parse(g));
            }
        }
        table.seal();
        for (n, chunk) in stored.chunks(page).enumerate() {
            let mut files: Vec<FileGraph> = chunk.iter().map(|(_, g)| parse(g)).collect();
            table.resolve_page(n * page, &mut files);
            // Only a hash per file is kept across pages, as the worker keeps only counts.
            edges.extend(files.iter().map(|f| {
                blake3::hash(serde_json::to_string(&f.edges).expect("json").as_bytes()).to_hex().to_string()
            }));
        }
    });
    let whole_hashes: Vec<String> =
        whole.iter().map(|e| blake3::hash(e.as_bytes()).to_hex().to_string()).collect();
    assert_eq!(edges, whole_hashes, "the same edges");
    let total_edges: usize = whole.iter().map(|e| e.matches("\"kind\"").count()).sum();
    eprintln!(
        "[resolve memory] {} files, {} edges, {:.1} MB of stored graph JSON: all at once peak {:.1} MB, in pages of {page} files {:.1} MB ({:.0} %)",
        stored.len(),
        total_edges,
        json_bytes as f64 / 1e6,
        whole_peak as f64 / 1e6,
        paged_peak as f64 / 1e6,
        100.0 * paged_peak as f64 / whole_peak as f64
    );
    assert!(paged_peak * 3 < whole_peak, "paged {paged_peak} B against {whole_peak} B all at once");
}
