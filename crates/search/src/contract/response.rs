//! Response v4 (SPEC §3): matches, `rerankApplied`, `augmentedPrompt`, `instructions`,
//! `contextMissing`, `noResults`, `noResultsReason`, `appliedModules`, `warnings`.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::candidate::Candidate;
use crate::ports::ChunkRecord;

/// Why there is nothing to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NoResultsReason {
    /// The index was searched and nothing relevant was found.
    ContextNotFound,
    /// The repository has no READY index (yet).
    IndexNotReady,
}

/// Per-match metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchMetadata {
    /// Repository the match comes from (always set; what tells global results apart).
    pub repo_owner: String,
    pub repo_name: String,
    pub chunk_id: String,
    /// The chunk's content hash (`text_hash`), the dedup key of multi-query.
    pub chunk_hash: String,
    pub span_hash: String,
    /// `code-function`, `markdown-section`, ...
    pub chunk_type: String,
    pub chunk_index: u32,
    pub token_count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_symbol: Option<String>,
    /// Code: the id of the graph node the chunk belongs to (the innermost symbol holding it), as
    /// `repo.symbol_references` takes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol_id: Option<String>,
    /// Code: names of the symbols the chunk calls (a few, best resolved first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uses: Vec<String>,
    /// Code: names of the symbols that call it (a few, best resolved and nearest first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub used_by: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heading_path: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The sub-query that found this match first (multi-query).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_by_sub_query: Option<String>,
    /// Set on chunks added by neighbour expansion: the `spanHash` of the match they surround.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbor_of_span_hash: Option<String>,
    /// Rank in each retriever (1-based) and the fused score, when retrieved directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword_rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fused_score: Option<f32>,
    /// Parent/child retrieval: the parent's size and whether the snippet is a window of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_chars: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_score: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_context_window: Option<bool>,
    /// Two-stage retrieval over a document chunked into parents and children: the parent
    /// returned (whole, or a window of it) for the matched child `chunkId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
}

/// One piece of context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Match {
    pub path: String,
    pub snippet: String,
    /// Relevance after every module (higher is better; comparable within one response).
    pub score: f32,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub language: String,
    /// Definition name or heading; `null` when the chunk has none.
    #[schemars(required, schema_with = "nullable_string_schema")]
    pub symbol: Option<String>,
    pub metadata: MatchMetadata,
}

/// Per-module timing (debug output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModuleTiming {
    pub module: String,
    pub ms: f64,
}

/// Extra detail for `debug: true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchDebug {
    pub sub_queries: Vec<String>,
    /// The FTS5 expression of the first sub-query.
    pub keyword_query: Option<String>,
    pub timings: Vec<ModuleTiming>,
    pub total_ms: f64,
    /// The resolved plan (profile after the guard).
    pub plan: serde_json::Value,
    /// The candidates in their order just before the topK cut (after the reranks and span
    /// merging; at most [`MAX_RANKING`]): what each retriever made of them and the score they
    /// ended with. Why a match is where it is, and what fell just short.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranking: Vec<RankedCandidate>,
}

/// Most candidates `debug.ranking` lists.
pub const MAX_RANKING: usize = 100;

/// One candidate of `debug.ranking`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RankedCandidate {
    pub path: String,
    /// 1-based, inclusive: the lines it would be returned with.
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<String>,
    pub chunk_type: String,
    /// The score after every module so far.
    pub score: f32,
    /// The fused retrieval score (0..1) it started from.
    pub fused_score: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_score: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword_rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword_score: Option<f32>,
}

impl RankedCandidate {
    pub fn of(c: &Candidate) -> Self {
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
}

/// The v4 response of every search tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    pub matches: Vec<Match>,
    /// Whether any rerank module changed the order.
    pub rerank_applied: bool,
    /// A ready prompt: the context (matches) followed by the question.
    pub augmented_prompt: String,
    /// Guidance for the agent, from the instructions template.
    pub instructions: String,
    /// No context was found for the question.
    pub context_missing: bool,
    /// Retrieval returned nothing (also when generation may continue without context).
    pub no_results: bool,
    /// `CONTEXT_NOT_FOUND`, `INDEX_NOT_READY`, or `null` when there are results.
    #[schemars(required, schema_with = "nullable_reason_schema")]
    pub no_results_reason: Option<NoResultsReason>,
    /// Every module that ran, always including `profile:<name>`.
    pub applied_modules: Vec<String>,
    /// Every automatic fix, clamp and fallback. Empty when the request passed untouched.
    pub warnings: Vec<String>,
    /// The repository searched (labels in global mode).
    pub repo_owner: String,
    pub repo_name: String,
    pub profile: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<SearchDebug>,
}

fn nullable_reason_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["string", "null"], "enum": ["CONTEXT_NOT_FOUND", "INDEX_NOT_READY", null] })
}

fn nullable_string_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["string", "null"] })
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
