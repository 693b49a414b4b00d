//! `repo.grep` (`POST /v1/repos/{owner}/{name}/grep`): lines of the indexed files matching a
//! literal string or a regular expression, in path and line order, over the files' text exactly
//! as indexed (rebuilt from their chunks, like `repo.read_file_range`).
//!
//! 1. The pattern compiles with Rust's `regex` (linear time: no backtracking to blow up) under
//!    size limits; a pattern that does not compile, or is too large, is `400 INVALID_PATTERN`.
//! 2. When every match must contain a literal of 3+ characters ([`required_literals`]), the
//!    store names the files that contain one ([`RepoStore::paths_containing`]: in D1 the trigram
//!    index of the chunks' text, `chunk_trigrams`, migration 0100, written by triggers as chunks
//!    are written); only those are read. Otherwise
//!    every file passing the path and language filters is read, a group at a time.
//! 3. Files are read in path order until `limit` matching lines are found (one more is looked
//!    for, so `limitReached` is exact) or [`MAX_SCAN_BYTES`] of text was read; `nextCursor`
//!    continues after the last line returned. The answer then fits `maxTokens`.
use std::collections::{BTreeMap, HashSet};

use regex::{Regex, RegexBuilder};
use regex_syntax::hir::{Hir, HirKind};

use super::store::{FileFilter, RepoStore, ToolError, ToolResult};
use super::{answer_tokens, largest_fitting, GrepMatch, GrepRequest, GrepResponse};

const DEFAULT_MATCHES: u32 = 100;
const MAX_MATCHES: u32 = 1_000;
const MAX_CONTEXT: u32 = 10;
/// Longest pattern accepted, in bytes.
const MAX_PATTERN_BYTES: usize = 1_000;
/// Size limits of the compiled pattern and of its lazy DFA's cache.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
const DFA_SIZE_LIMIT: usize = 2 << 20;
/// A returned line longer than this many characters is cut (ending with `…`).
const MAX_LINE_CHARS: usize = 1_000;
/// Files read per store call.
const FILES_PER_QUERY: usize = 40;
/// Text read by one request at most; a search that needs more stops with a cursor.
pub const MAX_SCAN_BYTES: usize = 32 << 20;
/// Literals of one pattern looked up in the index at most (`a|b|c…`).
const MAX_LITERALS: usize = 16;

/// A checked pattern: the line matcher and the literals every match contains one of.
pub struct Pattern {
    pub regex: Regex,
    pub literals: Option<Vec<String>>,
}

fn invalid_pattern(message: impl Into<String>) -> ToolError {
    ToolError::bad_request("INVALID_PATTERN", message)
}

/// Compile `pattern` (a literal unless `regex`) for matching single lines.
pub fn compile(pattern: &str, regex: bool, case_sensitive: bool) -> ToolResult<Pattern> {
    if pattern.is_empty() {
        return Err(invalid_pattern("give a non-empty pattern"));
    }
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(invalid_pattern(format!("a pattern is at most {MAX_PATTERN_BYTES} bytes")));
    }
    let source = if regex { pattern.to_string() } else { regex::escape(pattern) };
    let compiled = RegexBuilder::new(&source)
        .case_insensitive(!case_sensitive)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .nest_limit(100)
        .build()
        .map_err(|e| invalid_pattern(format!("{pattern:?} is not a valid pattern: {e}")))?;
    let literals = if regex {
        required_literals(pattern)
    } else {
        (pattern.chars().count() >= 3 && !pattern.contains('\n')).then(|| vec![pattern.to_string()])
    };
    Ok(Pattern { regex: compiled, literals })
}

/// Strings of 3+ characters one of which every match of `pattern` contains, when there are such
/// (the index cannot help otherwise). Case is ignored by the index, so the case-sensitive parse
/// serves both modes.
pub fn required_literals(pattern: &str) -> Option<Vec<String>> {
    regex_syntax::ParserBuilder::new().build().parse(pattern).ok().and_then(|h| required(&h))
}

fn literal_text(h: &Hir) -> Option<&str> {
    match h.kind() {
        HirKind::Literal(l) => std::str::from_utf8(&l.0).ok(),
        _ => None,
    }
}

/// Of two alternatives for the required set, the one whose shortest string is longest (fewer
/// false candidates).
fn better(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
    let shortest = |v: &Vec<String>| v.iter().map(|s| s.chars().count()).min().unwrap_or(0);
    match (a, b) {
        (Some(a), Some(b)) => Some(if shortest(&b) > shortest(&a) { b } else { a }),
        (a, b) => a.or(b),
    }
}

fn required(h: &Hir) -> Option<Vec<String>> {
    let long = |s: &str| (s.chars().count() >= 3).then(|| vec![s.to_string()]);
    match h.kind() {
        HirKind::Literal(_) => literal_text(h).and_then(long),
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub),
        HirKind::Concat(items) => {
            let mut best = None;
            let mut run = String::new();
            for item in items {
                match literal_text(item) {
                    Some(text) => run.push_str(text),
                    None => {
                        best = better(best, long(&run));
                        run.clear();
                        best = better(best, required(item));
                    }
                }
            }
            better(best, long(&run))
        }
        HirKind::Alternation(alts) => {
            let mut all = Vec::new();
            for alt in alts {
                all.extend(required(alt)?);
            }
            all.sort();
            all.dedup();
            (all.len() <= MAX_LITERALS).then_some(all)
        }
        _ => None,
    }
}

/// `"{line}:{path}"`: continue after line `line` of `path` (a whole file: `u32::MAX`).
fn cursor(path: &str, line: u32) -> String {
    format!("{line}:{path}")
}

fn parse_cursor(cursor: &str) -> ToolResult<(String, u32)> {
    let bad = || ToolError::invalid("cursor is not one this tool returned");
    let (line, path) = cursor.split_once(':').ok_or_else(bad)?;
    let line: u32 = line.parse().map_err(|_| bad())?;
    if path.is_empty() {
        return Err(bad());
    }
    Ok((path.to_string(), line))
}

/// The lines of a file (index 0 is line 1) from its chunks ordered by start line: chunks may
/// overlap and a chunk cut inside a line holds only part of it, so each line is taken from the
/// chunk holding the most of it; a line no chunk covers is blank.
pub fn file_lines<'a>(chunks: impl IntoIterator<Item = (i64, &'a str)>) -> Vec<&'a str> {
    let mut lines: BTreeMap<usize, &str> = BTreeMap::new();
    for (start, text) in chunks {
        for (i, line) in text.split('\n').enumerate() {
            let n = start + i as i64;
            if n < 1 {
                continue;
            }
            let slot = lines.entry(n as usize).or_insert(line);
            if line.len() > slot.len() {
                *slot = line;
            }
        }
    }
    let last = lines.keys().next_back().copied().unwrap_or(0);
    (1..=last).map(|n| lines.get(&n).copied().unwrap_or("")).collect()
}

fn cut(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

/// Matching lines of one file after line `after`, at most `room` of them.
pub fn matches_in(
    path: &str,
    lines: &[&str],
    regex: &Regex,
    context: usize,
    after: u32,
    room: usize,
) -> Vec<GrepMatch> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(after as usize) {
        if out.len() == room {
            break;
        }
        if regex.is_match(line) {
            let from = i.saturating_sub(context);
            let to = (i + 1 + context).min(lines.len());
            out.push(GrepMatch {
                path: path.to_string(),
                line: i as u32 + 1,
                text: cut(line),
                before: lines[from..i].iter().map(|l| cut(l)).collect(),
                after: lines[i + 1..to].iter().map(|l| cut(l)).collect(),
            });
        }
    }
    out
}

pub async fn grep(store: &dyn RepoStore, ns: &str, req: &GrepRequest) -> ToolResult<GrepResponse> {
    let max_tokens = super::budget(req.max_tokens)?;
    let limit = super::page_size(req.limit, DEFAULT_MATCHES, MAX_MATCHES)? as usize;
    let context = req.context.unwrap_or(0);
    if context > MAX_CONTEXT {
        return Err(ToolError::invalid(format!("context must be 0..={MAX_CONTEXT}")));
    }
    let pattern = compile(&req.pattern, req.regex, req.case_sensitive.unwrap_or(true))?;
    let globs = super::globs(&req.paths)?;
    let languages: HashSet<String> = req.languages.iter().map(|l| l.trim().to_ascii_lowercase()).collect();
    let start = req.cursor.as_deref().map(parse_cursor).transpose()?;
    let from = start.as_ref().map(|(p, _)| p.as_str()).unwrap_or("");
    let mut files = store.files(ns, &FileFilter { from, ..Default::default() }).await?;
    files.retain(|f| globs.is_match(&f.path) && (languages.is_empty() || languages.contains(&f.language)));
    let used_index = pattern.literals.is_some();
    if let Some(literals) = &pattern.literals {
        let hits: HashSet<String> = store.paths_containing(ns, literals).await?.into_iter().collect();
        files.retain(|f| hits.contains(&f.path));
    }
    let mut found: Vec<GrepMatch> = Vec::new();
    let mut scanned = 0usize;
    let mut bytes = 0usize;
    let mut stopped_after: Option<String> = None; // the last file read when the scan budget ran out
    'groups: for (g, group) in files.chunks(FILES_PER_QUERY).enumerate() {
        let paths: Vec<String> = group.iter().map(|f| f.path.clone()).collect();
        let rows = store.chunk_texts(ns, &paths).await?;
        bytes += rows.iter().map(|r| r.text.len()).sum::<usize>();
        for f in group {
            let lines = file_lines(
                rows.iter().filter(|r| r.path == f.path).map(|r| (i64::from(r.start_line), r.text.as_str())),
            );
            let after = match &start {
                Some((p, line)) if *p == f.path => *line,
                _ => 0,
            };
            scanned += 1;
            found.extend(matches_in(
                &f.path,
                &lines,
                &pattern.regex,
                context as usize,
                after,
                limit + 1 - found.len(),
            ));
            if found.len() > limit {
                break 'groups;
            }
        }
        if bytes >= MAX_SCAN_BYTES && (g + 1) * FILES_PER_QUERY < files.len() {
            stopped_after = group.last().map(|f| f.path.clone());
            break;
        }
    }
    let limit_reached = found.len() > limit;
    found.truncate(limit);
    let next = if limit_reached {
        found.last().map(|m| cursor(&m.path, m.line))
    } else {
        stopped_after.map(|p| cursor(&p, u32::MAX))
    };
    Ok(fit(found, scanned as u32, used_index, limit_reached, next, max_tokens))
}

/// The answer within `max_tokens`: the first matches that fit (the cursor then continues after
/// the last one kept); when not even one fits, the first with its context dropped and its line
/// cut to fit.
fn fit(
    found: Vec<GrepMatch>,
    files_scanned: u32,
    used_index: bool,
    limit_reached: bool,
    next: Option<String>,
    max_tokens: u32,
) -> GrepResponse {
    let build = |matches: Vec<GrepMatch>, truncated: bool| {
        let next_cursor =
            if truncated { matches.last().map(|m| cursor(&m.path, m.line)) } else { next.clone() };
        GrepResponse { matches, files_scanned, used_index, limit_reached, next_cursor, truncated }
    };
    let k = largest_fitting(found.len(), max_tokens, |k| build(found[..k].to_vec(), true));
    if k == found.len() {
        return build(found, false);
    }
    if k > 0 {
        return build(found[..k].to_vec(), true);
    }
    let mut first = found[0].clone();
    first.before.clear();
    first.after.clear();
    let chars: Vec<char> = first.text.chars().collect();
    let with = |n: usize| {
        let mut m = first.clone();
        m.text = chars[..n].iter().collect::<String>() + "…";
        build(vec![m], true)
    };
    let n = largest_fitting(chars.len(), max_tokens, with);
    let answer = with(n);
    if answer_tokens(&answer) <= max_tokens as usize {
        answer
    } else {
        build(Vec::new(), true)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn lits(p: &str) -> Option<Vec<String>> {
        required_literals(p)
    }

    #[test]
    fn a_pattern_that_does_not_compile_or_is_too_large_is_invalid_pattern() {
        for (p, regex) in [("fn (", true), ("a{1000}{1000}", true), ("", false)] {
            let err = compile(p, regex, true).err().unwrap();
            assert_eq!((err.status(), err.code()), (400, "INVALID_PATTERN"), "{p}");
        }
        let long = "x".repeat(1_001);
        assert_eq!(compile(&long, false, true).err().unwrap().code(), "INVALID_PATTERN");
        // A literal is matched as written, metacharacters included.
        let p = compile("a.b(", false, true).unwrap();
        assert!(p.regex.is_match("x a.b( y") && !p.regex.is_match("axb("));
        assert!(compile("SLUG", false, false).unwrap().regex.is_match("slugify"));
        assert!(!compile("SLUG", false, true).unwrap().regex.is_match("slugify"));
    }

    #[test]
    fn nested_repetition_runs_in_linear_time() {
        // The classic catastrophic-backtracking pattern, on a line built to make it backtrack.
        let p = compile("(a+)+$", true, true).unwrap();
        let line = "a".repeat(5_000) + "!";
        let started = std::time::Instant::now();
        assert!(!p.regex.is_match(&line));
        assert!(started.elapsed().as_millis() < 500);
    }

    #[test]
    fn required_literals_are_what_every_match_contains() {
        assert_eq!(lits("fn slugify"), Some(vec!["fn slugify".to_string()]));
        assert_eq!(lits(r"def \w+_user\("), Some(vec!["_user(".to_string()]));
        assert_eq!(lits("foo(bar|baz)quux"), Some(vec!["quux".to_string()]));
        assert_eq!(lits("(?:error|warning): "), Some(vec!["error".to_string(), "warning".to_string()]));
        assert_eq!(lits(r"\w+"), None);
        assert_eq!(lits("ab|cde"), None); // one branch has no 3-character literal
        assert_eq!(lits("x*abc"), Some(vec!["abc".to_string()]));
        assert_eq!(lits("(abc)?def"), Some(vec!["def".to_string()]));
        assert_eq!(lits("(abcd)+"), Some(vec!["abcd".to_string()]));
        assert_eq!(compile("ab", false, true).unwrap().literals, None);
    }

    #[test]
    fn lines_come_from_overlapping_chunks_and_cut_lines_take_the_longest_piece() {
        let lines = file_lines([(1, "a\nb\nc"), (3, "c\nd"), (6, "f")]);
        assert_eq!(lines, ["a", "b", "c", "d", "", "f"]);
        let lines = file_lines([(1, "long li"), (1, "long line"), (2, "x")]);
        assert_eq!(lines, ["long line", "x"]);
    }

    #[test]
    fn matches_carry_context_and_continue_after_a_line() {
        let lines = ["one", "two fn", "three", "four fn", "five"];
        let re = Regex::new("fn").unwrap();
        let m = matches_in("a.rs", &lines, &re, 1, 0, 10);
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].line, m[0].before.clone(), m[0].after.clone()),
            (2, vec!["one".into()], vec!["three".into()])
        );
        let rest = matches_in("a.rs", &lines, &re, 0, 2, 10);
        assert_eq!(rest.iter().map(|m| m.line).collect::<Vec<_>>(), [4]);
        assert_eq!(matches_in("a.rs", &lines, &re, 0, 0, 1).len(), 1);
        let long = "y".repeat(1_500);
        assert!(cut(&long).ends_with('…') && cut(&long).chars().count() == MAX_LINE_CHARS + 1);
    }

    #[test]
    fn cursors_round_trip_and_bad_ones_are_refused() {
        assert_eq!(parse_cursor(&cursor("src/a:b.rs", 7)).unwrap(), ("src/a:b.rs".to_string(), 7));
        for bad in ["", "x:src", "7:", "src"] {
            assert_eq!(parse_cursor(bad).unwrap_err().code(), "INVALID_REQUEST", "{bad}");
        }
    }

    #[test]
    fn an_answer_never_exceeds_max_tokens_and_always_makes_progress() {
        let m = |line: u32, text: &str| GrepMatch {
            path: "src/a.rs".into(),
            line,
            text: text.into(),
            before: vec!["ctx".into()],
            after: vec![],
        };
        let found: Vec<GrepMatch> = (1..=200).map(|i| m(i, "let value = compute(value);")).collect();
        let a = fit(found.clone(), 1, true, false, None, 300);
        assert!(a.truncated && answer_tokens(&a) <= 300);
        assert_eq!(a.next_cursor, Some(cursor("src/a.rs", a.matches.last().unwrap().line)));
        let whole = fit(found[..2].to_vec(), 1, true, false, None, 8_000);
        assert!(!whole.truncated && whole.next_cursor.is_none());
        let huge = fit(vec![m(3, &"z".repeat(5_000))], 1, false, false, None, 100);
        assert_eq!(huge.matches.len(), 1);
        assert!(huge.matches[0].before.is_empty());
        assert!(answer_tokens(&huge) <= 100);
        assert_eq!(huge.next_cursor, Some(cursor("src/a.rs", 3)));
    }
}
