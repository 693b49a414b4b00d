//! Multi-query: several phrasings of one question, each retrieved on its own (top-K each), merged
//! in sub-query order and deduplicated by `chunk_hash` (the chunk's `text_hash`), every match
//! tagged with the sub-query that found it first.
use std::collections::HashMap;

use crate::candidate::Candidate;

/// Merge per-sub-query lists (each best first) in sub-query order. A chunk found again by a later
/// sub-query keeps its first position and tag, and the best score of all its finds.
pub fn merge(lists: Vec<Vec<Candidate>>) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, list) in lists.into_iter().enumerate() {
        for mut c in list {
            match seen.get(&c.record.chunk.text_hash) {
                Some(&at) => {
                    if c.score > out[at].score {
                        out[at].score = c.score;
                        out[at].trace.fused_score = out[at].trace.fused_score.max(c.trace.fused_score);
                    }
                }
                None => {
                    c.sub_query = Some(i);
                    seen.insert(c.record.chunk.text_hash.clone(), out.len());
                    out.push(c);
                }
            }
        }
    }
    out
}

/// The prompt asking a text model for `n` alternative phrasings.
pub fn llm_prompt(query: &str, n: usize) -> (String, String) {
    (
        "You rewrite search queries for a code and documentation search engine. Reply with the \
         alternative queries only, one per line, no numbering, no commentary."
            .to_string(),
        format!(
            "Write {n} different versions of this question, each phrased differently (synonyms, \
             likely identifier names, related concepts), to retrieve relevant code and docs:\n{query}"
        ),
    )
}

/// Parse the model's reply: one query per line, numbering and bullets stripped, distinct from
/// the original and each other, at most `n`.
pub fn parse_llm_reply(reply: &str, original: &str, n: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in reply.lines() {
        let l = line
            .trim()
            .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | ')' | '-' | '*' | '•'))
            .trim()
            .trim_matches('"')
            .trim();
        if l.is_empty()
            || l.len() > 500
            || l.eq_ignore_ascii_case(original)
            || out.iter().any(|o| o.eq_ignore_ascii_case(l))
        {
            continue;
        }
        out.push(l.to_string());
        if out.len() >= n {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::candidate;
    use edgerag_core::ChunkType;

    #[test]
    fn merges_in_subquery_order_and_dedups_by_chunk_hash() {
        let a = candidate("a.rs", ChunkType::CodeBlock, "alpha", 0.5);
        let b = candidate("b.rs", ChunkType::CodeBlock, "beta", 0.9);
        let a_again = candidate("a.rs", ChunkType::CodeBlock, "alpha", 0.8);
        // Same text in another file: same chunk hash, deduplicated.
        let a_copy = candidate("vendor/a.rs", ChunkType::CodeBlock, "alpha", 0.1);
        let c = candidate("c.rs", ChunkType::CodeBlock, "gamma", 0.7);
        let out = merge(vec![vec![a, a_copy], vec![b, a_again, c]]);
        let paths: Vec<&str> = out.iter().map(|c| c.record.chunk.path.as_str()).collect();
        assert_eq!(paths, ["a.rs", "b.rs", "c.rs"]);
        assert_eq!(out.iter().map(|c| c.sub_query).collect::<Vec<_>>(), [Some(0), Some(1), Some(1)]);
        assert_eq!(out[0].score, 0.8, "best score of every find");
    }

    #[test]
    fn parses_model_replies() {
        let reply = "1. How is retry handled?\n- \"backoff on failure\"\n\nwhere is retry\n  2) How is retry handled?\nextra";
        assert_eq!(
            parse_llm_reply(reply, "where is retry", 2),
            ["How is retry handled?", "backoff on failure"]
        );
    }
}
