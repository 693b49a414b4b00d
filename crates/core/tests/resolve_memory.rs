//! Heap of cross-file resolution over a namespace whose graphs are stored as JSON (as the worker
//! keeps them): all at once against in pages (`SymbolTable`, votes and ranks included, as the
//! worker runs them), and what the table keeps per definition. Prints the figures (`cargo test
//! -p edgerag-core --release --test resolve_memory -- --nocapture`; `EDGERAG_MEMORY_FILES` sets
//! the namespace's size, 2,000 generated files by default; `EDGERAG_MEMORY_TREE=DIR` reads a real
//! repository's code files instead).
#![cfg(feature = "lang-python")]

#[path = "../benches/support/peak_alloc.rs"]
mod peak_alloc;

use std::sync::Mutex;

use edgerag_core::graph::rank::stored_ranks;
use edgerag_core::graph::{extract_graph, resolve, FileGraph, SymbolTable};
use edgerag_core::Language;

#[global_allocator]
static ALLOC: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

/// One measurement at a time: the counter is global and tests run on threads.
static MEASURING: Mutex<()> = Mutex::new(());

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

/// The stored graphs of a namespace, each as JSON, in path order: of the code files under
/// `EDGERAG_MEMORY_TREE` when set (a real repository, its first `files` files in path order; a
/// graph over the worker's 1 MB value budget is left out, as the worker refuses it), otherwise
/// of `files` generated files.
fn namespace(files: usize) -> Vec<(String, String)> {
    match std::env::var("EDGERAG_MEMORY_TREE") {
        Ok(dir) => tree(std::path::Path::new(&dir), files),
        Err(_) => generated(files),
    }
}

fn tree(root: &std::path::Path, files: usize) -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.metadata().is_ok_and(|m| m.len() <= 1 << 20) {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(root, &mut paths);
    paths.sort();
    paths.truncate(files);
    let mut stored: Vec<(String, String)> = paths
        .iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(root).ok()?.to_string_lossy().to_string();
            let text = std::fs::read_to_string(p).ok()?;
            let graph = extract_graph(&rel, &text, Language::detect(&rel))?;
            let json = serde_json::to_string(&graph).expect("json");
            (json.len() <= 1_000_000).then_some((rel, json))
        })
        .collect();
    stored.sort();
    stored
}

fn generated(files: usize) -> Vec<(String, String)> {
    let packages = 20;
    let modules = files.div_ceil(packages);
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
    stored
}

fn parse(g: &str) -> FileGraph {
    serde_json::from_str::<FileGraph>(g).expect("a stored graph")
}

fn files() -> usize {
    std::env::var("EDGERAG_MEMORY_FILES").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000)
}

#[test]
fn resolution_in_pages_peaks_at_a_fraction_of_resolving_every_file_at_once() {
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let stored = namespace(files());
    let json_bytes: usize = stored.iter().map(|(_, g)| g.len()).sum();

    // All at once, as the job's end did: every graph parsed, then resolved together and ranked.
    let mut nodes = 0;
    let ((whole, whole_ranks), whole_peak) = peak_of(|| {
        let mut all: Vec<FileGraph> = stored.iter().map(|(_, g)| parse(g)).collect();
        nodes = all.iter().map(|f| f.nodes.len()).sum();
        resolve(&mut all);
        let ranks = stored_ranks(&all);
        (all.iter().map(|f| serde_json::to_string(&f.edges).expect("json")).collect::<Vec<_>>(), ranks)
    });

    // In pages, as the worker does (of 4 MB of JSON for a real repository, as
    // `GRAPH_PAGE_BYTES`; of 50 files otherwise): definitions first, then each page resolved,
    // voted and dropped (only a hash of its edges kept here to compare them; the worker writes
    // them), then the ranks read in order (the worker compares them with the stored ones).
    let mut pages: Vec<std::ops::Range<usize>> = Vec::new();
    let real = std::env::var_os("EDGERAG_MEMORY_TREE").is_some();
    let mut bytes = 0;
    for (i, (_, g)) in stored.iter().enumerate() {
        match pages.last_mut() {
            Some(page) if if real { bytes + g.len() <= 4_000_000 } else { page.len() < 50 } => {
                page.end = i + 1;
                bytes += g.len();
            }
            _ => {
                pages.push(i..i + 1);
                bytes = g.len();
            }
        }
    }
    let mut edges: Vec<String> = Vec::new();
    let mut table_bytes = 0;
    let mut definitions = 0;
    let ((symbols, file_ranks), paged_peak) = peak_of(|| {
        let before = peak_alloc::live();
        // Made for its nodes, as the worker makes it (from the count of stored nodes).
        let mut table = SymbolTable::with_capacity(nodes);
        for page in &pages {
            for (_, g) in &stored[page.clone()] {
                table.add(&parse(g));
            }
        }
        // The base types, from the graphs with `EXTENDS` / `IMPLEMENTS` edges read again.
        let typed: Vec<usize> = table.base_files().collect();
        for fi in typed {
            table.add_bases(fi, &parse(&stored[fi].1));
        }
        let mut links = table.votes();
        table_bytes = peak_alloc::live() - before;
        definitions = table.nodes();
        for page in &pages {
            let mut files: Vec<FileGraph> = stored[page.clone()].iter().map(|(_, g)| parse(g)).collect();
            table.resolve_page(page.start, &mut files);
            for f in &files {
                table.vote(&mut links, f);
            }
            edges.extend(files.iter().map(|f| {
                blake3::hash(serde_json::to_string(&f.edges).expect("json").as_bytes()).to_hex().to_string()
            }));
        }
        let ranked = table.rank(links);
        // Only a hash of the ranks is kept, as the worker keeps only a page of them.
        let mut symbols = blake3::Hasher::new();
        for (id, rank) in ranked.symbols() {
            symbols.update(id.as_bytes());
            symbols.update(&rank.to_le_bytes());
        }
        let files: Vec<(String, f64)> = ranked.files().into_iter().map(|(p, r)| (p.to_string(), r)).collect();
        (symbols.finalize(), files)
    });
    let whole_hashes: Vec<String> =
        whole.iter().map(|e| blake3::hash(e.as_bytes()).to_hex().to_string()).collect();
    assert_eq!(edges, whole_hashes, "the same edges");
    let mut expected = blake3::Hasher::new();
    for (id, rank) in &whole_ranks.0 {
        expected.update(id.as_bytes());
        expected.update(&rank.to_le_bytes());
    }
    assert_eq!(symbols, expected.finalize(), "the same symbol ranks");
    assert_eq!(file_ranks, whole_ranks.1.into_iter().collect::<Vec<_>>(), "the same file ranks");
    let total_edges: usize = whole.iter().map(|e| e.matches("\"kind\"").count()).sum();
    eprintln!(
        "[resolve memory] {} files, {} symbols, {} edges, {:.1} MB of stored graph JSON: all at once peak {:.1} MB, in {} pages (votes and ranks included) {:.1} MB ({:.0} %); the table {:.1} MB, {:.1} B a definition",
        stored.len(),
        whole_ranks.0.len(),
        total_edges,
        json_bytes as f64 / 1e6,
        whole_peak as f64 / 1e6,
        pages.len(),
        paged_peak as f64 / 1e6,
        100.0 * paged_peak as f64 / whole_peak as f64,
        table_bytes as f64 / 1e6,
        table_bytes as f64 / definitions as f64
    );
    assert!(paged_peak * 8 < whole_peak, "paged {paged_peak} B against {whole_peak} B all at once");
}

/// What the table keeps per definition once every file is in, and what the votes keep per
/// edge: counted allocations, the same on every run. A table made for its node count (as the
/// worker makes it) is sealed in place and ranks in its freed buffers: what sealing and
/// ranking allocate (whatever they free meanwhile) is compared with a table grown as needed.
#[test]
fn the_table_keeps_a_few_dozen_bytes_per_definition() {
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let stored = generated(1_000);
    let nodes: usize = stored.iter().map(|(_, g)| parse(g).nodes.len()).sum();
    let mut figures = Vec::new();
    for capacity in [0, nodes] {
        let before = peak_alloc::live();
        let mut table = SymbolTable::with_capacity(capacity);
        for (_, g) in &stored {
            table.add(&parse(g));
        }
        let added = peak_alloc::allocated();
        table.seal();
        let sealing = peak_alloc::allocated() - added;
        let typed: Vec<usize> = table.base_files().collect();
        assert!(!typed.is_empty(), "no base types: the input proves little");
        for fi in typed {
            table.add_bases(fi, &parse(&stored[fi].1));
        }
        let mut links = table.votes();
        let table_bytes = peak_alloc::live() - before;
        let definitions = table.nodes();
        assert_eq!(definitions, nodes);
        for (n, (_, g)) in stored.iter().enumerate() {
            let mut file = [parse(g)];
            table.resolve_page(n, &mut file);
            table.vote(&mut links, &file[0]);
        }
        let votes = links.len();
        let votes_bytes = peak_alloc::live() - before - table_bytes;
        let voted = peak_alloc::allocated();
        let ranked = table.rank(links);
        let ranking = peak_alloc::allocated() - voted;
        let symbols = ranked.symbols().count();
        eprintln!(
            "[resolve memory] table for {capacity} nodes: {definitions} definitions, {:.2} MB, {:.1} B a definition; sealing allocated {:.1} B a definition; votes: {votes}, {:.1} B a vote; ranking allocated {:.1} B a symbol",
            table_bytes as f64 / 1e6,
            table_bytes as f64 / definitions as f64,
            sealing as f64 / definitions as f64,
            votes_bytes as f64 / votes as f64,
            ranking as f64 / symbols as f64,
        );
        assert!(
            definitions > 15_000 && votes > 25_000,
            "{definitions} definitions, {votes} votes: too few to tell"
        );
        assert!((votes_bytes as f64) < 10.0 * votes as f64, "{votes_bytes} B for {votes} votes");
        figures.push((table_bytes as f64 / definitions as f64, sealing, ranking, votes, symbols));
    }
    let (grown, grown_sealing, grown_ranking, _, _) = figures[0];
    let (made, sealing, ranking, votes, symbols) = figures[1];
    // Ids, names and fqns kept as owned strings and positions as 16-byte entries took ≈ 380 B
    // here; then 76 B (each file's path, package and module keys included: 17 definitions a
    // file); 74 B with the strings in fixed buffers; 67 B with the lookups' 4-byte entries.
    assert!(grown < 80.0 && made < 80.0, "{grown:.1} B, {made:.1} B a definition");
    // Made for its nodes, sealing builds the lookups and orders the ids where they are: beside
    // the lookups' bucket directories (about 0.5 B a node each), it allocates no buffer for the
    // lookups (8 B a node) and no id order (4 B), as a grown table's does.
    assert!(
        grown_sealing >= sealing + 11 * nodes,
        "sealing allocated {sealing} B made for its nodes, {grown_sealing} B grown"
    );
    // The ranks' two rounds reuse the lookups' buffer and the id keys' and declared types':
    // ranking allocates the votes by source (4 B a vote and a symbol) and little more, not 16 B
    // a symbol more.
    assert!(
        ranking <= 4 * votes + 4 * (symbols + 1) + 64 * 1024,
        "ranking allocated {ranking} B for {votes} votes and {symbols} symbols"
    );
    assert!(grown_ranking > ranking + 12 * symbols, "a grown table's ranking allocated {grown_ranking} B");
}
