//! `edgerag graph <file|dir>... [--format jsonl|json|dot] [--stats]`: the code graph (symbols,
//! calls, imports, inheritance, containment) of files and directories, with the same walk and
//! ignore rules as `chunk`. Edges are resolved across all the files given.
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Instant;

use edgerag_core::graph::{chunk_with_graph, resolve, Edge, FileGraph, GraphStats, Node};
use edgerag_core::ChunkConfig;
use serde_json::json;

use crate::args::{Arg, Args};
use crate::walk::{walk, Entry};
use crate::USAGE_ERROR;

const HELP: &str = "usage: edgerag graph <file|dir>... [options]

Extract the code graph: symbols (MODULE, CLASS, INTERFACE, ENUM, STRUCT, TRAIT, TYPE, METHOD,
FUNCTION, FIELD, CONSTANT, ENDPOINT) and edges (CONTAINS, CALLS, IMPORTS, EXTENDS, IMPLEMENTS),
resolved across all the files given. Directories are walked like `edgerag chunk` walks them.

options:
  --format jsonl|json|dot   output format (default jsonl: one node or edge per line;
                            json: {\"nodes\": [...], \"edges\": [...]}; dot: Graphviz)
  --stats                   print counts per kind and the share of resolved calls to stderr
  -h, --help                this help
";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Jsonl,
    Json,
    Dot,
}

#[derive(Debug)]
struct Options {
    paths: Vec<String>,
    format: Format,
    stats: bool,
}

/// Parse the arguments; `Err(None)` means help was printed.
fn parse(argv: Vec<String>) -> Result<Options, Option<String>> {
    let mut args = Args::new(argv);
    let mut options = Options { paths: Vec::new(), format: Format::Jsonl, stats: false };
    while let Some(arg) = args.next() {
        match arg {
            Arg::Positional(p) => options.paths.push(p),
            Arg::Flag { name, inline } => match name.as_str() {
                "-h" | "--help" => {
                    print!("{HELP}");
                    return Err(None);
                }
                "--format" => {
                    options.format = match args.value(&name, inline)?.as_str() {
                        "jsonl" => Format::Jsonl,
                        "json" => Format::Json,
                        "dot" => Format::Dot,
                        other => {
                            return Err(Some(format!(
                                "--format: unknown format {other:?} (jsonl, json, dot)"
                            )))
                        }
                    }
                }
                "--stats" => options.stats = true,
                other => return Err(Some(format!("unknown option {other}"))),
            },
        }
    }
    if options.paths.is_empty() {
        return Err(Some("no file or directory given".into()));
    }
    Ok(options)
}

pub fn run(argv: Vec<String>) -> ExitCode {
    let options = match parse(argv) {
        Ok(options) => options,
        Err(None) => return ExitCode::SUCCESS,
        Err(Some(message)) => {
            eprintln!("edgerag graph: {message}\n\n{HELP}");
            return ExitCode::from(USAGE_ERROR);
        }
    };
    let started = Instant::now();
    let config = ChunkConfig::default();
    let mut files: Vec<FileGraph> = Vec::new();
    walk(&options.paths, config.max_file_bytes, &mut |entry| match entry {
        Entry::Skipped { path, code, message } => {
            eprintln!("edgerag graph: skipped {path}: {code}: {message}")
        }
        Entry::File { path, text } => {
            if let (_, Some(graph)) = chunk_with_graph(&path, &text, &config) {
                files.push(graph);
            }
        }
    });
    resolve(&mut files);
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = write_graph(&mut out, options.format, &files).and_then(|_| out.flush());
    if let Err(e) = result {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("edgerag graph: cannot write output: {e}");
        }
        return ExitCode::SUCCESS;
    }
    if options.stats {
        print_stats(&GraphStats::of(&files), started.elapsed().as_secs_f64());
    }
    ExitCode::SUCCESS
}

fn node_json(n: &Node) -> serde_json::Value {
    let mut v = json!({
        "type": "node",
        "id": n.id,
        "kind": n.kind,
        "name": n.name,
        "fqn": n.fqn,
        "path": n.path,
        "language": n.language,
        "startLine": n.start_line,
        "endLine": n.end_line,
        "signature": n.signature,
        "doc": n.doc,
        "parent": n.parent,
    });
    if let (Some(route), Some(method)) = (&n.route, &n.http_method) {
        v["route"] = json!(route);
        v["httpMethod"] = json!(method);
    }
    v
}

fn edge_json(e: &Edge) -> serde_json::Value {
    json!({
        "type": "edge",
        "kind": e.kind,
        "src": e.src,
        "dst": e.dst,
        "dstName": e.dst_name,
        "confidence": e.confidence,
        "resolution": e.resolution,
        "path": e.path,
        "line": e.line,
    })
}

fn write_graph(out: &mut impl Write, format: Format, files: &[FileGraph]) -> io::Result<()> {
    let nodes = files.iter().flat_map(|f| f.nodes.iter());
    let edges = files.iter().flat_map(|f| f.edges.iter());
    match format {
        Format::Jsonl => {
            for n in nodes {
                serde_json::to_writer(&mut *out, &node_json(n))?;
                out.write_all(b"\n")?;
            }
            for e in edges {
                serde_json::to_writer(&mut *out, &edge_json(e))?;
                out.write_all(b"\n")?;
            }
        }
        Format::Json => {
            let all = json!({
                "nodes": nodes.map(node_json).collect::<Vec<_>>(),
                "edges": edges.map(edge_json).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut *out, &all)?;
            out.write_all(b"\n")?;
        }
        Format::Dot => {
            writeln!(out, "digraph code {{")?;
            writeln!(out, "  rankdir=LR; node [shape=box, fontname=\"monospace\"];")?;
            for n in nodes {
                let label = format!("{} {}", n.kind.as_str(), n.fqn);
                writeln!(out, "  \"{}\" [label={}];", &n.id[..16], json!(label))?;
            }
            for e in edges {
                let Some(dst) = &e.dst else { continue };
                writeln!(
                    out,
                    "  \"{}\" -> \"{}\" [label=\"{}\"];",
                    &e.src[..16],
                    &dst[..16],
                    e.kind.as_str()
                )?;
            }
            writeln!(out, "}}")?;
        }
    }
    Ok(())
}

fn print_stats(stats: &GraphStats, seconds: f64) {
    let join = |m: &std::collections::BTreeMap<&str, usize>| {
        m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
    };
    eprintln!("edgerag graph: {} files in {:.3} s", stats.files, seconds);
    eprintln!("  nodes: {}", join(&stats.nodes));
    eprintln!("  edges: {}", join(&stats.edges));
    let by: Vec<String> = stats.calls_by_resolution.iter().map(|(k, v)| format!("{k} {v}")).collect();
    eprintln!(
        "  calls: {} resolved of {} ({:.1} %; {})",
        stats.resolved_calls,
        stats.calls,
        stats.resolved_call_share * 100.0,
        by.join(", ")
    );
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_are_parsed() {
        let o = parse(argv("a b --format dot --stats")).ok().unwrap();
        assert_eq!(o.paths, ["a", "b"]);
        assert_eq!(o.format, Format::Dot);
        assert!(o.stats);
    }

    #[test]
    fn usage_errors_are_reported() {
        for bad in ["", "a --format xml", "a --bogus", "a --format"] {
            assert!(matches!(parse(argv(bad)), Err(Some(_))), "{bad:?}");
        }
    }
}
