//! The parameter guard: the one place where limits are enforced. It takes a profile as configured
//! and returns a [`ResolvedPlan`] whose values are all within the SLA bounds, plus one
//! [`GuardEvent`] per clamp (logged as `rag_parameter_guard {profile, field, requested, applied}`
//! and surfaced as a warning). Nothing downstream clamps again.
use serde::Serialize;
use serde_json::{json, Value};

use crate::profile::Profile;

pub const MAX_TOP_K: u32 = 40;
pub const MAX_TOP_K_PER_QUERY: u32 = 40;
pub const MAX_RERANK_TOP_N: u32 = 40;
pub const MAX_QUERIES: u32 = 6;
pub const DEFAULT_MAX_QUERIES: u32 = 3;
pub const NEIGHBOR_HARD_CAP: u32 = 400;
pub const MAX_NEIGHBOR_RADIUS: u32 = 20;
pub const MAX_HEAD_MULTIPLIER: f32 = 4.0;
pub const MIN_CONTEXT_TOKENS: u32 = 256;
pub const MAX_CONTEXT_TOKENS: u32 = 4000;
pub const MAX_HISTORY_TOKENS: u32 = 1600;
pub const MAX_CANDIDATE_MULTIPLIER: u32 = 5;
pub const MIN_CONTEXT_WINDOW_CHARS: u32 = 200;
pub const MAX_CONTEXT_WINDOW_CHARS: u32 = 8000;

/// One clamp: what the profile asked for and what applies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuardEvent {
    pub profile: String,
    pub field: String,
    pub requested: Value,
    pub applied: Value,
}

impl GuardEvent {
    pub fn warning(&self) -> String {
        format!(
            "profile `{}`: {} = {} is outside the allowed range; {} applied",
            self.profile, self.field, self.requested, self.applied
        )
    }
}

/// A profile after the guard: every value is within bounds. The search service takes only this.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedPlan {
    pub profile: String,
    pub settings: Profile,
}

impl ResolvedPlan {
    /// Head size of the code-aware step: `ceil(rerankTopN × headMultiplier)`.
    pub fn code_aware_head(&self) -> usize {
        let post = &self.settings.post_processing;
        (post.rerank_top_n as f32 * post.code_aware.head_multiplier).ceil() as usize
    }

    /// Sub-queries to run (1 when multi-query is off).
    pub fn queries(&self) -> usize {
        let mq = &self.settings.multi_query;
        if mq.enabled {
            mq.queries as usize
        } else {
            1
        }
    }

    /// Candidates each retriever fetches per sub-query.
    pub fn retriever_limit(&self) -> usize {
        let r = &self.settings.retrieval;
        (r.top_k_per_query * r.candidate_multiplier) as usize
    }
}

struct Clamp<'a> {
    profile: &'a str,
    events: Vec<GuardEvent>,
}

impl Clamp<'_> {
    fn int(&mut self, field: &str, value: &mut u32, min: u32, max: u32) {
        let applied = (*value).clamp(min, max.max(min));
        if applied != *value {
            self.push(field, json!(*value), json!(applied));
            *value = applied;
        }
    }

    fn float(&mut self, field: &str, value: &mut f32, min: f32, max: f32) {
        let applied = if value.is_finite() { value.clamp(min, max.max(min)) } else { min };
        if applied != *value {
            self.push(field, json!(*value), json!(applied));
            *value = applied;
        }
    }

    fn push(&mut self, field: &str, requested: Value, applied: Value) {
        self.events.push(GuardEvent {
            profile: self.profile.to_string(),
            field: field.to_string(),
            requested,
            applied,
        });
    }
}

/// Clamp a profile into a plan. Pure; the caller logs the events and adds their warnings.
pub fn resolve(profile_name: &str, profile: &Profile) -> (ResolvedPlan, Vec<GuardEvent>) {
    let mut s = profile.clone();
    let mut c = Clamp { profile: profile_name, events: Vec::new() };

    let r = &mut s.retrieval;
    c.int("retrieval.topK", &mut r.top_k, 1, MAX_TOP_K);
    c.int("retrieval.topKPerQuery", &mut r.top_k_per_query, 1, MAX_TOP_K_PER_QUERY);
    c.int("retrieval.candidateMultiplier", &mut r.candidate_multiplier, 1, MAX_CANDIDATE_MULTIPLIER);
    c.float("retrieval.minScore", &mut r.min_score, 0.0, 1.0);
    c.float("retrieval.minVectorSimilarity", &mut r.min_vector_similarity, -1.0, 1.0);
    c.float("retrieval.vectorWeight", &mut r.vector_weight, 0.0, 10.0);
    c.float("retrieval.keywordWeight", &mut r.keyword_weight, 0.0, 10.0);
    if r.vector_weight == 0.0 && r.keyword_weight == 0.0 {
        c.push("retrieval.keywordWeight", json!(0.0), json!(1.0));
        r.keyword_weight = 1.0;
    }
    c.float("retrieval.rrfK", &mut r.rrf_k, 1.0, 1000.0);

    let mq = &mut s.multi_query;
    c.int("multiQuery.maxQueries", &mut mq.max_queries, 1, MAX_QUERIES);
    let max_queries = mq.max_queries;
    c.int("multiQuery.queries", &mut mq.queries, 1, max_queries);

    let t = &mut s.query_transformers;
    c.int("queryTransformers.maxHistoryTokens", &mut t.max_history_tokens, 64, MAX_HISTORY_TOKENS);
    let lang = t.translate_to.trim().to_ascii_lowercase();
    if lang.len() != 2 || !lang.chars().all(|ch| ch.is_ascii_lowercase()) {
        c.push("queryTransformers.translateTo", json!(t.translate_to), json!("en"));
        t.translate_to = "en".into();
    } else {
        t.translate_to = lang;
    }

    let p = &mut s.post_processing;
    c.int("postProcessing.rerankTopN", &mut p.rerank_top_n, 1, MAX_RERANK_TOP_N);
    let ca = &mut p.code_aware;
    c.float(
        "postProcessing.codeAware.maxHeadMultiplier",
        &mut ca.max_head_multiplier,
        1.0,
        MAX_HEAD_MULTIPLIER,
    );
    let max_head = ca.max_head_multiplier;
    c.float("postProcessing.codeAware.headMultiplier", &mut ca.head_multiplier, 1.0, max_head);
    c.float(
        "postProcessing.codeAware.pathPenalty.penaltyMultiplier",
        &mut ca.path_penalty.penalty_multiplier,
        0.0,
        1.0,
    );
    c.float("postProcessing.codeAware.pathPenalty.testPenalty", &mut ca.path_penalty.test_penalty, 0.0, 1.0);
    for (kind, m) in ca.symbol_priority.iter_mut() {
        c.float(&format!("postProcessing.codeAware.symbolPriority.{kind}"), m, 0.0, 4.0);
    }
    for (lang, m) in ca.language_bonus.iter_mut() {
        c.float(&format!("postProcessing.codeAware.languageBonus.{lang}"), m, 0.0, 4.0);
    }
    let h = &mut p.heuristic;
    c.float("postProcessing.heuristic.scoreWeight", &mut h.score_weight, 0.0, 1.0);
    c.float("postProcessing.heuristic.spanWeight", &mut h.span_weight, 0.0, 1.0);
    c.int("postProcessing.heuristic.idealMinLines", &mut h.ideal_min_lines, 1, 10_000);
    let ideal_min = h.ideal_min_lines;
    c.int("postProcessing.heuristic.idealMaxLines", &mut h.ideal_max_lines, ideal_min, 10_000);
    c.float("postProcessing.crossEncoder.weight", &mut p.cross_encoder.weight, 0.0, 1.0);
    let n = &mut p.neighbor;
    c.int("postProcessing.neighbor.maxLimit", &mut n.max_limit, 0, NEIGHBOR_HARD_CAP);
    let max_limit = n.max_limit;
    c.int("postProcessing.neighbor.limit", &mut n.limit, 0, max_limit);
    c.int("postProcessing.neighbor.maxRadius", &mut n.max_radius, 0, MAX_NEIGHBOR_RADIUS);
    let max_radius = n.max_radius;
    c.int("postProcessing.neighbor.radius", &mut n.radius, 0, max_radius);
    let g = &mut p.graph_candidates;
    c.int("postProcessing.graphCandidates.seeds", &mut g.seeds, 0, 20);
    c.int("postProcessing.graphCandidates.perSeed", &mut g.per_seed, 0, 10);
    c.float("postProcessing.graphCandidates.calleeWeight", &mut g.callee_weight, 0.0, 2.0);
    c.float("postProcessing.graphCandidates.callerWeight", &mut g.caller_weight, 0.0, 2.0);
    let pc = &mut p.parent_child;
    c.int(
        "postProcessing.parentChild.contextWindowChars",
        &mut pc.context_window_chars,
        MIN_CONTEXT_WINDOW_CHARS,
        MAX_CONTEXT_WINDOW_CHARS,
    );
    c.int("postProcessing.parentChild.maxChildren", &mut pc.max_children, 1, 200);
    c.int(
        "postProcessing.maxContextTokensLimit",
        &mut p.max_context_tokens_limit,
        MIN_CONTEXT_TOKENS,
        MAX_CONTEXT_TOKENS,
    );
    let limit = p.max_context_tokens_limit;
    c.int("postProcessing.maxContextTokens", &mut p.max_context_tokens, MIN_CONTEXT_TOKENS, limit);

    (ResolvedPlan { profile: profile_name.to_string(), settings: s }, c.events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::NeighborStrategy;

    fn fields(events: &[GuardEvent]) -> Vec<&str> {
        events.iter().map(|e| e.field.as_str()).collect()
    }

    #[test]
    fn builtin_profiles_pass_untouched() {
        for (name, p) in crate::profile::ProfileRegistry::default().iter() {
            let (plan, events) = resolve(name, p);
            assert!(events.is_empty(), "{name}: {events:?}");
            assert_eq!(plan.settings, *p);
        }
    }

    #[test]
    fn every_sla_bound_is_clamped_with_an_event() {
        let mut p = Profile::balanced();
        p.retrieval.top_k = 100;
        p.retrieval.top_k_per_query = 41;
        p.post_processing.rerank_top_n = 50;
        p.multi_query.max_queries = 9;
        p.multi_query.queries = 8;
        p.post_processing.neighbor.max_limit = 1000;
        p.post_processing.neighbor.limit = 500;
        p.post_processing.code_aware.max_head_multiplier = 9.0;
        p.post_processing.code_aware.head_multiplier = 5.0;
        p.post_processing.max_context_tokens_limit = 9000;
        p.post_processing.max_context_tokens = 10;
        let (plan, events) = resolve("x", &p);
        let s = &plan.settings;
        assert_eq!(s.retrieval.top_k, 40);
        assert_eq!(s.retrieval.top_k_per_query, 40);
        assert_eq!(s.post_processing.rerank_top_n, 40);
        assert_eq!(s.multi_query.max_queries, 6);
        assert_eq!(s.multi_query.queries, 6);
        assert_eq!(s.post_processing.neighbor.max_limit, 400);
        assert_eq!(s.post_processing.neighbor.limit, 400);
        assert_eq!(s.post_processing.code_aware.max_head_multiplier, 4.0);
        assert_eq!(s.post_processing.code_aware.head_multiplier, 4.0);
        assert_eq!(s.post_processing.max_context_tokens_limit, 4000);
        assert_eq!(s.post_processing.max_context_tokens, 256);
        assert_eq!(
            fields(&events),
            [
                "retrieval.topK",
                "retrieval.topKPerQuery",
                "multiQuery.maxQueries",
                "multiQuery.queries",
                "postProcessing.rerankTopN",
                "postProcessing.codeAware.maxHeadMultiplier",
                "postProcessing.codeAware.headMultiplier",
                "postProcessing.neighbor.maxLimit",
                "postProcessing.neighbor.limit",
                "postProcessing.maxContextTokensLimit",
                "postProcessing.maxContextTokens",
            ]
        );
        assert_eq!(events[0].requested, json!(100));
        assert_eq!(events[0].applied, json!(40));
        assert!(events[0].warning().contains("retrieval.topK = 100"));
    }

    #[test]
    fn operator_ceilings_bind_before_the_hard_caps() {
        let mut p = Profile::balanced();
        p.multi_query.max_queries = 3;
        p.multi_query.queries = 5;
        p.post_processing.neighbor.max_limit = 12;
        p.post_processing.neighbor.limit = 20;
        p.post_processing.neighbor.max_radius = 2;
        p.post_processing.neighbor.radius = 4;
        p.post_processing.neighbor.strategy = NeighborStrategy::Linear;
        p.post_processing.code_aware.max_head_multiplier = 2.0;
        p.post_processing.code_aware.head_multiplier = 3.0;
        p.post_processing.max_context_tokens_limit = 3000;
        p.post_processing.max_context_tokens = 3500;
        let (plan, events) = resolve("x", &p);
        let s = &plan.settings;
        assert_eq!(s.multi_query.queries, 3);
        assert_eq!(s.post_processing.neighbor.limit, 12);
        assert_eq!(s.post_processing.neighbor.radius, 2);
        assert_eq!(s.post_processing.code_aware.head_multiplier, 2.0);
        assert_eq!(s.post_processing.max_context_tokens, 3000);
        assert_eq!(events.len(), 5);
    }

    #[test]
    fn lower_bounds_and_nonsense_values() {
        let mut p = Profile::balanced();
        p.retrieval.top_k = 0;
        p.retrieval.min_score = f32::NAN;
        p.retrieval.vector_weight = 0.0;
        p.retrieval.keyword_weight = 0.0;
        p.post_processing.code_aware.head_multiplier = 0.5;
        p.query_transformers.max_history_tokens = 5000;
        p.query_transformers.translate_to = "English".into();
        let (plan, events) = resolve("x", &p);
        let s = &plan.settings;
        assert_eq!(s.retrieval.top_k, 1);
        assert_eq!(s.retrieval.min_score, 0.0);
        assert_eq!(s.retrieval.keyword_weight, 1.0);
        assert_eq!(s.post_processing.code_aware.head_multiplier, 1.0);
        assert_eq!(s.query_transformers.max_history_tokens, 1600);
        assert_eq!(s.query_transformers.translate_to, "en");
        assert_eq!(events.len(), 6, "{events:?}");
    }

    #[test]
    fn plan_helpers() {
        let (plan, _) = resolve("balanced", &Profile::balanced());
        assert_eq!(plan.code_aware_head(), 60);
        assert_eq!(plan.queries(), 3);
        assert_eq!(plan.retriever_limit(), 60);
        let (plan, _) = resolve("legacy", &Profile::legacy());
        assert_eq!(plan.queries(), 1);
    }
}
