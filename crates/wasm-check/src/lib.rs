//! One chunking entry point shared by the native binary and the wasm32 module, so both sides of
//! the determinism check run exactly the same code path: `(path, text, config JSON)` → JSON of
//! the chunks and the file's code graph.
//!
//! The wasm32 build exports a raw C ABI (no wasm-bindgen, no JS glue) so the module has no
//! imports at all and `scripts/wasm/compare.mjs` can drive it from plain node.
use edgerag_core::graph::chunk_with_graph;
use edgerag_core::{chunk_text, ChunkConfig};

/// Chunks `text` as file `path` with `config_json` (a `ChunkConfig` in JSON, `""` for defaults)
/// and returns `{"chunks": [...], "graph": {...} | null}` (the graph of a code file, from the same
/// parse, before cross-file resolution), or `{"error": ...}` for a bad config.
pub fn chunk_to_json(path: &str, text: &str, config_json: &str) -> String {
    let config = match parse_config(config_json) {
        Ok(c) => c,
        Err(e) => return serde_json::json!({ "error": e }).to_string(),
    };
    // The code graph comes from the same parse, so its ids are checked in the same pass.
    let (chunks, graph) = chunk_with_graph(path, text, &config);
    serde_json::to_string(&serde_json::json!({ "chunks": chunks, "graph": graph }))
        .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string())
}

/// Number of chunks only: what the throughput measurement calls, so JSON encoding is not timed.
pub fn chunk_count(path: &str, text: &str, config_json: &str) -> usize {
    parse_config(config_json).map(|c| chunk_text(path, text, &c).len()).unwrap_or(0)
}

/// Chunks plus the file's graph from the same parse ([`chunk_with_graph`]), counted: the other
/// side of the graph-extraction cost measurement. Returns chunks + nodes, so neither is dead code.
pub fn chunk_graph_count(path: &str, text: &str, config_json: &str) -> usize {
    parse_config(config_json)
        .map(|c| {
            let (chunks, graph) = chunk_with_graph(path, text, &c);
            chunks.len() + graph.map_or(0, |g| g.nodes.len())
        })
        .unwrap_or(0)
}

fn parse_config(config_json: &str) -> Result<ChunkConfig, String> {
    if config_json.trim().is_empty() {
        return Ok(ChunkConfig::default());
    }
    serde_json::from_str(config_json).map_err(|e| e.to_string())
}

#[cfg(target_arch = "wasm32")]
mod exports;

/// The job end's code-graph resolution as the worker runs it ([`edgerag_core::graph::SymbolTable`]
/// over stored graphs in pages), driven one call at a time by the host, so the wasm32 module's
/// memory (`memory.buffer.byteLength`) can be read between steps (`scripts/bench/resolve-wasm.mjs`).
pub mod resolution {
    use edgerag_core::graph::{rank::Links, FileGraph, SymbolTable};

    /// The state between calls.
    #[derive(Default)]
    pub struct Resolution {
        table: SymbolTable,
        /// The files whose base types are read again, and how many were.
        typed: Vec<usize>,
        bases_read: usize,
        links: Option<Links>,
        /// Edges of the page's graphs resolved so far.
        edges: usize,
    }

    impl Resolution {
        /// A table made for `nodes` nodes ([`SymbolTable::with_capacity`]; 0: grown as needed).
        pub fn with_capacity(nodes: usize) -> Resolution {
            Resolution {
                table: SymbolTable::with_capacity(nodes),
                typed: Vec::new(),
                bases_read: 0,
                links: None,
                edges: 0,
            }
        }

        /// Step 1: a stored graph's definitions (parsed, added, dropped).
        pub fn add(&mut self, json: &str) -> usize {
            match serde_json::from_str::<FileGraph>(json) {
                Ok(file) => {
                    self.table.add(&file);
                    file.nodes.len()
                }
                Err(_) => 0,
            }
        }

        /// The table sealed: its nodes.
        pub fn seal(&mut self) -> usize {
            self.table.seal();
            self.typed = self.table.base_files().collect();
            self.table.nodes()
        }

        /// Step 1 again, after [`Resolution::seal`]: stored graph `fi` read again for its base types
        /// when it has any (as the worker reads only those; others are not parsed). Returns 1 when
        /// it was read.
        pub fn bases(&mut self, fi: usize, json: &str) -> usize {
            if self.typed.get(self.bases_read) != Some(&fi) {
                return 0;
            }
            self.bases_read += 1;
            match serde_json::from_str::<FileGraph>(json) {
                Ok(file) => {
                    self.table.add_bases(fi, &file);
                    1
                }
                Err(_) => 0,
            }
        }

        /// Votes so far.
        pub fn votes(&self) -> usize {
            self.links.as_ref().map_or(0, Links::len)
        }

        /// Step 2: row `fi` of the page read next, parsed, resolved, voted and dropped (as the
        /// worker does with a graph whose cross-file edges did not change).
        pub fn row(&mut self, fi: usize, json: &str) {
            let Ok(file) = serde_json::from_str::<FileGraph>(json) else { return };
            let mut files = [file];
            self.table.resolve_page(fi, &mut files);
            let links = self.links.get_or_insert_with(|| self.table.votes());
            self.table.vote(links, &files[0]);
            self.edges += files[0].edges.len();
        }

        /// Step 2: the page's end. Returns its edges.
        pub fn page(&mut self) -> usize {
            std::mem::take(&mut self.edges)
        }

        /// Step 3: the ranks, read in order as the worker compares them with the stored ones.
        /// Returns the symbols ranked.
        pub fn rank(self) -> usize {
            let Resolution { mut table, links, .. } = self;
            let links = links.unwrap_or_else(|| table.votes());
            let ranked = table.rank(links);
            let symbols = ranked.symbols().count();
            symbols + ranked.files().len()
        }
    }
}

/// The chunk stage's work on one queue message, as the worker does it in wasm memory
/// (`src/pipeline/chunk.rs` and the statements it builds), driven by the host one file at a time
/// so the wasm32 module's memory can be read after each message (`scripts/bench/chunk-wasm.mjs`).
/// The D1 statements themselves are left out: their bound text is copied into JS.
pub mod chunk_stage {
    use edgerag_core::graph::{chunk_with_graph, FileGraph};
    use edgerag_core::json::{json_batches, json_len};
    use edgerag_core::ChunkConfig;

    /// A row batch's size (`store::JSON_BATCH_BYTES`).
    const JSON_BATCH_BYTES: usize = 512 * 1024;
    /// The largest file graph stored (`store::graph::MAX_FILE_GRAPH_BYTES`).
    const MAX_FILE_GRAPH_BYTES: usize = 1_000_000;

    /// The files of the message, read from D1 before the loop.
    #[derive(Default)]
    pub struct Message {
        files: Vec<(String, String)>,
        per_file: Vec<(Vec<edgerag_core::Chunk>, Vec<String>)>,
        graphs: Vec<Option<FileGraph>>,
        /// The last message's statement text: chunk rows, graph rows, node rows, edge rows.
        pub parts: [usize; 4],
        /// The most chunk and graph JSON a group of the last message held.
        pub held: usize,
    }

    impl Message {
        /// A file of the message (its path, its content).
        pub fn add(&mut self, path: String, text: String) {
            self.files.push((path, text));
        }

        /// The message chunked as the stage does it: each file's chunks and graph kept until
        /// the files kept since the last write hold `group_bytes` of chunk and graph JSON (0:
        /// the whole message), then their statements' text built and everything dropped. Returns
        /// the chunks; [`Message::parts`] sums the statements' text, [`Message::held`] is the
        /// most JSON a group held.
        pub fn run(&mut self, group_bytes: usize) -> usize {
            let config = ChunkConfig::default();
            let files = std::mem::take(&mut self.files);
            self.parts = [0; 4];
            self.held = 0;
            let (mut first, mut bytes, mut chunks_total) = (0, 0, 0);
            for (i, (path, text)) in files.iter().enumerate() {
                let (chunks, graph) = chunk_with_graph(path, text, &config);
                let json: Vec<String> = chunks
                    .iter()
                    .map(|c| {
                        serde_json::to_value(c).and_then(|v| serde_json::to_string(&v)).unwrap_or_default()
                    })
                    .collect();
                bytes += json.iter().map(String::len).sum::<usize>() + graph.as_ref().map_or(0, json_len);
                chunks_total += chunks.len();
                self.per_file.push((chunks, json));
                self.graphs.push(graph);
                if group_bytes > 0 && bytes >= group_bytes {
                    self.held = self.held.max(bytes);
                    self.write(&files[first..=i]);
                    (first, bytes) = (i + 1, 0);
                }
            }
            self.held = self.held.max(bytes);
            self.write(&files[first..]);
            chunks_total
        }

        /// The statements' text of the files kept built, then dropped.
        fn write(&mut self, files: &[(String, String)]) {
            if files.is_empty() {
                return;
            }
            let per_file = std::mem::take(&mut self.per_file);
            let graphs = std::mem::take(&mut self.graphs);
            let mut graph_bytes = 0;
            // staging::chunked_statements
            let rows = per_file.iter().enumerate().flat_map(|(seq, (chunks, json))| {
                chunks
                    .iter()
                    .zip(json)
                    .map(move |(c, j)| serde_json::json!([seq, c.chunk_index, j, c.text_hash]))
            });
            self.parts[0] += json_batches(rows, JSON_BATCH_BYTES).iter().map(String::len).sum::<usize>();
            // graph::replace_files_statements
            let mut kept: Vec<&FileGraph> = Vec::new();
            let mut stored = Vec::new();
            for ((path, _), graph) in
                files.iter().zip(&graphs).filter_map(|(f, g)| g.as_ref().map(|g| (f, g)))
            {
                let json = serde_json::to_string(graph).unwrap_or_default();
                if json.len() > MAX_FILE_GRAPH_BYTES {
                    continue;
                }
                kept.push(graph);
                let row = serde_json::json!([path, json]);
                if serde_json::to_string(&row).map_or(usize::MAX, |r| r.len()) > JSON_BATCH_BYTES {
                    graph_bytes += json.len();
                } else {
                    stored.push(row);
                }
            }
            graph_bytes += json_batches(stored, JSON_BATCH_BYTES).iter().map(String::len).sum::<usize>();
            self.parts[1] += graph_bytes;
            let nodes: Vec<edgerag_core::graph::Node> =
                kept.iter().flat_map(|g| g.nodes.iter().cloned()).collect();
            let nodes_bytes =
                json_batches(nodes.iter(), JSON_BATCH_BYTES).iter().map(String::len).sum::<usize>();
            self.parts[2] += nodes_bytes;
            let local: Vec<&edgerag_core::graph::Edge> =
                kept.iter().flat_map(|g| g.edges.iter().filter(|e| e.hint.is_none())).collect();
            let edges_bytes =
                json_batches(local.iter(), JSON_BATCH_BYTES).iter().map(String::len).sum::<usize>();
            self.parts[3] += edges_bytes;
        }
    }
}
