//! Code graph benchmarks (divan) on the same real source as the code chunker bench (found on this
//! machine at bench time, never copied into the repo): Rust from `$CARGO_HOME/registry/src`,
//! TypeScript / JavaScript from `node_modules`, Python from the interpreter's library. Files are
//! named relative to those roots, as a repository's files are (node ids hash the path).
//!
//! Per family, on the same files:
//! - `chunk`: [`chunk_text`] alone (the peer: what indexing does today);
//! - `chunk_graph`: [`chunk_with_graph`] — the same chunks plus the file's graph from the same
//!   parse (target ≤ 1.3× `chunk`);
//! - `resolve`: cross-file [`resolve`] of all the files' graphs (extraction excluded);
//! - `resolve_synthetic_project`: what the worker does when a job of a 5,000-file repository
//!   completes — parse every file's stored graph (JSON) and [`resolve`] them together — on a
//!   generated Python project (50 packages × 100 modules, imports between them, methods, calls
//!   local, imported and through `self`; deterministic). Target < 10 s.
//!
//! `cargo bench -p edgerag-core --bench graph`. `EDGERAG_BENCH_BYTES` (default 1.5 MB per
//! family) and `EDGERAG_BENCH_FAMILIES=rust,python` as in the code bench. Before the benches run,
//! an interleaved table prints per family the median of per-round ratios (chunk+graph / chunk,
//! `EDGERAG_BENCH_ROUNDS` rounds, default 11, which side runs first alternating) with its range,
//! the load average before and after, and the resolution time; `EDGERAG_BENCH_TABLE_ONLY=1`
//! prints only this table (no synthetic project, no divan benches), `EDGERAG_BENCH_NO_TABLE=1` skips it.
//! `EDGERAG_BENCH_DIGEST=1` prints a digest of all outputs per family and stops (compare two
//! builds of a change meant to leave the output as it was).
#![allow(clippy::unwrap_used)]
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use divan::counter::BytesCount;
use divan::{black_box, Bencher};
use edgerag_core::graph::{chunk_with_graph, resolve, FileGraph};
use edgerag_core::{chunk_text, ChunkConfig, Language};

const FAMILIES: &[&str] = &["rust", "typescript", "javascript", "python"];
const MAX_FILE: u64 = 256 * 1024;
const MIN_CORPUS: usize = 1 << 20;

struct Corpus {
    language: Language,
    files: Vec<(String, String)>,
    bytes: usize,
}

fn budget() -> usize {
    std::env::var("EDGERAG_BENCH_BYTES").ok().and_then(|b| b.parse().ok()).unwrap_or(3 << 19)
}

fn collect(dir: &Path, ext: &str, budget: usize, out: &mut Vec<(String, String)>, total: &mut usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if *total >= budget {
            return;
        }
        let Ok(kind) = e.file_type() else { continue };
        let path = e.path();
        let name = path.to_string_lossy().into_owned();
        if kind.is_dir() {
            collect(&path, ext, budget, out, total);
        } else if kind.is_file()
            && name.ends_with(ext)
            && !name.ends_with(".min.js")
            && e.metadata().is_ok_and(|m| m.len() <= MAX_FILE && m.len() > 0)
        {
            if let Ok(text) = std::fs::read_to_string(&path) {
                *total += text.len();
                out.push((name, text));
            }
        }
    }
}

fn roots(family: &str) -> (Language, &'static str, Vec<PathBuf>) {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_default();
    let node_modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../node_modules");
    match family {
        "rust" => (Language::Rust, ".rs", vec![cargo_home.join("registry/src")]),
        "typescript" => (Language::Typescript, ".ts", vec![node_modules]),
        "javascript" => (Language::Javascript, ".js", vec![node_modules]),
        _ => {
            let output = std::process::Command::new("python3")
                .args([
                    "-c",
                    "import sysconfig as s; p = s.get_paths(); print(p['purelib']); print(p['stdlib'])",
                ])
                .output();
            let dirs = match output {
                Ok(o) if o.status.success() => {
                    String::from_utf8_lossy(&o.stdout).lines().map(PathBuf::from).collect()
                }
                _ => vec![PathBuf::from("/usr/lib/python3")],
            };
            (Language::Python, ".py", dirs)
        }
    }
}

fn corpus(family: &str) -> &'static Corpus {
    static CORPORA: OnceLock<Vec<(&'static str, Corpus)>> = OnceLock::new();
    let all = CORPORA.get_or_init(|| {
        FAMILIES
            .iter()
            .map(|&f| {
                let (language, ext, dirs) = roots(f);
                let (mut files, mut bytes) = (Vec::new(), 0);
                for dir in dirs {
                    let from = files.len();
                    collect(&dir, ext, budget(), &mut files, &mut bytes);
                    // Named as a repository names them (relative to the corpus root), as the
                    // worker and the CLI do: every node id hashes the path.
                    for (path, _) in &mut files[from..] {
                        if let Ok(rel) = Path::new(path.as_str()).strip_prefix(&dir) {
                            *path = rel.to_string_lossy().into_owned();
                        }
                    }
                }
                (f, Corpus { language, files, bytes })
            })
            .collect()
    });
    &all.iter().find(|(f, _)| *f == family).unwrap().1
}

fn available() -> Vec<&'static str> {
    let only = std::env::var("EDGERAG_BENCH_FAMILIES").unwrap_or_default();
    FAMILIES
        .iter()
        .copied()
        .filter(|f| only.is_empty() || only.split(',').any(|o| o.trim() == *f))
        .filter(|f| corpus(f).bytes >= MIN_CORPUS)
        .collect()
}

fn config(c: &Corpus) -> ChunkConfig {
    ChunkConfig { language: Some(c.language), ..ChunkConfig::default() }
}

fn graphs(c: &Corpus) -> Vec<FileGraph> {
    let config = config(c);
    c.files.iter().filter_map(|(p, t)| chunk_with_graph(p, t, &config).1).collect()
}

const SYNTHETIC_FILES: usize = 5_000;

/// A generated Python project of `files` modules in packages of 100: each module imports a
/// function from three other modules and has a class and eight functions that call each other,
/// the imported functions and the class's methods.
fn synthetic_project(files: usize) -> Vec<(String, String)> {
    let module = |i: usize| (format!("pkg{}", i / 100), format!("mod{}", i % 100));
    (0..files)
        .map(|i| {
            let (pkg, m) = module(i);
            let mut text = String::new();
            let others: Vec<usize> = [1, 37, 211].iter().map(|k| (i * 7 + k) % files).collect();
            for &o in &others {
                let (opkg, om) = module(o);
                text.push_str(&format!("from {opkg}.{om} import helper_{o}_0\n"));
            }
            text.push_str(&format!("\n\nclass Service{i}:\n    def load(self, key):\n        return self.store(key)\n\n    def store(self, key):\n        return helper_{i}_1(key)\n\n"));
            for f in 0..8 {
                let o = others[f % others.len()];
                text.push_str(&format!(
                    "\ndef helper_{i}_{f}(value):\n    \"\"\"Step {f} of module {i}.\"\"\"\n    first = helper_{i}_{}(value)\n    other = helper_{o}_0(first)\n    return Service{i}().load(other)\n\n",
                    (f + 1) % 8
                ));
            }
            (format!("{pkg}/{m}.py"), text)
        })
        .collect()
}

/// The synthetic project's graphs as the worker stores them (one JSON per file).
fn synthetic_stored() -> &'static Vec<String> {
    static STORED: OnceLock<Vec<String>> = OnceLock::new();
    STORED.get_or_init(|| {
        let config = ChunkConfig { language: Some(Language::Python), ..ChunkConfig::default() };
        synthetic_project(SYNTHETIC_FILES)
            .iter()
            .filter_map(|(p, t)| chunk_with_graph(p, t, &config).1)
            .map(|g| serde_json::to_string(&g).unwrap())
            .collect()
    })
}

/// Parse the stored graphs and resolve them: the worker's cross-file step without D1.
fn resolve_stored(stored: &[String]) -> Vec<FileGraph> {
    let mut files: Vec<FileGraph> = stored.iter().map(|s| serde_json::from_str(s).unwrap()).collect();
    resolve(&mut files);
    files
}

fn main() {
    if std::env::var_os("EDGERAG_BENCH_DIGEST").is_some() {
        print_digests();
        return;
    }
    let table_only = std::env::var_os("EDGERAG_BENCH_TABLE_ONLY").is_some();
    if std::env::var_os("EDGERAG_BENCH_NO_TABLE").is_none() && !table_only {
        let start = std::time::Instant::now();
        let stored = synthetic_stored();
        let extract = start.elapsed().as_secs_f64();
        let mut best = f64::MAX;
        let mut resolved = Vec::new();
        for _ in 0..3 {
            let start = std::time::Instant::now();
            resolved = resolve_stored(black_box(stored));
            best = best.min(start.elapsed().as_secs_f64());
        }
        let calls: Vec<_> = resolved
            .iter()
            .flat_map(|f| &f.edges)
            .filter(|e| e.kind == edgerag_core::graph::EdgeKind::Calls)
            .collect();
        let resolved_calls = calls.iter().filter(|e| e.dst.is_some()).count();
        let edges: usize = resolved.iter().map(|f| f.edges.len()).sum();
        let nodes: usize = resolved.iter().map(|f| f.nodes.len()).sum();
        eprintln!(
            "synthetic project: {} files, {nodes} nodes, {edges} edges ({resolved_calls}/{} calls resolved); \
             chunk+graph {:.1} s; parse stored graphs + resolve, best of 3: {:.0} ms",
            stored.len(),
            calls.len(),
            extract,
            best * 1e3
        );
    }
    if std::env::var_os("EDGERAG_BENCH_NO_TABLE").is_none() {
        let rounds = table_rounds();
        eprintln!(
            "interleaved, {rounds} rounds (chunk and chunk+graph alternate, order swapped every round); \
             ratio = median of the per-round ratios [min–max], MB/s from the best round; load average {}",
            load_average()
        );
        eprintln!(
            "{:<11} {:>6} {:>7} {:>12} {:>14} {:>8} {:>13} {:>12}",
            "family", "files", "MB", "chunk MB/s", "+graph MB/s", "ratio", "range", "resolve ms"
        );
        for family in available() {
            let c = corpus(family);
            let config = config(c);
            let chunk_only = || {
                let start = std::time::Instant::now();
                c.files.iter().for_each(|(p, t)| drop(black_box(chunk_text(p, t, &config))));
                start.elapsed().as_secs_f64()
            };
            let with_graph = || {
                let start = std::time::Instant::now();
                c.files.iter().for_each(|(p, t)| drop(black_box(chunk_with_graph(p, t, &config))));
                start.elapsed().as_secs_f64()
            };
            let (mut best, mut ratios) = ([f64::MAX; 3], Vec::with_capacity(rounds));
            for round in 0..rounds {
                // Which runs first alternates, so a load change mid-round does not favour one side.
                let (a, b) = if round % 2 == 0 {
                    let a = chunk_only();
                    (a, with_graph())
                } else {
                    let b = with_graph();
                    (chunk_only(), b)
                };
                best[0] = best[0].min(a);
                best[1] = best[1].min(b);
                ratios.push(b / a);
                if round < 3 {
                    let mut g = graphs(c);
                    let start = std::time::Instant::now();
                    resolve(black_box(&mut g));
                    best[2] = best[2].min(start.elapsed().as_secs_f64());
                }
            }
            ratios.sort_by(f64::total_cmp);
            let median = ratios[ratios.len() / 2];
            let mb = c.bytes as f64 / 1e6;
            eprintln!(
                "{family:<11} {:>6} {:>7.2} {:>12.2} {:>14.2} {:>7.2}x {:>5.2}–{:<5.2}  {:>12.1}",
                c.files.len(),
                mb,
                mb / best[0],
                mb / best[1],
                median,
                ratios[0],
                ratios[ratios.len() - 1],
                best[2] * 1e3
            );
        }
        eprintln!("load average after: {}", load_average());
        eprintln!();
    }
    if !table_only {
        divan::main();
    }
}

/// Per family, a BLAKE3 digest of every file's chunks and graph as JSON: two builds that print
/// the same digests produced byte-identical output on the whole corpus (a check for changes
/// meant to be speed-only).
fn print_digests() {
    for family in available() {
        let c = corpus(family);
        let config = config(c);
        let mut hash = blake3::Hasher::new();
        for (p, t) in &c.files {
            hash.update(serde_json::to_string(&chunk_with_graph(p, t, &config)).unwrap().as_bytes());
        }
        println!("{family:<11} {:>6} files  {}", c.files.len(), hash.finalize().to_hex());
    }
}

/// `EDGERAG_BENCH_ROUNDS` (default 11): rounds of the interleaved ratio table.
fn table_rounds() -> usize {
    std::env::var("EDGERAG_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).filter(|&r| r > 0).unwrap_or(11)
}

/// The 1/5/15-minute load averages (the machine is shared: a figure means little without them).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

#[divan::bench(args = available(), sample_count = 5, sample_size = 1)]
fn chunk(bencher: Bencher, family: &str) {
    let c = corpus(family);
    let config = config(c);
    bencher.counter(BytesCount::new(c.bytes)).bench_local(|| {
        for (p, t) in &c.files {
            black_box(chunk_text(p, t, &config));
        }
    });
}

#[divan::bench(args = available(), sample_count = 5, sample_size = 1)]
fn chunk_graph(bencher: Bencher, family: &str) {
    let c = corpus(family);
    let config = config(c);
    bencher.counter(BytesCount::new(c.bytes)).bench_local(|| {
        for (p, t) in &c.files {
            black_box(chunk_with_graph(p, t, &config));
        }
    });
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn resolve_synthetic_project(bencher: Bencher) {
    let stored = synthetic_stored();
    bencher.bench_local(|| resolve_stored(black_box(stored)));
}

#[divan::bench(args = available(), sample_count = 5, sample_size = 1)]
fn resolve_all(bencher: Bencher, family: &str) {
    let c = corpus(family);
    let base = graphs(c);
    bencher.with_inputs(|| base.clone()).bench_local_values(|mut g| {
        resolve(&mut g);
        g
    });
}
