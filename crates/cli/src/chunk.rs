//! `edgerag chunk <file|dir>... [--format jsonl|json|table] [--max-tokens N] [--max-lines N]
//! [--overlap N] [--preset NAME] [--stats]`: chunk files with the same core the worker and the
//! preview use, and print the chunks. Skipped files go to stderr with a stable reason code; only
//! usage errors exit non-zero.
use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Instant;

use edgerag_core::chunk::Preset;
use edgerag_core::{chunk_text, Chunk, ChunkConfig, Language};

use crate::args::{Arg, Args};
use crate::walk::{walk, Entry};
use crate::USAGE_ERROR;

const HELP: &str = "usage: edgerag chunk <file|dir>... [options]

Cut files into chunks. Directories are walked (sorted), skipping .git, .github, node_modules,
dist, build, and whatever .gitignore / .mcpignore files exclude; binary, non-UTF-8 and oversize
(> 1 MiB) files are skipped with a reason on stderr.

options:
  --format jsonl|json|table   output format (default jsonl: one chunk per line, every field)
  --preset NAME               base limits: default (seed 001: 100 lines, 2000 tokens, overlap 3)
                              or compact (seed 003: 150 lines, 500 tokens ≈ 2 KB)
  --max-tokens N              maxTokensPerChunk (tokens ≈ chars / 4)
  --max-lines N               maxLinesPerChunk
  --overlap N                 overlapLines
  --split-depth N             deepest Markdown heading level that starts a chunk (default 2)
  --language NAME             force a language instead of detecting it from the path
  --stats                     print totals to stderr when done
  -h, --help                  this help
";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Jsonl,
    Json,
    Table,
}

struct Options {
    paths: Vec<String>,
    format: Format,
    config: ChunkConfig,
    stats: bool,
}

/// Parse the arguments; `Err(None)` means help was printed.
fn parse(argv: Vec<String>) -> Result<Options, Option<String>> {
    let mut args = Args::new(argv);
    let mut paths = Vec::new();
    let mut format = Format::Jsonl;
    let mut preset = Preset::Default;
    let (mut max_tokens, mut max_lines, mut overlap, mut depth, mut language) =
        (None, None, None, None, None);
    let mut stats = false;
    while let Some(arg) = args.next() {
        match arg {
            Arg::Positional(p) => paths.push(p),
            Arg::Flag { name, inline } => match name.as_str() {
                "-h" | "--help" => {
                    print!("{HELP}");
                    return Err(None);
                }
                "--format" => {
                    format = match args.value(&name, inline)?.as_str() {
                        "jsonl" => Format::Jsonl,
                        "json" => Format::Json,
                        "table" => Format::Table,
                        other => {
                            return Err(Some(format!(
                                "--format: unknown format {other:?} (jsonl, json, table)"
                            )))
                        }
                    }
                }
                "--preset" => {
                    let name = args.value("--preset", inline)?;
                    preset = Preset::from_name(&name)
                        .ok_or_else(|| format!("--preset: unknown preset {name:?} (default, compact)"))?;
                }
                "--max-tokens" => max_tokens = Some(positive(args.parsed(&name, inline)?, &name)?),
                "--max-lines" => max_lines = Some(positive(args.parsed(&name, inline)?, &name)?),
                "--overlap" => overlap = Some(args.parsed::<usize>(&name, inline)?),
                "--split-depth" => depth = Some(args.parsed::<u8>(&name, inline)?),
                "--language" => {
                    let name = args.value("--language", inline)?;
                    language = Some(
                        Language::from_name(&name)
                            .ok_or_else(|| format!("--language: unknown language {name:?}"))?,
                    );
                }
                "--stats" => stats = true,
                other => return Err(Some(format!("unknown option {other}"))),
            },
        }
    }
    if paths.is_empty() {
        return Err(Some("no file or directory given".into()));
    }
    let mut config = preset.config();
    config.max_tokens = max_tokens.unwrap_or(config.max_tokens);
    config.max_lines = max_lines.unwrap_or(config.max_lines);
    config.overlap_lines = overlap.unwrap_or(config.overlap_lines);
    config.markdown_split_depth = depth.unwrap_or(config.markdown_split_depth);
    config.language = language.or(config.language);
    Ok(Options { paths, format, config, stats })
}

fn positive(n: usize, flag: &str) -> Result<usize, String> {
    if n == 0 {
        return Err(format!("{flag} must be at least 1"));
    }
    Ok(n)
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

pub fn run(argv: Vec<String>) -> ExitCode {
    let options = match parse(argv) {
        Ok(options) => options,
        Err(None) => return ExitCode::SUCCESS,
        Err(Some(message)) => {
            eprintln!("edgerag chunk: {message}\n\n{HELP}");
            return ExitCode::from(USAGE_ERROR);
        }
    };
    let started = Instant::now();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut stats = Stats::default();
    let mut result: io::Result<()> = Ok(());
    let mut first = true;
    if options.format == Format::Json {
        result = out.write_all(b"[");
    }
    walk(&options.paths, options.config.max_file_bytes, &mut |entry| {
        if result.is_err() {
            return;
        }
        match entry {
            Entry::Skipped { path, code, message } => {
                eprintln!("edgerag chunk: skipped {path}: {code}: {message}");
                *stats.skipped.entry(code).or_default() += 1;
            }
            Entry::File { path, text } => {
                let chunks = chunk_text(&path, &text, &options.config);
                stats.files += 1;
                stats.bytes += text.len();
                stats.chunks += chunks.len();
                for c in &chunks {
                    *stats.by_type.entry(c.chunk_type.as_str()).or_default() += 1;
                    *stats.by_language.entry(c.language.as_str()).or_default() += 1;
                }
                result = print_chunks(&mut out, options.format, &chunks, &mut first);
            }
        }
    });
    if options.format == Format::Json && result.is_ok() {
        result = out.write_all(if first { b"]\n" } else { b"\n]\n" });
    }
    if result.is_ok() {
        result = out.flush();
    }
    if let Err(e) = result {
        // A closed pipe (`| head`) is a normal way to stop reading.
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("edgerag chunk: cannot write output: {e}");
        }
        return ExitCode::SUCCESS;
    }
    if options.stats {
        print_stats(&stats, started.elapsed().as_secs_f64());
    }
    ExitCode::SUCCESS
}

fn print_chunks(out: &mut impl Write, format: Format, chunks: &[Chunk], first: &mut bool) -> io::Result<()> {
    for c in chunks {
        match format {
            Format::Jsonl => {
                serde_json::to_writer(&mut *out, c)?;
                out.write_all(b"\n")?;
            }
            Format::Json => {
                out.write_all(if *first { b"\n" } else { b",\n" })?;
                serde_json::to_writer(&mut *out, c)?;
            }
            Format::Table => {
                if *first {
                    writeln!(
                        out,
                        "{:<48} {:<17} {:>6} {:>3}  SYMBOL / HEADINGS",
                        "LOCATION", "TYPE", "TOKENS", "OVL"
                    )?;
                }
                let location = format!("{}:{}-{}", c.path, c.start_line, c.end_line);
                let label = match (&c.metadata.symbol_name, &c.metadata.parent_symbol) {
                    (Some(s), Some(p)) => format!("{p}.{s}"),
                    (Some(s), None) if c.metadata.heading_path.len() > 1 => {
                        c.metadata.heading_path.join(" > ")
                    }
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
        *first = false;
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
    let join =
        |m: &BTreeMap<&str, usize>| m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
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
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_override_the_preset() {
        let o = parse(argv("a b --preset compact --max-lines 20 --overlap=0 --format table --stats"))
            .ok()
            .unwrap();
        assert_eq!(o.paths, ["a", "b"]);
        assert_eq!((o.config.max_lines, o.config.max_tokens, o.config.overlap_lines), (20, 500, 0));
        assert_eq!(o.format, Format::Table);
        assert!(o.stats);
    }

    #[test]
    fn usage_errors() {
        for bad in [
            "",
            "a --format xml",
            "a --max-lines x",
            "a --max-tokens 0",
            "a --preset huge",
            "a --bogus",
            "a --overlap",
        ] {
            assert!(matches!(parse(argv(bad)), Err(Some(_))), "{bad:?}");
        }
    }
}
