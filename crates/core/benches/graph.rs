//! Code graph benchmarks (divan) on the same real source as the code chunker bench (found on this
//! machine at bench time, never copied into the repo): Rust from `$CARGO_HOME/registry/src`,
//! TypeScript / JavaScript from `node_modules`, Python from the interpreter's library.
//!
//! Per family, on the same files:
//! - `chunk`: [`chunk_text`] alone (the peer: what indexing does today);
//! - `chunk_graph`: [`chunk_with_graph`] — the same chunks plus the file's graph from the same
//!   parse (target ≤ 1.3× `chunk`);
//! - `resolve`: cross-file [`resolve`] of all the files' graphs (extraction excluded).
//!
//! `cargo bench -p edgerag-core --bench graph`. `EDGERAG_BENCH_BYTES` (default 1.5 MB per
//! family) and `EDGERAG_BENCH_FAMILIES=rust,python` as in the code bench. Before the benches run,
//! an interleaved table (best of 5) prints the ratio and the resolution time per file count.
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
                    collect(&dir, ext, budget(), &mut files, &mut bytes);
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

fn main() {
    if std::env::var_os("EDGERAG_BENCH_NO_TABLE").is_none() {
        eprintln!("interleaved, best of 5 rounds:");
        eprintln!(
            "{:<11} {:>6} {:>7} {:>12} {:>14} {:>8} {:>12}",
            "family", "files", "MB", "chunk MB/s", "+graph MB/s", "ratio", "resolve ms"
        );
        for family in available() {
            let c = corpus(family);
            let config = config(c);
            let mut best = [f64::MAX; 3];
            for _ in 0..5 {
                let start = std::time::Instant::now();
                c.files.iter().for_each(|(p, t)| drop(black_box(chunk_text(p, t, &config))));
                best[0] = best[0].min(start.elapsed().as_secs_f64());
                let start = std::time::Instant::now();
                c.files.iter().for_each(|(p, t)| drop(black_box(chunk_with_graph(p, t, &config))));
                best[1] = best[1].min(start.elapsed().as_secs_f64());
                let mut g = graphs(c);
                let start = std::time::Instant::now();
                resolve(black_box(&mut g));
                best[2] = best[2].min(start.elapsed().as_secs_f64());
            }
            let mb = c.bytes as f64 / 1e6;
            eprintln!(
                "{family:<11} {:>6} {:>7.2} {:>12.2} {:>14.2} {:>7.2}x {:>12.1}",
                c.files.len(),
                mb,
                mb / best[0],
                mb / best[1],
                best[1] / best[0],
                best[2] * 1e3
            );
        }
        eprintln!();
    }
    divan::main();
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

#[divan::bench(args = available(), sample_count = 5, sample_size = 1)]
fn resolve_all(bencher: Bencher, family: &str) {
    let c = corpus(family);
    let base = graphs(c);
    bencher.with_inputs(|| base.clone()).bench_local_values(|mut g| {
        resolve(&mut g);
        g
    });
}
