//! Profiles: named bundles of retrieval, post-processing and generation settings. The built-in
//! `conservative`, `balanced`, `aggressive` and `legacy` can be overridden (field by field) and new
//! ones added by a JSON configuration (the worker reads it from the `SEARCH_PROFILES` var):
//!
//! ```json
//! { "defaultProfile": "balanced",
//!   "profiles": { "balanced": { "retrieval": { "topK": 10 } },
//!                 "docs": { "extends": "conservative", "generation": { "locale": "pt" } } } }
//! ```
//!
//! Values here are what the operator asked for; [`crate::guard`] clamps them to the SLA bounds.
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Everything one profile decides. JSON is camelCase; unknown fields are rejected so typos in the
/// configuration are reported instead of silently ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Profile {
    pub retrieval: RetrievalSettings,
    pub multi_query: MultiQuerySettings,
    pub query_transformers: TransformerSettings,
    pub post_processing: PostProcessingSettings,
    pub generation: GenerationSettings,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetrievalSettings {
    /// Matches returned (before neighbour expansion).
    pub top_k: u32,
    /// Candidates kept per sub-query after fusion.
    pub top_k_per_query: u32,
    /// Each retriever fetches `topKPerQuery × candidateMultiplier` before fusion.
    pub candidate_multiplier: u32,
    /// Drop fused matches below this normalized score (0..1; 1 = first in every retriever).
    pub min_score: f32,
    /// Drop vector hits below this cosine similarity before fusion (0 = keep all).
    pub min_vector_similarity: f32,
    /// Weighted reciprocal rank fusion: `Σ weight / (rrfK + rank)`.
    pub vector_weight: f32,
    pub keyword_weight: f32,
    pub rrf_k: f32,
    /// Stemmed prefix terms and identifier parts in the BM25 query.
    pub keyword_stemming: bool,
    pub keyword_identifier_split: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MultiQuerySettings {
    pub enabled: bool,
    /// Sub-queries wanted (the original counts as one).
    pub queries: u32,
    /// Upper bound for `queries` (itself bounded by 6).
    pub max_queries: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransformerSettings {
    /// Master switch for the LLM query transformers.
    pub enabled: bool,
    /// Compress conversation history + follow-up into a standalone query.
    pub compression: bool,
    pub rewrite: bool,
    pub translation: bool,
    /// Language of the embedding model (ISO 639-1), the translation target.
    pub translate_to: String,
    pub max_history_tokens: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PostProcessingSettings {
    /// Size of the head the rerankers reorder.
    pub rerank_top_n: u32,
    pub code_aware: CodeAwareSettings,
    pub heuristic: HeuristicSettings,
    pub cross_encoder: CrossEncoderSettings,
    pub neighbor: NeighborSettings,
    pub parent_child: ParentChildSettings,
    /// Further files after the matches, one short match each (off when absent).
    #[serde(default)]
    pub further_files: FurtherFilesSettings,
    /// Callees and callers of the strongest matches as candidates (off when absent).
    #[serde(default)]
    pub graph_candidates: GraphCandidatesSettings,
    /// Token budget of all returned snippets together (at least one match is always kept).
    pub max_context_tokens: u32,
    /// The operator's ceiling for `maxContextTokens` (itself bounded by 4000).
    pub max_context_tokens_limit: u32,
}

/// After the topK matches, the best remaining match of each further file, cut to its first
/// `lines` lines, while the budget leaves room: more plausible files for few tokens.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FurtherFilesSettings {
    /// How many further files at most (0 = off).
    pub files: u32,
    /// Lines of each further file's match.
    pub lines: u32,
    /// Hits of each sub-query read beyond `topKPerQuery` only to find further files: they never
    /// rank among the candidates (0 = none).
    #[serde(default)]
    pub depth: u32,
}

/// Before the topK cut, the callees and callers (depth 1, resolved calls) of the first `seeds`
/// candidates with a code-graph node join the candidates, scored `seed score × calleeWeight` (or
/// `callerWeight`) × their own code-aware weight.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GraphCandidatesSettings {
    /// How many of the best candidates lead to their callees and callers (0 = off).
    pub seeds: u32,
    /// Callees and callers followed per seed and direction at most.
    pub per_seed: u32,
    /// A callee's share of its seed's score.
    pub callee_weight: f32,
    /// A caller's share of its seed's score.
    pub caller_weight: f32,
    /// Whether they rank after the first `topK` retrieved candidates (they can then only be
    /// further files), not among them.
    #[serde(default)]
    pub after_matches: bool,
    /// Only callees and callers in their seed's own file.
    #[serde(default)]
    pub same_file: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CodeAwareSettings {
    pub enabled: bool,
    /// The head is `ceil(rerankTopN × headMultiplier)`.
    pub head_multiplier: f32,
    /// Operator ceiling for `headMultiplier` (itself bounded by 4.0).
    pub max_head_multiplier: f32,
    /// Multiplier for chunks in a language the query names (e.g. `python: 1.2`); `default`
    /// applies to languages not listed.
    pub language_bonus: BTreeMap<String, f32>,
    /// Multiplier per symbol kind: `class`, `interface`, `method_public`, `method`,
    /// `function_public`, `function`, `type`, `block`, `doc`, `text`.
    pub symbol_priority: BTreeMap<String, f32>,
    pub path_penalty: PathPenaltySettings,
    pub diversity: DiversitySettings,
    /// Multiplier for a definition whose name the query writes in code shape (`parse_args`,
    /// `Config.Load`, `OrderEntry`); 1 = off.
    #[serde(default = "one")]
    pub named_symbol_bonus: f32,
    /// Multiplier for a definition whose name is one of the query's plain words, case and all
    /// (`Compress is a middleware that…`); 1 = off.
    #[serde(default = "one")]
    pub named_word_bonus: f32,
    /// Multiplier for a definition every word of whose name the question holds, in any form
    /// (`remove_entry` for "Removes the entry…", `toVecPretty` for "…a pretty-printed byte
    /// vector"); 1 = off.
    #[serde(default = "one")]
    pub named_parts_bonus: f32,
    /// Multiplier for a definition whose enclosing type the question names, case and all, in code
    /// shape or as a plain word (a method of `Number` for "Returns true if the `Number` is an
    /// integer…"); on top of the name bonuses; 1 = off.
    #[serde(default = "one")]
    pub named_parent_bonus: f32,
    /// Multiplier for a definition whose signature (its first line of code) holds a name the
    /// question quotes as code, other than its own (`u128` in "Converts a `u128` to a
    /// `Number`", `{@code typeArguments}`); 1 = off.
    #[serde(default = "one")]
    pub quoted_in_signature_bonus: f32,
    /// In the answer, code comes before tests and prose (tests unless the question asks for
    /// them, prose unless it asks for docs), each in its own order and with its own score.
    #[serde(default)]
    pub code_first: bool,
}

fn one() -> f32 {
    1.0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PathPenaltySettings {
    /// Paths under these prefixes are never penalized.
    pub allow_prefixes: Vec<String>,
    /// Path prefixes (matched at any folder level) multiplied by `penaltyMultiplier`.
    pub deny_prefixes: Vec<String>,
    pub penalty_multiplier: f32,
    /// Multiplier for test files unless the query asks about tests.
    pub test_penalty: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiversitySettings {
    /// Matches per file kept in the head before the rest are demoted (0 = no limit).
    pub max_per_file: u32,
    /// Matches per symbol kept in the head before the rest are demoted (0 = no limit).
    pub max_per_symbol: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HeuristicSettings {
    pub enabled: bool,
    pub score_weight: f32,
    pub span_weight: f32,
    /// Spans between these line counts get the full span score.
    pub ideal_min_lines: u32,
    pub ideal_max_lines: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrossEncoderSettings {
    /// Used only when a reranker is configured.
    pub enabled: bool,
    /// Share of the cross-encoder in the final head score (0..1).
    pub weight: f32,
}

/// How neighbours of a match are added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NeighborStrategy {
    Off,
    Linear,
    ParentSymbol,
    CallGraph,
}

impl NeighborStrategy {
    /// Accepts any case and `-`/space for `_` (`parent-symbol`, `Parent Symbol`).
    pub fn parse(s: &str) -> Option<Self> {
        let n: String = s
            .trim()
            .chars()
            .map(|c| if c == '-' || c == ' ' { '_' } else { c.to_ascii_uppercase() })
            .collect();
        match n.as_str() {
            "OFF" | "NONE" | "DISABLED" => Some(Self::Off),
            "LINEAR" => Some(Self::Linear),
            "PARENT_SYMBOL" | "PARENT" => Some(Self::ParentSymbol),
            "CALL_GRAPH" | "CALLGRAPH" => Some(Self::CallGraph),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "OFF",
            Self::Linear => "LINEAR",
            Self::ParentSymbol => "PARENT_SYMBOL",
            Self::CallGraph => "CALL_GRAPH",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NeighborSettings {
    pub strategy: NeighborStrategy,
    /// Chunks on each side (LINEAR).
    pub radius: u32,
    /// Neighbours added in total.
    pub limit: u32,
    pub max_radius: u32,
    /// Operator ceiling for `limit` (itself bounded by 400).
    pub max_limit: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ParentChildSettings {
    /// Parent/child retrieval: return the enclosing definition once instead of several of its pieces.
    pub enabled: bool,
    /// Parent size normalization, `raw × sqrt(avgSize / size)`. Off by default: on code it favoured tiny
    /// snippets and cost ~0.24 MRR@10 in the retrieval benchmark.
    pub normalize_scores: bool,
    /// Characters of context around the matched child in a large parent.
    pub context_window_chars: u32,
    /// Chunks read per parent at most.
    pub max_children: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GenerationSettings {
    /// `{{locale}}` in the instructions.
    pub locale: String,
    /// Placeholders: `{{rawQuery}}`, `{{repoOwner}}`, `{{repoName}}`, `{{locale}}`,
    /// `{{augmentedPrompt}}` (`{{query}}` is read as `{{rawQuery}}`).
    pub instructions_template: String,
    /// When false, a search with no context is an error (`CONTEXT_NOT_FOUND`).
    pub allow_empty_context: bool,
    /// Lines of each snippet in the augmented prompt at most (0 = whole snippet).
    pub max_snippet_lines: u32,
}

pub const DEFAULT_INSTRUCTIONS: &str = "Answer the question \"{{rawQuery}}\" about the repository \
{{repoOwner}}/{{repoName}} using only the context in the augmented prompt. Cite file paths and line \
ranges for every claim, and say plainly when the context does not contain the answer. Reply in \
{{locale}}.";

impl Profile {
    /// `balanced`: hybrid retrieval (RRF 0.5:0.5, k = 10 — the best setting of the retrieval
    /// benchmark for edgerag's chunks), deterministic multi-query, code-aware + heuristic rerank,
    /// parent/child (whole small definitions, windows of big ones; no size normalization, which
    /// cost ~0.24 MRR@10 there), one linear neighbour on each side, then one short match for each
    /// of up to twelve further files, all within 2,500 tokens. The code-aware weights (tests,
    /// prose, examples below code; a definition the question names above) were fitted on the
    /// answer-quality benchmark's development set (docs/answer-quality.md).
    pub fn balanced() -> Profile {
        Profile {
            retrieval: RetrievalSettings {
                top_k: 8,
                top_k_per_query: 30,
                candidate_multiplier: 2,
                min_score: 0.0,
                min_vector_similarity: 0.0,
                vector_weight: 0.5,
                keyword_weight: 0.5,
                rrf_k: 10.0,
                keyword_stemming: true,
                keyword_identifier_split: true,
            },
            multi_query: MultiQuerySettings { enabled: true, queries: 3, max_queries: 6 },
            query_transformers: TransformerSettings {
                enabled: true,
                compression: true,
                rewrite: true,
                translation: true,
                translate_to: "en".into(),
                max_history_tokens: 1600,
            },
            post_processing: PostProcessingSettings {
                rerank_top_n: 20,
                code_aware: CodeAwareSettings {
                    enabled: true,
                    head_multiplier: 3.0,
                    max_head_multiplier: 4.0,
                    language_bonus: BTreeMap::from([("default".into(), 1.15)]),
                    symbol_priority: BTreeMap::from([
                        ("class".into(), 1.08),
                        ("interface".into(), 1.08),
                        ("type".into(), 1.04),
                        ("method_public".into(), 1.08),
                        ("function_public".into(), 1.08),
                        ("method".into(), 1.05),
                        ("function".into(), 1.05),
                        ("block".into(), 0.95),
                        ("doc".into(), 0.6),
                        ("text".into(), 0.5),
                    ]),
                    path_penalty: PathPenaltySettings {
                        allow_prefixes: Vec::new(),
                        deny_prefixes: [
                            "generated/",
                            "gen/",
                            "vendor/",
                            "third_party/",
                            "node_modules/",
                            "dist/",
                            "examples/",
                            "example/",
                            "_examples/",
                        ]
                        .map(String::from)
                        .to_vec(),
                        penalty_multiplier: 0.6,
                        test_penalty: 0.4,
                    },
                    diversity: DiversitySettings { max_per_file: 3, max_per_symbol: 2 },
                    named_symbol_bonus: 1.5,
                    named_word_bonus: 1.25,
                    named_parts_bonus: 1.2,
                    named_parent_bonus: 1.3,
                    quoted_in_signature_bonus: 1.2,
                    code_first: true,
                },
                heuristic: HeuristicSettings {
                    enabled: true,
                    score_weight: 0.9,
                    span_weight: 0.1,
                    ideal_min_lines: 3,
                    ideal_max_lines: 80,
                },
                cross_encoder: CrossEncoderSettings { enabled: true, weight: 0.7 },
                neighbor: NeighborSettings {
                    strategy: NeighborStrategy::Linear,
                    radius: 1,
                    limit: 6,
                    max_radius: 5,
                    max_limit: 12,
                },
                parent_child: ParentChildSettings {
                    enabled: true,
                    normalize_scores: false,
                    context_window_chars: 1000,
                    max_children: 50,
                },
                further_files: FurtherFilesSettings { files: 12, lines: 3, depth: 30 },
                graph_candidates: GraphCandidatesSettings {
                    seeds: 8,
                    per_seed: 2,
                    callee_weight: 0.7,
                    caller_weight: 0.4,
                    after_matches: true,
                    same_file: true,
                },
                max_context_tokens: 2500,
                max_context_tokens_limit: 4000,
            },
            generation: GenerationSettings {
                locale: "en".into(),
                instructions_template: DEFAULT_INSTRUCTIONS.into(),
                allow_empty_context: true,
                max_snippet_lines: 0,
            },
        }
    }

    /// `conservative`: fewer, surer matches; no multi-query, no neighbours, smaller budget.
    pub fn conservative() -> Profile {
        let mut p = Profile::balanced();
        p.retrieval.top_k = 5;
        p.retrieval.top_k_per_query = 10;
        p.retrieval.min_score = 0.2;
        p.multi_query.enabled = false;
        p.multi_query.queries = 1;
        p.post_processing.rerank_top_n = 10;
        p.post_processing.code_aware.head_multiplier = 1.0;
        p.post_processing.neighbor.strategy = NeighborStrategy::Off;
        p.post_processing.neighbor.limit = 0;
        p.post_processing.max_context_tokens = 2000;
        p.post_processing.further_files.files = 0;
        p.post_processing.graph_candidates.seeds = 0;
        p
    }

    /// `aggressive`: recall first; more sub-queries, a wider head, parent-symbol neighbours.
    pub fn aggressive() -> Profile {
        let mut p = Profile::balanced();
        p.retrieval.top_k = 16;
        p.retrieval.top_k_per_query = 40;
        p.multi_query.queries = 5;
        p.post_processing.rerank_top_n = 40;
        p.post_processing.code_aware.head_multiplier = 3.0;
        p.post_processing.neighbor.strategy = NeighborStrategy::ParentSymbol;
        p.post_processing.neighbor.radius = 2;
        p.post_processing.neighbor.limit = 12;
        p.post_processing.max_context_tokens = 4000;
        p
    }

    /// `legacy`: the pre-profile behaviour — plain (equal-weight) fusion, top 10, no query
    /// rewriting, no multi-query, no code-aware step, no neighbours.
    pub fn legacy() -> Profile {
        let mut p = Profile::balanced();
        p.retrieval.top_k = 10;
        p.retrieval.top_k_per_query = 10;
        p.retrieval.vector_weight = 1.0;
        p.retrieval.keyword_weight = 1.0;
        p.retrieval.rrf_k = 60.0;
        p.post_processing.parent_child.enabled = false;
        p.multi_query.enabled = false;
        p.multi_query.queries = 1;
        p.query_transformers.enabled = false;
        p.post_processing.rerank_top_n = 10;
        p.post_processing.code_aware.enabled = false;
        p.post_processing.cross_encoder.enabled = false;
        p.post_processing.neighbor.strategy = NeighborStrategy::Off;
        p.post_processing.neighbor.limit = 0;
        p.post_processing.further_files.files = 0;
        p.post_processing.graph_candidates.seeds = 0;
        p
    }
}

/// The built-in profile names, in the order they are listed to users.
pub const BUILTIN_PROFILES: [&str; 4] = ["conservative", "balanced", "aggressive", "legacy"];

fn builtin(name: &str) -> Option<Profile> {
    match name {
        "conservative" => Some(Profile::conservative()),
        "balanced" => Some(Profile::balanced()),
        "aggressive" => Some(Profile::aggressive()),
        "legacy" => Some(Profile::legacy()),
        _ => None,
    }
}

/// Every profile by name plus the default one. The default is always one of the profiles: the
/// built-ins are always there and the configuration may only name a profile it holds as the
/// default (the fields are private so nothing else can break that).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileRegistry {
    default_profile: String,
    profiles: BTreeMap<String, Profile>,
}

impl Default for ProfileRegistry {
    fn default() -> Self {
        ProfileRegistry {
            default_profile: "balanced".into(),
            profiles: BUILTIN_PROFILES.iter().filter_map(|n| Some((n.to_string(), builtin(n)?))).collect(),
        }
    }
}

impl ProfileRegistry {
    /// Built-ins overridden by `config` (JSON, see the module docs). A broken configuration never
    /// stops searches: the parts that are valid apply, the rest are reported as warnings (the
    /// worker logs them and adds them to responses).
    pub fn from_config(config: Option<&str>) -> (ProfileRegistry, Vec<String>) {
        let mut registry = ProfileRegistry::default();
        let mut warnings = Vec::new();
        let Some(raw) = config.map(str::trim).filter(|c| !c.is_empty()) else { return (registry, warnings) };
        let value: serde_json::Value = match serde_json::from_str(raw) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!(
                    "search profile configuration is not valid JSON ({e}); using built-in profiles"
                ));
                return (registry, warnings);
            }
        };
        let Some(obj) = value.as_object() else {
            warnings
                .push("search profile configuration must be a JSON object; using built-in profiles".into());
            return (registry, warnings);
        };
        for key in obj.keys() {
            if key != "defaultProfile" && key != "profiles" {
                warnings.push(format!("search profile configuration: unknown key `{key}` ignored"));
            }
        }
        if let Some(profiles) = obj.get("profiles").and_then(|p| p.as_object()) {
            for (raw_name, patch) in profiles {
                let name = normalize_profile_name(raw_name);
                let mut patch = patch.clone();
                let base_name = patch
                    .as_object_mut()
                    .and_then(|o| o.remove("extends"))
                    .and_then(|e| e.as_str().map(normalize_profile_name))
                    .unwrap_or_else(
                        || if builtin(&name).is_some() { name.clone() } else { "balanced".into() },
                    );
                let Some(base) = registry.profiles.get(&base_name).cloned().or_else(|| builtin(&base_name))
                else {
                    warnings.push(format!("profile `{name}` extends unknown profile `{base_name}`; ignored"));
                    continue;
                };
                let mut merged = serde_json::to_value(&base).unwrap_or_default();
                merge_json(&mut merged, &patch);
                match serde_json::from_value::<Profile>(merged) {
                    Ok(profile) => {
                        registry.profiles.insert(name, profile);
                    }
                    Err(e) => warnings
                        .push(format!("profile `{name}` in the configuration is invalid ({e}); ignored")),
                }
            }
        }
        if let Some(default) = obj.get("defaultProfile").and_then(|d| d.as_str()) {
            let default = normalize_profile_name(default);
            if registry.profiles.contains_key(&default) {
                registry.default_profile = default;
            } else {
                warnings.push(format!("default profile `{default}` does not exist; using `balanced`"));
            }
        }
        (registry, warnings)
    }

    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }

    /// The profile `name` with its name as registered, if there is one.
    pub fn entry(&self, name: &str) -> Option<(&str, &Profile)> {
        self.profiles.get_key_value(name).map(|(n, p)| (n.as_str(), p))
    }

    /// The default profile's name and settings.
    pub fn default_entry(&self) -> (&str, &Profile) {
        #[allow(clippy::expect_used)] // Held by construction: see the type's docs.
        self.entry(&self.default_profile).expect("the default profile is one of the profiles")
    }

    /// Every profile by name, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Profile)> {
        self.profiles.iter().map(|(n, p)| (n.as_str(), p))
    }

    pub fn names(&self) -> Vec<String> {
        self.profiles.keys().cloned().collect()
    }
}

/// Profile names are case-insensitive; `_` and spaces read as `-`.
pub fn normalize_profile_name(name: &str) -> String {
    name.trim().to_lowercase().replace(['_', ' '], "-")
}

/// Deep merge: objects merge key by key, everything else replaces.
fn merge_json(base: &mut serde_json::Value, patch: &serde_json::Value) {
    match (base, patch) {
        (serde_json::Value::Object(b), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                match b.get_mut(k) {
                    Some(slot) => merge_json(slot, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_exist_and_balanced_is_default() {
        let r = ProfileRegistry::default();
        assert_eq!(r.default_entry().0, "balanced");
        assert_eq!(r.names(), ["aggressive", "balanced", "conservative", "legacy"]);
        assert!(!r.get("legacy").unwrap().multi_query.enabled);
    }

    #[test]
    fn config_overrides_field_by_field_and_adds_profiles() {
        let (r, w) = ProfileRegistry::from_config(Some(
            r#"{"defaultProfile":"Docs","profiles":{
                "balanced":{"retrieval":{"topK":12}},
                "docs":{"extends":"conservative","generation":{"locale":"pt"}}}}"#,
        ));
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(r.default_entry().0, "docs");
        let b = r.get("balanced").unwrap();
        assert_eq!(b.retrieval.top_k, 12);
        assert_eq!(
            b.retrieval.top_k_per_query,
            Profile::balanced().retrieval.top_k_per_query,
            "other fields keep their defaults"
        );
        let d = r.get("docs").unwrap();
        assert_eq!(d.generation.locale, "pt");
        assert_eq!(d.retrieval.top_k, 5, "inherits conservative");
    }

    #[test]
    fn broken_config_warns_and_keeps_builtins() {
        let (r, w) = ProfileRegistry::from_config(Some("{not json"));
        assert_eq!(r, ProfileRegistry::default());
        assert_eq!(w.len(), 1);
        let (r, w) = ProfileRegistry::from_config(Some(
            r#"{"defaultProfile":"nope","profiles":{"balanced":{"retrieval":{"topKk":3}},"x":{"extends":"y"}},"extra":1}"#,
        ));
        assert_eq!(r.default_entry().0, "balanced");
        assert_eq!(r.get("balanced"), Some(&Profile::balanced()));
        assert_eq!(w.len(), 4, "{w:?}");
    }

    #[test]
    fn neighbor_strategy_spellings() {
        assert_eq!(NeighborStrategy::parse("parent-symbol"), Some(NeighborStrategy::ParentSymbol));
        assert_eq!(NeighborStrategy::parse(" Linear "), Some(NeighborStrategy::Linear));
        assert_eq!(NeighborStrategy::parse("call graph"), Some(NeighborStrategy::CallGraph));
        assert_eq!(NeighborStrategy::parse("sideways"), None);
    }
}
