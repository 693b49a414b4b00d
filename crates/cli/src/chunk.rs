//! `edgerag chunk PATH...`: chunk files with the same core the worker and the preview use, and
//! print the chunks. Skipped files go to stderr with a stable reason code; only usage errors exit
//! non-zero.
//!
//! Files are chunked on every core (a rayon pool) while the main thread walks, reads and writes;
//! outputs are written in walk order, so the output is the same for any number of threads.
use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use clap::ValueEnum;
use edgerag_core::chunk::Preset;
use edgerag_core::{chunk_text, Chunk, ChunkConfig, Language};

use crate::walk::{walk, Entry};
use crate::{Failure, Outcome};

const EXAMPLES: &str = "\
EXAMPLES:
    edgerag chunk src --format table
    edgerag chunk . --preset compact --stats > chunks.jsonl
    edgerag chunk README.md --json | jq '.[].metadata.headingPath'";

/// Cut files and directories into chunks and print them (JSONL, JSON or a table).
///
/// The same chunker as the server and the browser preview: tree-sitter for code (functions,
/// classes, methods with their docs), headings for Markdown, lines for everything else; every
/// chunk carries its id, line and byte span, token count and keywords.
///
/// Directories are walked in sorted order, skipping .git, .github, node_modules, dist, build and
/// whatever .gitignore / .mcpignore files exclude. Binary, non-UTF-8 and oversize (> 1 MiB)
/// files are skipped with a reason code on stderr; a file named explicitly is chunked even when
/// an ignore pattern matches it. Files are chunked in parallel; the output order is the walk
/// order whatever the thread count.
#[derive(Debug, clap::Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::LONG_FOOTER))]
pub struct Args {
    /// Files and directories to chunk.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<String>,
    /// Output format: one chunk per line with every field, a JSON array, or a table.
    #[arg(long, value_enum, default_value_t = Format::Jsonl, help_heading = "Output")]
    format: Format,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format", help_heading = "Output")]
    json: bool,
    /// Print totals (files, chunks, MB/s, by type, by language, skips) to stderr when done.
    #[arg(long, help_heading = "Output")]
    stats: bool,
    /// Base limits: default (100 lines, 2000 tokens, overlap 3) or compact (150 lines, 500
    /// tokens ≈ 2 KB). The options below override single limits.
    #[arg(long, value_name = "NAME", default_value = "default", value_parser = parse_preset, help_heading = "Chunking")]
    preset: Preset,
    /// Largest chunk in tokens (tokens ≈ chars / 4).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Chunking")]
    max_tokens: Option<u64>,
    /// Largest chunk in lines.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Chunking")]
    max_lines: Option<u64>,
    /// Lines repeated from the previous chunk when a long unit is split.
    #[arg(long, value_name = "N", help_heading = "Chunking")]
    overlap: Option<usize>,
    /// Deepest Markdown heading level that starts a chunk [default: 2].
    #[arg(long, value_name = "N", help_heading = "Chunking")]
    split_depth: Option<u8>,
    /// Force a language instead of detecting it from the path (names or aliases: rust, ts, py, md, ...).
    #[arg(long, value_name = "NAME", value_parser = parse_language, help_heading = "Chunking")]
    language: Option<Language>,
    /// Also give each code chunk the id of the graph node holding it (`metadata.symbolId`), as
    /// repository indexing stores it; extracts the code graph too, so it is slower.
    #[arg(long, help_heading = "Chunking")]
    symbol_ids: bool,
    /// Cut prose into parents (natural blocks of 150–1500 chars, never across a chapter) and
    /// children (sentences grouped at semantic cliffs, at most 400 chars) instead: JSONL with
    /// `level` parent/child, `parentId`, `order`, char and line spans. Markdown is read as
    /// Markdown, every other file as plain text.
    #[arg(long, help_heading = "Parent/child")]
    parent_child: bool,
    /// Sentence embedder for --parent-child: `hash` (deterministic, not semantic) or the base URL
    /// of an OpenAI-compatible embeddings server (key from EMBED_API_KEY).
    #[arg(long, value_name = "URL|hash", default_value = "hash", requires = "parent_child", help_heading = "Parent/child")]
    embedder: String,
    /// Model name sent to the --embedder URL.
    #[arg(long, value_name = "NAME", default_value = "all-MiniLM-L6-v2", requires = "parent_child", help_heading = "Parent/child")]
    embed_model: String,
    /// Dimensions of the --embedder URL's vectors.
    #[arg(long, value_name = "N", default_value_t = 384, requires = "parent_child", help_heading = "Parent/child")]
    embed_dims: usize,
    /// Worker threads [default: one per core].
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    threads: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Jsonl,
    Json,
    Table,
}

fn parse_preset(name: &str) -> Result<Preset, String> {
    Preset::from_name(name).ok_or_else(|| format!("unknown preset {name:?} (default, compact)"))
}

fn parse_language(name: &str) -> Result<Language, String> {
    Language::from_name(name).ok_or_else(|| format!("unknown language {name:?}"))
}

impl Args {
    fn config(&self) -> ChunkConfig {
        let mut config = self.preset.config();
        let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        config.max_tokens = self.max_tokens.map(to_usize).unwrap_or(config.max_tokens);
        config.max_lines = self.max_lines.map(to_usize).unwrap_or(config.max_lines);
        config.overlap_lines = self.overlap.unwrap_or(config.overlap_lines);
        config.markdown_split_depth = self.split_depth.unwrap_or(config.markdown_split_depth);
        config.language = self.language.or(config.language);
        config
    }

    fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else {
            self.format
        }
    }

    pub fn run(self) -> Outcome {
        if self.parent_child {
            if self.format() != Format::Jsonl {
                return Err(Failure::Usage("--parent-child prints JSONL only".into()));
            }
            let choice = crate::parent_child::EmbedderChoice::parse(&self.embedder, &self.embed_model, self.embed_dims)
                .map_err(Failure::Usage)?;
            let config = edgerag_core::chunk::parent_child::ParentChildConfig::default();
            return crate::parent_child::run(&self.paths, choice, &config, self.config().max_file_bytes);
        }
        let mut pool = rayon::ThreadPoolBuilder::new();
        if let Some(n) = self.threads {
            pool = pool.num_threads(usize::try_from(n).unwrap_or(1));
        }
        let pool = pool.build().map_err(|e| Failure::Failed(format!("cannot start threads: {e}")))?;
        let started = Instant::now();
        let config = Arc::new(self.config());
        let mut writer = Writer::new(self.format());
        let job = Job { format: self.format(), symbol_ids: self.symbol_ids };
        // This thread walks, reads and writes while the pool chunks: reading, chunking and
        // writing overlap, and each file's output is written (and its memory reused) as soon as
        // every file before it is done.
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        let mut ahead = Ahead::default();
        walk(&self.paths, config.max_file_bytes, &mut |entry| {
            if writer.result.is_err() {
                return;
            }
            match entry {
                Entry::Skipped { path, code, message } => {
                    eprintln!("edgerag chunk: skipped {path}: {code}: {message}");
                    *writer.stats.skipped.entry(code).or_default() += 1;
                }
                Entry::File { path, text } => {
                    while ahead.is_full() {
                        let Ok(done) = done_rx.recv() else { break };
                        ahead.finished(done, &mut writer);
                    }
                    let bytes = text.len();
                    let index = ahead.started(bytes);
                    let (config, done_tx) = (Arc::clone(&config), done_tx.clone());
                    pool.spawn(move || {
                        let output = job.run(&path, &text, &config);
                        // The receiver is gone only when writing failed; nothing is lost then.
                        let _ = done_tx.send(Done { index, bytes, output });
                    });
                    while let Ok(done) = done_rx.try_recv() {
                        ahead.finished(done, &mut writer);
                    }
                }
            }
        });
        while ahead.pending() && writer.result.is_ok() {
            let Ok(done) = done_rx.recv() else { break };
            ahead.finished(done, &mut writer);
        }
        if let Err(e) = writer.finish() {
            // A closed pipe (`| head`) is a normal way to stop reading.
            if e.kind() != io::ErrorKind::BrokenPipe {
                return Err(Failure::Failed(format!("cannot write output: {e}")));
            }
            return Ok(());
        }
        if self.stats {
            print_stats(&writer.stats, started.elapsed().as_secs_f64());
        }
        Ok(())
    }
}

/// Input read ahead of the output: enough to keep every core busy past a large file, small
/// enough that a large tree is never held in memory at once.
const AHEAD_FILES: usize = 256;
const AHEAD_BYTES: usize = 8 << 20;

/// What every file is turned into (the same for all files of a run).
#[derive(Clone, Copy)]
struct Job {
    format: Format,
    /// Chunk through the code graph (`--symbol-ids`).
    symbol_ids: bool,
}

impl Job {
    fn run(self, path: &str, text: &str, config: &ChunkConfig) -> io::Result<Rendered> {
        let chunks = if self.symbol_ids {
            edgerag_core::graph::chunk_with_graph(path, text, config).0
        } else {
            chunk_text(path, text, config)
        };
        let mut output = Vec::with_capacity(text.len() * 2);
        render(&mut output, self.format, &chunks)?;
        Ok(Rendered {
            bytes: text.len(),
            output,
            chunks: chunks.iter().map(|c| (c.chunk_type.as_str(), c.language.as_str())).collect(),
        })
    }
}

/// A file chunked on the pool: its position in the walk and its input size.
struct Done {
    index: usize,
    bytes: usize,
    output: io::Result<Rendered>,
}

/// Files sent to the pool and not yet written; finished ones wait here for those before them.
#[derive(Default)]
struct Ahead {
    started: usize,
    written: usize,
    bytes: usize,
    waiting: BTreeMap<usize, Done>,
}

impl Ahead {
    fn is_full(&self) -> bool {
        self.started - self.written >= AHEAD_FILES || self.bytes >= AHEAD_BYTES
    }

    fn pending(&self) -> bool {
        self.written < self.started
    }

    /// A file of `bytes` sent to the pool: its index in the walk.
    fn started(&mut self, bytes: usize) -> usize {
        self.started += 1;
        self.bytes += bytes;
        self.started - 1
    }

    /// Write `done` and whatever it was holding back, in walk order.
    fn finished(&mut self, done: Done, writer: &mut Writer) {
        self.waiting.insert(done.index, done);
        while let Some(done) = self.waiting.remove(&self.written) {
            self.written += 1;
            self.bytes -= done.bytes;
            if writer.result.is_ok() {
                writer.result = done.output.and_then(|file| writer.write_file(file));
            }
        }
    }
}

#[derive(Default)]
struct Stats {
    files: usize,
    bytes: usize,
    chunks: usize,
    by_type: BTreeMap<&'static str, usize>,
    by_language: BTreeMap<&'static str, usize>,
    skipped: BTreeMap<&'static str, usize>,
}

/// One file's rendered output and counts, computed on a worker thread.
struct Rendered {
    bytes: usize,
    output: Vec<u8>,
    chunks: Vec<(&'static str, &'static str)>,
}

struct Writer {
    format: Format,
    out: BufWriter<io::Stdout>,
    stats: Stats,
    wrote_chunk: bool,
    result: io::Result<()>,
}

impl Writer {
    fn new(format: Format) -> Writer {
        let mut out = BufWriter::with_capacity(1 << 16, io::stdout());
        let result = if format == Format::Json { out.write_all(b"[") } else { Ok(()) };
        Writer { format, out, stats: Stats::default(), wrote_chunk: false, result }
    }

    fn write_file(&mut self, file: Rendered) -> io::Result<()> {
        let stats = &mut self.stats;
        stats.files += 1;
        stats.bytes += file.bytes;
        stats.chunks += file.chunks.len();
        for (chunk_type, language) in &file.chunks {
            *stats.by_type.entry(chunk_type).or_default() += 1;
            *stats.by_language.entry(language).or_default() += 1;
        }
        if file.chunks.is_empty() {
            return Ok(());
        }
        let mut output = &file.output[..];
        if !self.wrote_chunk {
            match self.format {
                // Every JSON element is rendered as `,\n{...}`; the first one has no comma.
                Format::Json => output = &output[1..],
                Format::Table => writeln!(
                    self.out,
                    "{:<48} {:<17} {:>6} {:>3}  SYMBOL / HEADINGS",
                    "LOCATION", "TYPE", "TOKENS", "OVL"
                )?,
                Format::Jsonl => {}
            }
            self.wrote_chunk = true;
        }
        self.out.write_all(output)
    }

    fn finish(&mut self) -> io::Result<()> {
        std::mem::replace(&mut self.result, Ok(()))?;
        if self.format == Format::Json {
            self.out.write_all(if self.wrote_chunk { b"\n]\n" } else { b"]\n" })?;
        }
        self.out.flush()
    }
}

fn render(out: &mut Vec<u8>, format: Format, chunks: &[Chunk]) -> io::Result<()> {
    for c in chunks {
        match format {
            Format::Jsonl => {
                serde_json::to_writer(&mut *out, c)?;
                out.push(b'\n');
            }
            Format::Json => {
                out.extend_from_slice(b",\n");
                serde_json::to_writer(&mut *out, c)?;
            }
            Format::Table => {
                let location = format!("{}:{}-{}", c.path, c.start_line, c.end_line);
                let label = match (&c.metadata.symbol_name, &c.metadata.parent_symbol) {
                    (Some(s), Some(p)) => format!("{p}.{s}"),
                    (Some(_), None) if c.metadata.heading_path.len() > 1 => c.metadata.heading_path.join(" > "),
                    (Some(s), None) => s.clone(),
                    (None, _) => String::new(),
                };
                writeln!(
                    out,
                    "{location:<48} {:<17} {:>6} {:>3}  {label}",
                    c.chunk_type.as_str(),
                    c.token_count,
                    c.metadata.overlap_lines
                )?;
            }
        }
    }
    Ok(())
}

fn print_stats(stats: &Stats, seconds: f64) {
    let mb = stats.bytes as f64 / 1e6;
    eprintln!(
        "edgerag chunk: {} files, {} chunks, {:.2} MB in {:.3} s ({:.1} MB/s)",
        stats.files,
        stats.chunks,
        mb,
        seconds,
        if seconds > 0.0 { mb / seconds } else { 0.0 }
    );
    let join = |m: &BTreeMap<&str, usize>| m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
    if !stats.by_type.is_empty() {
        eprintln!("  by type: {}", join(&stats.by_type));
        eprintln!("  by language: {}", join(&stats.by_language));
    }
    if !stats.skipped.is_empty() {
        eprintln!("  skipped: {}", join(&stats.skipped));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use clap::error::ErrorKind;
    use clap::Parser;

    use super::*;
    use crate::{Cli, Command};

    fn parse(args: &str) -> Result<Args, clap::Error> {
        let cli = Cli::try_parse_from(["edgerag", "chunk"].into_iter().chain(args.split_whitespace()))?;
        match cli.command {
            Command::Chunk(a) => Ok(a),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options_override_the_preset() {
        let o = parse("a b --preset compact --max-lines 20 --overlap=0 --format table --stats").unwrap();
        assert_eq!(o.paths, ["a", "b"]);
        let c = o.config();
        assert_eq!((c.max_lines, c.max_tokens, c.overlap_lines), (20, 500, 0));
        assert_eq!(o.format(), Format::Table);
        assert!(o.stats);
        assert_eq!(parse("a --json").unwrap().format(), Format::Json);
        assert_eq!(parse("a --language ts").unwrap().config().language, Some(Language::Typescript));
    }

    #[test]
    fn usage_errors_name_the_problem() {
        for (bad, kind) in [
            ("", ErrorKind::MissingRequiredArgument),
            ("a --format xml", ErrorKind::InvalidValue),
            ("a --max-lines x", ErrorKind::ValueValidation),
            ("a --max-tokens 0", ErrorKind::ValueValidation),
            ("a --preset huge", ErrorKind::ValueValidation),
            ("a --language klingon", ErrorKind::ValueValidation),
            ("a --bogus", ErrorKind::UnknownArgument),
            ("a --overlap", ErrorKind::InvalidValue),
            ("a --json --format table", ErrorKind::ArgumentConflict),
        ] {
            assert_eq!(parse(bad).map(|_| ()).unwrap_err().kind(), kind, "{bad:?}");
        }
    }
}
