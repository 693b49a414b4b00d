//! Native side of the wasm determinism check (see `scripts/wasm/compare.mjs`).
//!
//! `edgerag-wasm-check json [FILE...]`  one line per file: the chunks JSON of `chunk_to_json`
//! `edgerag-wasm-check time [FILE...]`  chunking throughput over all files, as JSON
//! With no FILE arguments, paths are read from stdin, one per line. Paths are chunked as given.
use std::io::{BufRead, Write};
use std::time::Instant;

use edgerag_wasm_check::{chunk_count, chunk_to_json};

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let mut paths: Vec<String> = args.collect();
    if paths.is_empty() {
        paths = std::io::stdin().lock().lines().map_while(Result::ok).filter(|l| !l.is_empty()).collect();
    }
    let config = std::env::var("EDGERAG_CHUNK_CONFIG").unwrap_or_default();
    let files: Vec<(String, String)> = paths
        .into_iter()
        .filter_map(|p| match std::fs::read(&p) {
            Ok(bytes) => Some((p, String::from_utf8_lossy(&bytes).into_owned())),
            Err(e) => {
                eprintln!("{p}: {e}");
                None
            }
        })
        .collect();
    match mode.as_str() {
        "json" => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            for (path, text) in &files {
                if writeln!(out, "{}", chunk_to_json(path, text, &config)).is_err() {
                    std::process::exit(1);
                }
            }
        }
        "time" => {
            let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
            let rounds: usize = std::env::var("ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(3);
            let mut chunks = 0;
            // One warm-up round, then the best of `rounds` (the machine is shared).
            let mut best = f64::MAX;
            for round in 0..=rounds {
                let start = Instant::now();
                chunks = files.iter().map(|(p, t)| chunk_count(p, t, &config)).sum::<usize>();
                let secs = start.elapsed().as_secs_f64();
                if round > 0 {
                    best = best.min(secs);
                }
            }
            println!(
                "{{\"files\":{},\"bytes\":{bytes},\"chunks\":{chunks},\"seconds\":{best:.6},\"mbPerSec\":{:.3}}}",
                files.len(),
                bytes as f64 / best / 1e6
            );
        }
        "graphs" => {
            // Each code file's graph as the chunk stage stores it, `path\tjson` in path order
            // (the path relative to `GRAPH_ROOT`); a graph over the 1 MB value budget is left out.
            let root = std::env::var("GRAPH_ROOT").unwrap_or_default();
            let mut rows: Vec<(String, String)> = files
                .iter()
                .filter_map(|(path, text)| {
                    let rel = path.strip_prefix(root.as_str()).unwrap_or(path).trim_start_matches('/');
                    let (_, graph) = edgerag_core::graph::chunk_with_graph(rel, text, &Default::default());
                    let json = serde_json::to_string(&graph?).ok()?;
                    (json.len() <= 1_000_000).then(|| (rel.to_string(), json))
                })
                .collect();
            rows.sort();
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            for (path, json) in &rows {
                if writeln!(out, "{path}\t{json}").is_err() {
                    std::process::exit(1);
                }
            }
        }
        _ => {
            eprintln!("usage: edgerag-wasm-check json|time|graphs [FILE...]   (paths from stdin when none)");
            std::process::exit(2);
        }
    }
}
