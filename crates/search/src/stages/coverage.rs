//! More files for the same tokens: after an answer's matches, the best match of each further file
//! among the candidates the topK cut left out, shortened to its first lines (the definition's
//! signature and the start of its body). A question about *where* something lives — which file a
//! change belongs in — is served by a second and third plausible file far more than by a fourth
//! match of the first one, and a few lines per file are enough to tell them apart.
use std::collections::HashSet;

use edgerag_core::text::{identifiers, split_identifier};

use crate::candidate::{Candidate, SnippetOverride};
use crate::query::{tokenize, QueryTerm};

/// The first `lines` lines of `c` as a match of its own (its score and place in the ranking kept).
fn shortened(c: &Candidate, lines: u32) -> Candidate {
    window(c, 0, lines)
}

/// `take` lines of `c` from its `skip`-th line on, as a match of its own (its score and place in
/// the ranking kept). `c` itself when its text is not its lines or the window is all of it.
fn window(c: &Candidate, skip: u32, take: u32) -> Candidate {
    let (start, end) = c.lines();
    let text = c.text();
    if !c.text_is_its_lines() || (skip == 0 && end - start < take) || take == 0 {
        return c.clone();
    }
    let cut: Vec<&str> = text.split('\n').skip(skip as usize).take(take as usize).collect();
    let take = cut.len() as u32;
    if take == 0 {
        return c.clone();
    }
    let mut short = cut.join("\n");
    short.push('\n');
    let symbol = c.record.chunk.metadata.symbol_name.clone().unwrap_or_default();
    Candidate {
        snippet: Some(SnippetOverride {
            text: short,
            start_line: start + skip,
            end_line: start + skip + take - 1,
            parent_symbol: symbol,
            parent_id: None,
            parent_chars: text.chars().count() as u32,
            raw_score: c.score,
            is_context_window: false,
        }),
        ..c.clone()
    }
}

/// `c` cut to the lines within `max_tokens` (chars / 4) that hold most of the question's keyword
/// `terms`, when it is larger and its text is exactly its lines: one very large definition (a
/// 400-line function holding a script template) must not be the whole answer, and a large match
/// (a whole class, or a definition merged with its neighbours) is shown where the question points
/// in it — the method the question describes, not the licence header above it. Each term weighs
/// by how few of the match's lines hold it; a match holding none of the terms keeps its first lines.
pub fn cut_to_tokens(c: &Candidate, max_tokens: u32, terms: &[QueryTerm]) -> Candidate {
    if c.tokens() <= max_tokens {
        return c.clone();
    }
    let budget = max_tokens as usize * 4;
    let text = c.text();
    let lines: Vec<&str> = text.strip_suffix('\n').unwrap_or(text).split('\n').collect();
    let scores = line_scores(&lines, terms);
    // The window of consecutive lines within the budget with the highest score (the first such).
    let (mut best, mut best_at, mut best_len) = (0.0f64, 0usize, 0usize);
    let (mut from, mut chars, mut score) = (0usize, 0usize, 0.0f64);
    for (to, line) in lines.iter().enumerate() {
        chars += line.chars().count() + 1;
        score += scores[to];
        while chars > budget && from < to {
            chars -= lines[from].chars().count() + 1;
            score -= scores[from];
            from += 1;
        }
        if chars <= budget && score > best + 1e-9 {
            (best, best_at, best_len) = (score, from, to + 1 - from);
        }
    }
    if best <= 0.0 {
        // Nothing of the question in it: its first lines (its signature and the start of its body).
        let mut chars = 0;
        best_len = lines
            .iter()
            .take_while(|l| {
                chars += l.chars().count() + 1;
                chars <= budget
            })
            .count();
        best_at = 0;
    }
    window(c, best_at as u32, best_len.max(1) as u32)
}

/// Each line's share of the question: for every keyword term the line holds, `ln(1 + n / k)` where
/// `n` is the number of lines and `k` the number of lines holding the term.
fn line_scores(lines: &[&str], terms: &[QueryTerm]) -> Vec<f64> {
    let held: Vec<Vec<usize>> = lines
        .iter()
        .map(|line| {
            let mut tokens: Vec<String> = Vec::new();
            for word in identifiers(line) {
                tokens.extend(tokenize(word));
                let parts = split_identifier(word);
                if parts.len() > 1 {
                    tokens.extend(parts);
                }
            }
            terms
                .iter()
                .enumerate()
                .filter(|(_, t)| {
                    tokens.iter().any(|tok| if t.prefix { tok.starts_with(&t.text) } else { *tok == t.text })
                })
                .map(|(i, _)| i)
                .collect()
        })
        .collect();
    let mut lines_with = vec![0usize; terms.len()];
    for h in &held {
        for &i in h {
            lines_with[i] += 1;
        }
    }
    let n = lines.len() as f64;
    held.iter().map(|h| h.iter().map(|&i| (1.0 + n / lines_with[i] as f64).ln()).sum()).collect()
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
    use crate::query::keyword_terms;
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
    fn a_match_over_the_cap_without_the_question_in_it_keeps_its_first_lines() {
        let big = at("a.rs", 10, 100, 0.5);
        let terms = keyword_terms("unrelated words", Default::default());
        let cut = cut_to_tokens(&big, 20, &terms);
        assert!(cut.tokens() <= 20, "{}", cut.tokens());
        assert_eq!(cut.lines().0, 10);
        assert!(cut.text().starts_with("line 10\nline 11\n"));
        assert_eq!(cut_to_tokens(&big, 10_000, &terms), big);
    }

    #[test]
    fn a_match_over_the_cap_is_cut_where_the_question_points() {
        // A class: a long header, then the one method the question describes, then more code.
        let mut text = String::new();
        for i in 0..60 {
            text.push_str(&format!("// licence and class documentation, line {i}\n"));
        }
        text.push_str("public NameAllocator clone() {\n  return new NameAllocator(allocatedNames);\n}\n");
        for i in 0..40 {
            text.push_str(&format!("void other{i}() {{ work(); }}\n"));
        }
        let big =
            Candidate::new(record("repo:t/t", chunk_at("N.java", ChunkType::CodeClass, &text, 1, 0)), 0.7);
        let terms = keyword_terms("Create a deep copy of this NameAllocator.", Default::default());
        let cut = cut_to_tokens(&big, 40, &terms);
        assert!(cut.tokens() <= 40, "{}", cut.tokens());
        let (start, end) = cut.lines();
        assert!(start <= 61 && end >= 62, "lines {start}-{end} miss the method");
        assert!(cut.text().contains("public NameAllocator clone()"));
        assert!(cut.text_is_its_lines());
        assert_eq!(cut.score, 0.7);
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
