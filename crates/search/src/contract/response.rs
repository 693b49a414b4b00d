//! Building the v4 response from the pipeline's candidates: each match, `debug.ranking`, the
//! augmented prompt and the instructions. The response's types are the API contract's
//! ([`edgerag_api::search::response`]), re-exported here.
pub use edgerag_api::search::response::*;

use crate::candidate::Candidate;
use crate::ports::ChunkRecord;

/// One candidate of `debug.ranking`: where it would be returned and what each retriever made of it.
pub fn ranked_candidate(c: &Candidate) -> RankedCandidate {
    let (start_line, end_line) = c.lines();
    let chunk = &c.record.chunk;
    RankedCandidate {
        path: chunk.path.clone(),
        start_line,
        end_line,
        symbol: symbol_of(chunk),
        chunk_type: chunk.chunk_type.as_str().to_string(),
        score: round6(c.score),
        fused_score: round6(c.trace.fused_score),
        vector_rank: c.trace.vector_rank,
        vector_score: c.trace.vector_score.map(round6),
        keyword_rank: c.trace.keyword_rank,
        keyword_score: c.trace.keyword_score.map(round6),
    }
}

fn split_namespace(ns: &str) -> (String, String) {
    let rest = ns.strip_prefix("repo:").unwrap_or(ns);
    match rest.split_once('/') {
        Some((o, n)) => (o.to_string(), n.to_string()),
        None => (rest.to_string(), String::new()),
    }
}

/// A score as the response shows it: six decimals.
fn round6(x: f32) -> f32 {
    (x * 1e6).round() / 1e6
}

/// What a match is named by: its symbol, or for prose its last heading.
fn symbol_of(chunk: &edgerag_core::Chunk) -> Option<String> {
    chunk.metadata.symbol_name.clone().or_else(|| chunk.metadata.heading_path.last().cloned())
}

/// Build a match from a candidate. `sub_queries` names the sub-query by index.
pub fn to_match(c: &Candidate, sub_queries: &[String]) -> Match {
    let ChunkRecord { namespace, chunk, tags } = &c.record;
    let (repo_owner, repo_name) = split_namespace(namespace);
    let (start_line, end_line) = c.lines();
    let direct = c.neighbor_of.is_none();
    Match {
        path: chunk.path.clone(),
        snippet: c.text().to_string(),
        score: round6(c.score),
        start_line,
        end_line,
        language: chunk.language.as_str().to_string(),
        symbol: symbol_of(chunk),
        metadata: MatchMetadata {
            repo_owner,
            repo_name,
            chunk_id: chunk.id.clone(),
            chunk_hash: chunk.text_hash.clone(),
            span_hash: chunk.metadata.span_hash.clone(),
            chunk_type: chunk.chunk_type.as_str().to_string(),
            chunk_index: chunk.chunk_index,
            token_count: c.tokens(),
            parent_symbol: chunk.metadata.parent_symbol.clone(),
            symbol_id: chunk.metadata.symbol_id.clone(),
            uses: c.uses.clone(),
            used_by: c.used_by.clone(),
            heading_path: chunk.metadata.heading_path.clone(),
            tags: tags.clone(),
            generated_by_sub_query: c.sub_query.and_then(|i| sub_queries.get(i).cloned()),
            neighbor_of_span_hash: c.neighbor_of.clone(),
            vector_rank: c.trace.vector_rank.filter(|_| direct),
            keyword_rank: c.trace.keyword_rank.filter(|_| direct),
            fused_score: direct.then_some(round6(c.trace.fused_score)),
            parent_chars: c.snippet.as_ref().map(|s| s.parent_chars),
            raw_score: c.snippet.as_ref().map(|s| s.raw_score),
            is_context_window: c.snippet.as_ref().map(|s| s.is_context_window),
            parent_id: c.snippet.as_ref().and_then(|s| s.parent_id.clone()),
        },
    }
}

/// The augmented prompt (Spring AI's `ContextualQueryAugmenter` shape): the context, then the
/// question; with no context, a prompt that tells the model to say so. `max_snippet_lines` > 0
/// shortens each snippet.
pub fn augmented_prompt(query: &str, matches: &[Match], max_snippet_lines: u32) -> String {
    if matches.is_empty() {
        return format!(
            "The user query is outside the indexed context: no relevant documents were found.\n\
             Tell the user that you cannot answer it from the indexed repositories.\n\nQuery: {query}"
        );
    }
    let mut out = String::from("Context information is below.\n---------------------\n");
    for m in matches {
        let repo = format!("{}/{}", m.metadata.repo_owner, m.metadata.repo_name);
        out.push_str(&format!("[{repo}] {}:{}-{}", m.path, m.start_line, m.end_line));
        if let Some(symbol) = &m.symbol {
            out.push_str(&format!(" ({symbol})"));
        }
        out.push_str("\n```");
        out.push_str(&m.language);
        out.push('\n');
        let snippet = if max_snippet_lines > 0 {
            let lines: Vec<&str> = m.snippet.lines().collect();
            let mut s = lines.iter().take(max_snippet_lines as usize).copied().collect::<Vec<_>>().join("\n");
            if lines.len() > max_snippet_lines as usize {
                s.push_str("\n…");
            }
            s
        } else {
            m.snippet.trim_end_matches('\n').to_string()
        };
        out.push_str(&snippet);
        out.push_str("\n```\n\n");
    }
    out.push_str(
        "---------------------\nGiven the context information and no prior knowledge, answer the query.\n\
         Follow these rules:\n1. If the answer is not in the context, just say that you don't know.\n\
         2. Avoid statements like \"Based on the context...\".\n",
    );
    out.push_str(&format!("Query: {query}\nAnswer:"));
    out
}

/// Values for the instructions placeholders.
pub struct TemplateValues<'a> {
    pub raw_query: &'a str,
    pub repo_owner: &'a str,
    pub repo_name: &'a str,
    pub locale: &'a str,
    pub augmented_prompt: &'a str,
}

/// Render an instructions template. The template is normalized first (see
/// [`crate::sanitize::normalize_template`]; its warnings are returned for the response).
pub fn render_instructions(
    template: &str,
    values: &TemplateValues<'_>,
    warnings: &mut Vec<String>,
) -> String {
    let normalized = crate::sanitize::normalize_template(template, warnings);
    // One pass, so placeholder-like text inside the values is never expanded again.
    let mut out = String::with_capacity(normalized.len() + values.augmented_prompt.len());
    let mut rest = normalized.as_str();
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let value = after.find("}}").and_then(|close| {
            let v = match &after[..close] {
                "rawQuery" => values.raw_query,
                "repoOwner" => values.repo_owner,
                "repoName" => values.repo_name,
                "locale" => values.locale,
                "augmentedPrompt" => values.augmented_prompt,
                _ => return None,
            };
            Some((v, close))
        });
        match value {
            Some((v, close)) => {
                out.push_str(v);
                rest = &after[close + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::candidate;
    use edgerag_core::ChunkType;

    #[test]
    fn match_carries_repo_and_tags() {
        let mut c = candidate("src/a.rs", ChunkType::CodeFunction, "fn a() {}", 0.5);
        c.record.namespace = "repo:acme/shop".into();
        c.sub_query = Some(1);
        let m = to_match(&c, &["q".into(), "q2".into()]);
        assert_eq!((m.metadata.repo_owner.as_str(), m.metadata.repo_name.as_str()), ("acme", "shop"));
        assert_eq!(m.metadata.generated_by_sub_query.as_deref(), Some("q2"));
        assert_eq!((m.start_line, m.end_line), (1, 1));
        let json = serde_json::to_value(&m).unwrap_or_default();
        assert!(json["metadata"].get("neighborOfSpanHash").is_none());
        assert!(json.get("symbol").is_some(), "symbol is always present (null when none)");
    }

    #[test]
    fn prompts_and_instructions() {
        let c = candidate("src/a.rs", ChunkType::CodeFunction, "fn a() {}\nfn b() {}\n", 0.5);
        let m = to_match(&c, &[]);
        let p = augmented_prompt("what is a", std::slice::from_ref(&m), 1);
        assert!(
            p.contains("src/a.rs:1-2")
                && p.contains("fn a() {}\n…")
                && p.ends_with("Query: what is a\nAnswer:")
        );
        assert!(augmented_prompt("q", &[], 0).contains("no relevant documents"));
        let mut w = Vec::new();
        let v = TemplateValues {
            raw_query: "Q",
            repo_owner: "o",
            repo_name: "n",
            locale: "pt",
            augmented_prompt: "P",
        };
        let s = render_instructions(
            "{{query}}|{{repoOwner}}/{{repoName}}|{{locale}}|{{augmentedPrompt}}|{{x}}",
            &v,
            &mut w,
        );
        assert_eq!(s, "Q|o/n|pt|P|");
        assert_eq!(w.len(), 2);
        let v = TemplateValues { raw_query: "{{repoName}}", ..v };
        assert_eq!(render_instructions("{{rawQuery}}", &v, &mut w), "{{repoName}}");
    }
}
