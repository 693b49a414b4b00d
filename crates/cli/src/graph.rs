//! `edgerag graph <file|dir>... [--format jsonl|json|dot] [--stats]`: the code graph (symbols,
//! calls, imports, inheritance, containment) of files and directories, with the same walk and
//! ignore rules as `chunk`. Edges are resolved across all the files given.
use std::io::{self, BufWriter, Write};
use std::time::Instant;

use clap::ValueEnum;
use edgerag_core::graph::{chunk_with_graph, resolve, Edge, FileGraph, GraphStats, Node};
use edgerag_core::ChunkConfig;
use serde_json::json;

use crate::walk::{walk, Entry};
use crate::{Failure, Outcome};

const EXAMPLES: &str = "\
EXAMPLES:
    edgerag graph src --stats > graph.jsonl
    edgerag graph . | jq -c 'select(.type == \"edge\" and .kind == \"CALLS\" and .dst == null)'
    edgerag graph src --format dot | dot -Tsvg > graph.svg";

/// Extract the code graph: symbols, calls, imports, inheritance (JSONL, JSON or dot).
///
/// Nodes are the symbols of every file with a tree-sitter grammar: MODULE (a file, or a module /
/// namespace block), CLASS, INTERFACE, ENUM, STRUCT, TRAIT, TYPE, METHOD, FUNCTION, FIELD,
/// CONSTANT and ENDPOINT (an HTTP handler, with its route and method). Edges are CONTAINS,
/// CALLS, IMPORTS, EXTENDS and IMPLEMENTS; each says how its target was found (scope, same-file,
/// import, same-package, unique-name) with a confidence, and calls that lead outside the given
/// files keep the callee's name with a null `dst`.
///
/// Paths are walked exactly like `edgerag chunk` walks them; edges are resolved across all the
/// files given, so pass the whole project.
#[derive(Debug, clap::Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::LONG_FOOTER))]
pub struct Args {
    /// Files and directories to read.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<String>,
    /// Output format: one node or edge per line, one JSON object {nodes, edges}, or Graphviz dot.
    #[arg(long, value_enum, default_value_t = Format::Jsonl, help_heading = "Output")]
    format: Format,
    /// Print counts per node and edge kind and the shares of resolved calls and references to stderr.
    #[arg(long, help_heading = "Output")]
    stats: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Jsonl,
    Json,
    Dot,
}

impl Args {
    pub fn run(self) -> Outcome {
        let started = Instant::now();
        let config = ChunkConfig::default();
        let mut files: Vec<FileGraph> = Vec::new();
        walk(&self.paths, config.max_file_bytes, &mut |entry| match entry {
            Entry::Skipped { path, code, message } => eprintln!("edgerag graph: skipped {path}: {code}: {message}"),
            Entry::File { path, text } => {
                if let (_, Some(graph)) = chunk_with_graph(&path, &text, &config) {
                    files.push(graph);
                }
            }
        });
        resolve(&mut files);
        let mut out = BufWriter::with_capacity(1 << 16, io::stdout());
        if let Err(e) = write_graph(&mut out, self.format, &files).and_then(|_| out.flush()) {
            // A closed pipe (`| head`) is a normal way to stop reading.
            if e.kind() != io::ErrorKind::BrokenPipe {
                return Err(Failure::Failed(format!("cannot write output: {e}")));
            }
            return Ok(());
        }
        if self.stats {
            print_stats(&GraphStats::of(&files), started.elapsed().as_secs_f64());
        }
        Ok(())
    }
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
    eprintln!(
        "  references: {} resolved of {} ({:.1} %)",
        stats.resolved_references,
        stats.references,
        stats.resolved_reference_share * 100.0
    );
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn options_are_parsed() {
        let cli = Cli::try_parse_from(["graph", "a", "b", "--format", "dot", "--stats"]).unwrap();
        assert_eq!(cli.args.paths, ["a", "b"]);
        assert_eq!(cli.args.format, Format::Dot);
        assert!(cli.args.stats);
    }

    #[test]
    fn usage_errors_are_reported() {
        for bad in [&["graph"][..], &["graph", "a", "--format", "xml"], &["graph", "a", "--bogus"]] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn jsonl_has_the_documented_fields() {
        let (_, graph) = chunk_with_graph("a.py", "def f():\n    g()\n\ndef g():\n    pass\n", &ChunkConfig::default());
        let mut files = vec![graph.unwrap()];
        resolve(&mut files);
        let mut out = Vec::new();
        write_graph(&mut out, Format::Jsonl, &files).unwrap();
        let lines: Vec<serde_json::Value> =
            String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let node = lines.iter().find(|l| l["type"] == "node" && l["name"] == "f").unwrap();
        for key in ["id", "kind", "name", "fqn", "path", "language", "startLine", "endLine", "signature", "doc", "parent"] {
            assert!(node.get(key).is_some(), "node lacks {key}");
        }
        let call = lines.iter().find(|l| l["type"] == "edge" && l["kind"] == "CALLS").unwrap();
        for key in ["kind", "src", "dst", "dstName", "confidence", "path", "line"] {
            assert!(call.get(key).is_some(), "edge lacks {key}");
        }
        let g = lines.iter().find(|l| l["type"] == "node" && l["name"] == "g").unwrap();
        assert_eq!(call["dst"], g["id"]);
        assert_eq!(call["line"], 2);
    }
}
