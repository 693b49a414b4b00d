//! More files for the same tokens: after an answer's matches, the best match of each further file
//! among the candidates the topK cut left out, shortened to its first lines (the definition's
//! signature and the start of its body). A question about *where* something lives — which file a
//! change belongs in — is served by a second and third plausible file far more than by a fourth
//! match of the first one, and a few lines per file are enough to tell them apart.
use std::collections::HashSet;

use crate::candidate::{Candidate, SnippetOverride};

/// The first `lines` lines of `c` as a match of its own (its score and place in the ranking kept).
fn shortened(c: &Candidate, lines: u32) -> Candidate {
    let (start, end) = c.lines();
    let text = c.text();
    if !c.text_is_its_lines() || end - start < lines {
        return c.clone();
    }
    let cut: Vec<&str> = text.split('\n').take(lines as usize).collect();
    let mut short = cut.join("\n");
    short.push('\n');
    let symbol = c.record.chunk.metadata.symbol_name.clone().unwrap_or_default();
    Candidate {
        snippet: Some(SnippetOverride {
            text: short,
            start_line: start,
            end_line: start + lines - 1,
            parent_symbol: symbol,
            parent_id: None,
            parent_chars: text.chars().count() as u32,
            raw_score: c.score,
            is_context_window: false,
        }),
        ..c.clone()
    }
}

/// `c` cut to its first lines within `max_tokens` (chars / 4), when it is larger and its text is
/// exactly its lines: one very large definition (a 400-line function holding a script template)
/// must not be the whole answer.
pub fn cut_to_tokens(c: &Candidate, max_tokens: u32) -> Candidate {
    if c.tokens() <= max_tokens {
        return c.clone();
    }
    let budget = max_tokens as usize * 4;
    let mut chars = 0;
    let mut lines = 0u32;
    for line in c.text().split('\n') {
        chars += line.chars().count() + 1;
        if chars > budget {
            break;
        }
        lines += 1;
    }
    shortened(c, lines.max(1))
}

/// Up to `files` further matches from `rest` (best first), one per file not yet in `answer`, each
/// shortened to `lines` lines; neighbours and repeats of a file are skipped.
pub fn further_files(answer: &[Candidate], rest: &[Candidate], files: usize, lines: u32) -> Vec<Candidate> {
    if files == 0 || lines == 0 {
        return Vec::new();
    }
    let mut seen: HashSet<(&str, &str)> =
        answer.iter().map(|c| (c.record.namespace.as_str(), c.record.chunk.path.as_str())).collect();
    let mut out = Vec::new();
    for c in rest {
        if out.len() >= files {
            break;
        }
        if c.neighbor_of.is_some() || !seen.insert((&c.record.namespace, &c.record.chunk.path)) {
            continue;
        }
        out.push(shortened(c, lines));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{chunk_at, record};
    use edgerag_core::ChunkType;

    fn at(path: &str, start: u32, lines: u32, score: f32) -> Candidate {
        let text: String = (start..start + lines).map(|l| format!("line {l}\n")).collect();
        Candidate::new(record("repo:t/t", chunk_at(path, ChunkType::CodeFunction, &text, start, 0)), score)
    }

    #[test]
    fn one_shortened_match_per_further_file_best_first() {
        let answer = vec![at("a.rs", 1, 10, 0.9)];
        let rest = vec![
            at("a.rs", 20, 10, 0.5),
            at("b.rs", 5, 10, 0.4),
            at("b.rs", 40, 3, 0.3),
            at("c.rs", 1, 2, 0.2),
        ];
        let more = further_files(&answer, &rest, 5, 3);
        let got: Vec<_> = more.iter().map(|c| (c.record.chunk.path.as_str(), c.lines(), c.text())).collect();
        assert_eq!(got, [("b.rs", (5, 7), "line 5\nline 6\nline 7\n"), ("c.rs", (1, 2), "line 1\nline 2\n")]);
        assert!(more[0].tokens() < at("b.rs", 5, 10, 0.0).tokens());
        assert_eq!(more[0].score, 0.4);
    }

    #[test]
    fn a_match_over_the_cap_keeps_its_first_lines() {
        let big = at("a.rs", 10, 100, 0.5);
        let cut = cut_to_tokens(&big, 20);
        assert!(cut.tokens() <= 20, "{}", cut.tokens());
        assert_eq!(cut.lines().0, 10);
        assert!(cut.text().starts_with("line 10\nline 11\n"));
        assert_eq!(cut_to_tokens(&big, 10_000), big);
    }

    #[test]
    fn at_most_the_files_asked_and_none_when_off() {
        let rest: Vec<_> = (0..6).map(|i| at(&format!("f{i}.rs"), 1, 8, 0.5)).collect();
        assert_eq!(further_files(&[], &rest, 4, 3).len(), 4);
        assert!(further_files(&[], &rest, 0, 3).is_empty());
        let mut n = at("g.rs", 1, 8, 0.5);
        n.neighbor_of = Some("x".into());
        assert!(further_files(&[], &[n], 4, 3).is_empty());
    }
}
