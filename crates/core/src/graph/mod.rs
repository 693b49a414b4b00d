//! The code graph: symbols (nodes), and the calls, imports, inheritance and containment between
//! them (edges), for every language the code chunker parses with tree-sitter.
//!
//! Two pure steps:
//! 1. **Per file** ([`chunk_with_graph`], [`extract_graph`]): one walk over the parse tree the
//!    chunker already made (the file is parsed once) gives the file's nodes, its `CONTAINS`
//!    edges, its imports, and its `CALLS` / `EXTENDS` / `IMPLEMENTS` / `IMPORTS` edges, resolved as
//!    far as the file alone allows (enclosing scopes, `self` / `this` members, the same file).
//! 2. **Across files** ([`resolve`]): the remaining edges are resolved over all files' output —
//!    through the file's imports (relative paths, modules, packages), then the same package /
//!    directory, then a name unique in the whole project (not for a call through a type, module
//!    or global the project does not define: `Vec::new`, `Math.max`, `str.join`); what is still not
//!    found stays an external edge (`dst` null, `dstName` as written). Each edge records how it was
//!    resolved and a confidence for it.
//!
//! Node ids are BLAKE3 of path + kind + fqn + ordinal (the ordinal tells apart same-named
//! overloads), so they are stable across runs and identical on native and wasm32.
//!
//! The per-language rules live in `lang/` (one file per family; adding a language follows the
//! template of the language registry, `crate::lang::registry`);
//! HTTP handler recognition in `endpoint.rs`; import-to-file mapping in `modules.rs`; the names of
//! libraries and built-ins a call may go through (`std`, `console`, Go's standard packages) in
//! `outside.rs`.
use std::sync::Arc;

use crate::chunk::{chunk_text, Chunk, ChunkConfig};
use crate::lang::Language;

mod compact;
mod definitions;
#[cfg(feature = "tree-sitter")]
mod endpoint;
#[cfg(feature = "tree-sitter")]
mod extract;
#[cfg(feature = "tree-sitter")]
pub(crate) mod lang;
mod modules;
mod outside;
pub mod plan;
pub mod rank;
mod resolve;
mod stats;
mod text;
mod types;

pub use definitions::Definitions;
pub use resolve::{resolve, Ranked, SymbolTable};
pub use stats::GraphStats;
pub use types::{Edge, EdgeKind, FileGraph, Hint, Import, Node, NodeKind, Resolution};

/// A node's id: BLAKE3 over the length-prefixed path, kind, fqn and ordinal (the how-manieth node
/// with this kind and fqn in the file, from 0), hex (64 chars).
pub fn node_id(path: &str, kind: NodeKind, fqn: &str, ordinal: u32) -> Arc<str> {
    // The same bytes hashed in one call (one call per node: the streaming hasher's set-up and
    // per-update work cost more than the hash of these few bytes).
    const STACK: usize = 512;
    let parts = [path, kind.as_str(), fqn];
    let len = parts.iter().map(|p| 8 + p.len()).sum::<usize>() + 4;
    let hash = if len <= STACK {
        let mut buf = [0u8; STACK];
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            buf[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        for part in parts {
            put(&(part.len() as u64).to_le_bytes());
            put(part.as_bytes());
        }
        put(&ordinal.to_le_bytes());
        blake3::hash(&buf[..len])
    } else {
        let mut h = blake3::Hasher::new();
        for part in parts {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update(&ordinal.to_le_bytes());
        h.finalize()
    };
    Arc::from(hash.to_hex().as_str())
}

/// Chunks a file (exactly as [`chunk_text`], plus each chunk's `symbol_id`) and, for a language
/// with a grammar, extracts its graph from the same parse. The graph's edges across files are not resolved yet: pass every
/// file's graph to [`resolve`].
pub fn chunk_with_graph(path: &str, text: &str, config: &ChunkConfig) -> (Vec<Chunk>, Option<FileGraph>) {
    #[cfg(feature = "tree-sitter")]
    let language = config.language.unwrap_or_else(|| Language::detect(path));
    #[cfg(feature = "tree-sitter")]
    if let Some(glang) = lang::graph_lang(language) {
        let bom = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
        let body = &text[bom..];
        if let (Some(mut pieces), tree) = crate::chunk::code::chunk_with_tree(body, language, config) {
            for piece in &mut pieces {
                piece.start_byte += bom;
                piece.end_byte += bom;
            }
            // No tree (the parse stopped at its budget): the pieces are those `chunk_text` gives,
            // without parsing a second time, and there is no graph.
            let graph = tree.map(|tree| extract::extract(path, body, language, &tree, glang));
            let mut chunks = crate::chunk::assemble(path, text, language, pieces, config);
            if let Some(graph) = &graph {
                graph.assign_symbols(&mut chunks);
            }
            return (chunks, graph);
        }
    }
    (chunk_text(path, text, config), None)
}

/// The graph of one file alone (parses it; use [`chunk_with_graph`] when chunking too).
pub fn extract_graph(path: &str, text: &str, language: Language) -> Option<FileGraph> {
    #[cfg(feature = "tree-sitter")]
    {
        let glang = lang::graph_lang(language)?;
        let ts = crate::chunk::code::ts_language(language)?;
        let body = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&ts).ok()?;
        let tree = crate::chunk::code::parse_bounded(&mut parser, body)?;
        Some(extract::extract(path, body, language, &tree, glang))
    }
    #[cfg(not(feature = "tree-sitter"))]
    {
        let _ = (path, text, language);
        None
    }
}

/// Whether the graph is extracted for `language` in this build.
pub fn has_graph(language: Language) -> bool {
    #[cfg(feature = "tree-sitter")]
    {
        lang::graph_lang(language).is_some()
    }
    #[cfg(not(feature = "tree-sitter"))]
    {
        let _ = language;
        false
    }
}

impl FileGraph {
    /// Sets every chunk's `symbol_id` to its node: the same node as [`FileGraph::node_for_span`]
    /// gives for the chunk's lines, found in one sweep over the chunks in line order instead of a
    /// scan of every node per chunk (chunks × nodes grows with the square of a large file).
    pub fn assign_symbols(&self, chunks: &mut [Chunk]) {
        let nodes = self.nodes_for_spans(chunks);
        for (chunk, node) in chunks.iter_mut().zip(nodes) {
            chunk.metadata.symbol_id = node.map(|i| self.nodes[i].id.to_string());
        }
    }

    /// [`FileGraph::node_for_span`] of every `(start, end)` line span in `chunks`, as node
    /// indices: candidates sorted by first line enter an active list as the sweep reaches their
    /// first line and leave it after their last, so each span looks only at the nodes holding its
    /// first line (a handful: the nesting depth).
    fn nodes_for_spans(&self, chunks: &[Chunk]) -> Vec<Option<usize>> {
        let mut out = vec![None; chunks.len()];
        let mut order: Vec<usize> = (0..chunks.len()).collect();
        order.sort_by_key(|&c| chunks[c].start_line);
        let mut candidates: Vec<usize> =
            (1..self.nodes.len()).filter(|&i| self.nodes[i].kind != NodeKind::Field).collect();
        candidates.sort_by_key(|&i| self.nodes[i].start_line);
        let (mut next, mut active) = (0, Vec::<usize>::new());
        for c in order {
            let (start, end) = (chunks[c].start_line, chunks[c].end_line);
            if end < start {
                // Not a span the sweep can answer (nodes ending inside it hold neither line).
                out[c] = self.node_index_for_span(start, end);
                continue;
            }
            while let Some(&i) = candidates.get(next).filter(|&&i| self.nodes[i].start_line <= start) {
                active.push(i);
                next += 1;
            }
            active.retain(|&i| self.nodes[i].end_line >= start);
            // Smallest span first, then the earliest node: `min_by_key`'s tie rule.
            let key = |&i: &usize| (self.nodes[i].end_line - self.nodes[i].start_line, i);
            let inner = active.iter().filter(|&&i| self.nodes[i].end_line >= end).min_by_key(|i| key(i));
            out[c] = inner
                .or_else(|| active.iter().min_by_key(|i| key(i)))
                .copied()
                .or_else(|| (!self.nodes.is_empty()).then_some(0));
        }
        out
    }

    /// The innermost symbol whose span holds lines `start..=end` (a chunk's node), falling back
    /// to the innermost one holding `start`, then to the file's module node.
    pub fn node_for_span(&self, start: u32, end: u32) -> Option<&Node> {
        self.node_index_for_span(start, end).map(|i| &self.nodes[i])
    }

    fn node_index_for_span(&self, start: u32, end: u32) -> Option<usize> {
        let innermost = |holds: &dyn Fn(&Node) -> bool| {
            (1..self.nodes.len())
                .filter(|&i| self.nodes[i].kind != NodeKind::Field && holds(&self.nodes[i]))
                .min_by_key(|&i| self.nodes[i].end_line - self.nodes[i].start_line)
        };
        innermost(&|n| n.start_line <= start && n.end_line >= end)
            .or_else(|| innermost(&|n| n.start_line <= start && n.end_line >= start))
            .or_else(|| (!self.nodes.is_empty()).then_some(0))
    }
}

#[cfg(feature = "tree-sitter")]
pub(crate) use modules::module_path;
