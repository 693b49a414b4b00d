//! The search service: runs the modules in order over the ports and builds the v4 response.
//!
//! sanitizer → scope (owner/name autofill) → profile → guard → query transformers → analysis and
//! deterministic expansions → sub-queries → hybrid retrieval per sub-query (vector + BM25,
//! weighted RRF, minScore) → multi-query merge → code-aware rerank → heuristic rerank →
//! cross-encoder → parent/child → topK → neighbour expansion → context budget → response.
//!
//! [`SearchPipeline::execute`] is the core (a query + a resolved plan → ranked candidates); the
//! benchmark drives it directly with plan variants. [`SearchPipeline::run`] adds the contract
//! around it.
use std::collections::{HashMap, HashSet};

use edgerag_core::embed::Embedder;
use edgerag_core::vector::{VectorFilter, VectorIndex, VectorQuery};
use edgerag_core::ChunkType;
use futures_util::future::join_all;
use serde_json::{json, Value};

use crate::candidate::{Candidate, RetrievalTrace};
use crate::error::{PortError, SearchError};
use crate::evidence::Evidence;
use crate::expand::{analyse, deterministic_subqueries, QueryAnalysis};
use crate::filters::{FilterMatcher, SearchFilters};
use crate::fusion::{fuse_with_named, FusionParams};
use crate::guard::{resolve, ResolvedPlan, MAX_CONTEXT_WINDOW_CHARS, MIN_CONTEXT_WINDOW_CHARS};
use crate::ports::{
    ChunkKey, ChunkRecord, ChunkStore, Clock, EventSink, GenerateRequest, Generator, KeywordIndex,
    KeywordQuery, NamespaceCatalog, Reranker, ScoredKey,
};
use crate::profile::{NeighborStrategy, ProfileRegistry};
use crate::query::{fts5_expression, keyword_terms, QueryTerm, TermOptions};
use crate::request::{ParentChildInput, SearchMode, Turn};
use crate::response::{
    augmented_prompt, ranked_candidate, render_instructions, to_match, ModuleTiming, NoResultsReason,
    RankedCandidate, SearchDebug, SearchResponse, TemplateValues, MAX_RANKING,
};
use crate::sanitize::{resolve_scope, sanitize};
use crate::{
    budget, coverage, graph_candidates, multi_query, neighbors, parent_child, rerank, spans, transform,
};

/// Largest topK a vector index accepts (Vectorize's limit).
const VECTOR_TOP_K_LIMIT: usize = 100;

/// Everything the pipeline reads through. Optional ports switch their modules off.
#[derive(Clone, Copy)]
pub struct SearchServices<'a> {
    pub keyword: &'a dyn KeywordIndex,
    pub chunks: &'a dyn ChunkStore,
    pub catalog: &'a dyn NamespaceCatalog,
    pub embedder: Option<&'a dyn Embedder>,
    pub vectors: Option<&'a dyn VectorIndex>,
    pub generator: Option<&'a dyn Generator>,
    pub reranker: Option<&'a dyn Reranker>,
    pub clock: &'a dyn Clock,
    pub events: &'a dyn EventSink,
}

/// Input of [`SearchPipeline::execute`].
#[derive(Debug, Clone)]
pub struct ExecuteInput<'a> {
    pub query: &'a str,
    /// The question as it was sent (before the sanitizer's cut): what [`Evidence`] reads.
    pub question: &'a str,
    pub conversation: &'a [Turn],
    pub namespaces: Vec<String>,
    pub filters: &'a SearchFilters,
    pub plan: &'a ResolvedPlan,
    /// Keep the candidates' ranking before the topK cut ([`Outcome::ranking`]).
    pub explain: bool,
}

/// Output of [`SearchPipeline::execute`]: final candidates plus how they were made.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub candidates: Vec<Candidate>,
    /// Candidates retrieval produced before post-processing (0 ⇒ `noResults`).
    pub retrieved: usize,
    pub sub_queries: Vec<String>,
    pub keyword_query: Option<String>,
    pub applied_modules: Vec<String>,
    pub warnings: Vec<String>,
    pub rerank_applied: bool,
    pub timings: Vec<ModuleTiming>,
    /// With [`ExecuteInput::explain`]: the candidates just before the topK cut, best first.
    pub ranking: Vec<RankedCandidate>,
}

pub struct SearchPipeline<'a> {
    pub services: SearchServices<'a>,
    pub profiles: &'a ProfileRegistry,
    /// Problems found in the profile configuration, repeated in every response.
    pub config_warnings: &'a [String],
}

/// The question as post-processing sees it: its text, its analysis and the request's filters.
#[derive(Clone, Copy)]
struct Question<'a> {
    text: &'a str,
    analysis: &'a QueryAnalysis,
    matcher: &'a FilterMatcher,
    explain: bool,
}

struct Timer<'c> {
    clock: &'c dyn Clock,
    last: f64,
    start: f64,
    timings: Vec<ModuleTiming>,
}

impl<'c> Timer<'c> {
    fn new(clock: &'c dyn Clock) -> Self {
        let now = clock.now_ms();
        Timer { clock, last: now, start: now, timings: Vec::new() }
    }

    /// Close the current module's interval.
    fn lap(&mut self, module: &str) {
        let now = self.clock.now_ms();
        self.timings.push(ModuleTiming { module: module.to_string(), ms: round_ms(now - self.last) });
        self.last = now;
    }

    fn total(&self) -> f64 {
        round_ms(self.clock.now_ms() - self.start)
    }
}

fn round_ms(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

/// The request's parent/child options over the profile's; a window outside the guard's bounds
/// is clamped with a warning.
fn apply_parent_child_input(plan: &mut ResolvedPlan, input: &ParentChildInput, warnings: &mut Vec<String>) {
    let pc = &mut plan.settings.post_processing.parent_child;
    if let Some(normalize) = input.normalize_scores {
        pc.normalize_scores = normalize;
    }
    if let Some(window) = input.context_window_chars {
        let applied = window.clamp(MIN_CONTEXT_WINDOW_CHARS, MAX_CONTEXT_WINDOW_CHARS);
        if applied != window {
            warnings.push(format!(
                "parentChild.contextWindowChars {window} was clamped to {applied} \
                 ({MIN_CONTEXT_WINDOW_CHARS}..={MAX_CONTEXT_WINDOW_CHARS})"
            ));
        }
        pc.context_window_chars = applied;
    }
}

/// One sub-query's retrieval result.
struct Retrieved {
    fused: Vec<crate::fusion::Fused>,
    vector_error: Option<String>,
    keyword_error: Option<String>,
    vector_ran: bool,
    keyword_ran: bool,
    vector_ms: f64,
    keyword_ms: f64,
}

impl<'a> SearchPipeline<'a> {
    /// The full tool: raw JSON body in, v4 response out.
    pub async fn run(&self, mode: SearchMode, body: &Value) -> Result<SearchResponse, SearchError> {
        let s = &self.services;
        let mut timer = Timer::new(s.clock);
        let mut request = sanitize(mode, body, self.profiles)?;
        timer.lap("input.sanitizer");
        let catalog =
            s.catalog.list().await.map_err(|e| SearchError::BackendUnavailable { message: e.to_string() })?;
        let scope = resolve_scope(&mut request, &catalog)?;
        timer.lap("input.scope");

        let mut warnings: Vec<String> = self.config_warnings.to_vec();
        warnings.append(&mut request.warnings);
        let (mut plan, events) = resolve(&request.profile, request.settings);
        apply_parent_child_input(&mut plan, &request.parent_child, &mut warnings);
        for e in &events {
            s.events.event("rag_parameter_guard", json!({"profile": e.profile, "field": e.field, "requested": e.requested, "applied": e.applied}));
            warnings.push(e.warning());
        }
        let mut applied_modules = vec![format!("profile:{}", plan.profile)];
        if !events.is_empty() {
            applied_modules.push("guard.clamp".into());
        }
        timer.lap("guard");

        let generation = &plan.settings.generation;
        let allow_empty = request.allow_empty_context.unwrap_or(generation.allow_empty_context);
        let template =
            request.instructions_template.clone().unwrap_or_else(|| generation.instructions_template.clone());

        let mut outcome = Outcome::default();
        let no_results_reason;
        if scope.namespaces.is_empty() {
            no_results_reason = Some(NoResultsReason::IndexNotReady);
            if !allow_empty && !(mode == SearchMode::SimpleGlobal) {
                return Err(SearchError::IndexNotReady {
                    message: format!(
                        "repository {}/{} has no READY index yet",
                        scope.repo_owner, scope.repo_name
                    ),
                });
            }
            if mode == SearchMode::SimpleGlobal {
                warnings.push("no repository has been indexed yet; nothing was searched".into());
            }
        } else {
            let namespaces = scope.namespaces.iter().map(|n| n.id()).collect();
            let input = ExecuteInput {
                query: &request.raw_query,
                question: &request.question,
                conversation: &request.conversation,
                namespaces,
                filters: &request.filters,
                plan: &plan,
                explain: request.debug,
            };
            outcome = self.execute(input).await?;
            no_results_reason = outcome.candidates.is_empty().then_some(NoResultsReason::ContextNotFound);
            if outcome.candidates.is_empty() && !allow_empty {
                return Err(SearchError::ContextNotFound { profile: plan.profile.clone() });
            }
        }
        applied_modules.append(&mut outcome.applied_modules);
        warnings.append(&mut outcome.warnings);
        timer.timings.append(&mut outcome.timings);
        timer.last = s.clock.now_ms();

        let matches: Vec<_> = outcome.candidates.iter().map(|c| to_match(c, &outcome.sub_queries)).collect();
        let prompt = augmented_prompt(&request.raw_query, &matches, generation.max_snippet_lines);
        let instructions = render_instructions(
            &template,
            &TemplateValues {
                raw_query: &request.raw_query,
                repo_owner: &scope.repo_owner,
                repo_name: &scope.repo_name,
                locale: &generation.locale,
                augmented_prompt: &prompt,
            },
            &mut Vec::new(), // template warnings were already reported by the sanitizer
        );
        timer.lap("response");
        let context_missing = matches.is_empty();
        let debug = request.debug.then(|| SearchDebug {
            sub_queries: outcome.sub_queries.clone(),
            keyword_query: outcome.keyword_query.clone(),
            timings: timer.timings.clone(),
            total_ms: timer.total(),
            plan: serde_json::to_value(&plan).unwrap_or(Value::Null),
            ranking: std::mem::take(&mut outcome.ranking),
        });
        Ok(SearchResponse {
            matches,
            rerank_applied: outcome.rerank_applied,
            augmented_prompt: prompt,
            instructions,
            context_missing,
            no_results: outcome.retrieved == 0,
            no_results_reason,
            applied_modules,
            warnings,
            repo_owner: scope.repo_owner,
            repo_name: scope.repo_name,
            profile: plan.profile,
            debug,
        })
    }

    /// The retrieval and post-processing core.
    pub async fn execute(&self, input: ExecuteInput<'_>) -> Result<Outcome, SearchError> {
        let s = &self.services;
        let settings = &input.plan.settings;
        let mut out = Outcome::default();
        let mut timer = Timer::new(s.clock);

        // Pre-retrieval: LLM transformers, then the deterministic analysis.
        let transformed =
            transform::transform(input.query, input.conversation, &settings.query_transformers, s.generator)
                .await;
        out.applied_modules.extend(transformed.applied.iter().cloned());
        out.warnings.extend(transformed.warnings.iter().cloned());
        let query = transformed.query;
        timer.lap("query.transformers");

        let mut analysis = analyse(&query, &input.filters.languages);
        let term_options = TermOptions {
            split_identifiers: settings.retrieval.keyword_identifier_split,
            stem_prefixes: settings.retrieval.keyword_stemming,
        };
        // A long question (an issue report, a pasted error) is read for what it points at: its
        // title says what it asks (tests? docs?), the files it names are searched on their own and
        // its keyword terms start with its evidence. A short one is searched as written. An LLM
        // rewrite already condensed the question: its evidence is not read again.
        let evidence = if transformed.applied.is_empty() {
            Evidence::read(input.question, term_options)
        } else {
            Evidence::default()
        };
        if evidence.long {
            let lead = analyse(&evidence.lead, &input.filters.languages);
            analysis.wants_tests = lead.wants_tests;
            analysis.wants_docs = lead.wants_docs;
            analysis.path_hints = evidence.files.clone();
            out.applied_modules.push("query.evidence".into());
        }
        if term_options.split_identifiers && crate::expand::split_identifiers_form(&query).is_some() {
            out.applied_modules.push("query.identifier-split".into());
        }
        if !analysis.path_hints.is_empty() {
            out.applied_modules.push("query.path-hints".into());
        }

        // Sub-queries.
        let mut sub_queries = vec![query.clone()];
        // Paraphrases from a text model get their own vector search; deterministic variants are
        // lexical (identifier spellings, content words) and embed almost like the query, so they
        // share its vector results and only run BM25 (one vector scan per request, not three).
        let mut semantic_subqueries = false;
        let wanted = input.plan.queries();
        if wanted > 1 {
            let extra = match s.generator {
                Some(g) => {
                    let (system, prompt) = multi_query::llm_prompt(&query, wanted - 1);
                    match g
                        .generate(&GenerateRequest { system, prompt, max_tokens: 300, temperature: 0.3 })
                        .await
                    {
                        Ok(reply) => {
                            semantic_subqueries = true;
                            multi_query::parse_llm_reply(&reply, &query, wanted - 1)
                        }
                        Err(e) => {
                            out.warnings.push(format!(
                                "multi-query generation failed ({e}); deterministic expansions were used"
                            ));
                            deterministic_subqueries(&query, wanted)
                        }
                    }
                }
                None => deterministic_subqueries(&query, wanted),
            };
            sub_queries.extend(extra);
        }
        // Each sub-query's keyword terms, the query's first.
        let mut subs: Vec<(String, Vec<QueryTerm>)> = sub_queries
            .into_iter()
            .enumerate()
            .map(|(i, sq)| {
                let terms = if i == 0 && evidence.long {
                    keyword_terms(&evidence.keyword_text(&sq), term_options)
                } else {
                    keyword_terms(&sq, term_options)
                };
                (sq, terms)
            })
            .collect();
        // A deterministic variant only runs BM25 (it shares the query's vector results). One whose
        // keyword terms are some of the query's own — the identifier-split form, when the query's
        // terms already hold the parts — could only rank the same matches while ignoring the
        // others, at the price of a whole keyword search: it is not run. (A variant with exactly
        // the query's terms costs nothing: it shares the query's search.)
        if !semantic_subqueries {
            let own = subs[0].1.clone();
            let mut first = true;
            subs.retain(|(_, terms)| {
                std::mem::take(&mut first)
                    || terms.len() >= own.len()
                    || terms.iter().any(|t| !own.contains(t))
            });
        }
        let (sub_queries, terms): (Vec<String>, Vec<Vec<QueryTerm>>) = subs.into_iter().unzip();
        out.keyword_query = fts5_expression(&terms[0]);
        timer.lap("query.expansion");

        // Query vectors, all sub-queries in one call.
        let vector_ports = match (s.embedder, s.vectors) {
            (Some(e), Some(v)) if settings.retrieval.vector_weight > 0.0 => Some((e, v)),
            _ => None,
        };
        let mut query_vectors: Option<Vec<Vec<f32>>> = None;
        let to_embed: &[String] = if semantic_subqueries { &sub_queries } else { &sub_queries[..1] };
        if let Some((embedder, _)) = vector_ports {
            match embedder.embed(to_embed).await {
                Ok(v) if v.len() == to_embed.len() => query_vectors = Some(v),
                Ok(v) => out.warnings.push(format!(
                    "vector retrieval skipped: the embedder returned {} vectors for {} queries",
                    v.len(),
                    to_embed.len()
                )),
                Err(e) => {
                    out.warnings.push(format!("vector retrieval skipped: embedding the query failed ({e})"))
                }
            }
        } else if settings.retrieval.vector_weight > 0.0 {
            out.warnings.push("vector retrieval skipped: no embedder / vector index is configured".into());
        }
        timer.lap("retrieval.embed");

        // Retrieval per sub-query, concurrently.
        let fusion = FusionParams {
            vector_weight: settings.retrieval.vector_weight,
            keyword_weight: settings.retrieval.keyword_weight,
            k: settings.retrieval.rrf_k,
        };
        let limit = input.plan.retriever_limit();
        let vectors: Vec<&[f32]> = query_vectors.iter().flatten().map(Vec::as_slice).collect();
        let vector_searches = async {
            match vector_ports {
                Some((_, index)) => self.vector_search(&vectors, index, &input, limit).await,
                None => Vec::new(),
            }
        };
        // Sub-queries often reduce to the same keyword terms (the content-words variant drops
        // only stopwords, which the terms drop too): each distinct term list is searched once.
        // Every keyword statement ranks all of its matches, so a repeat costs as much as the first.
        let mut distinct: Vec<&Vec<QueryTerm>> = Vec::new();
        let slots: Vec<usize> = terms
            .iter()
            .map(|t| {
                distinct.iter().position(|d| *d == t).unwrap_or_else(|| {
                    distinct.push(t);
                    distinct.len() - 1
                })
            })
            .collect();
        let keyword_searches = self.keyword_search(&distinct, &input, limit);
        // The files a long question names, searched with its terms on their own (not when the
        // request filters paths itself: the two would have to hold at once).
        let named_search = async {
            let run = evidence.long
                && !evidence.files.is_empty()
                && input.filters.paths.is_empty()
                && settings.retrieval.keyword_weight > 0.0;
            if !run {
                return None;
            }
            let query = KeywordQuery {
                namespaces: input.namespaces.clone(),
                terms: terms[0].clone(),
                filters: SearchFilters { paths: evidence.file_globs(), ..input.filters.clone() },
                limit,
            };
            Some(s.keyword.search(&query).await)
        };
        let ((vector_results, distinct_keyword_results), named_results) = futures_util::future::join(
            futures_util::future::join(vector_searches, keyword_searches),
            named_search,
        )
        .await;
        let named_hits: Option<Vec<ScoredKey>> = match named_results {
            Some(Ok(hits)) => {
                out.applied_modules.push("retrieval.named-files".into());
                Some(hits)
            }
            Some(Err(e)) => {
                out.warnings.push(format!("the named files' search failed ({e}); skipped"));
                None
            }
            None => None,
        };
        let keyword_results: Vec<_> = slots.iter().map(|&i| distinct_keyword_results[i].clone()).collect();
        let retrievals: Vec<Retrieved> = keyword_results
            .into_iter()
            .enumerate()
            .map(|(i, k)| {
                let v = vector_results.get(if semantic_subqueries { i } else { 0 }).cloned();
                let named = if i == 0 { named_hits.as_deref() } else { None };
                self.fuse_one(v, k, named, &input, fusion)
            })
            .collect();
        let vector_ms = retrievals.iter().map(|r| r.vector_ms).fold(0.0, f64::max);
        let keyword_ms = retrievals.iter().map(|r| r.keyword_ms).fold(0.0, f64::max);
        timer.lap("retrieval.search");
        timer.timings.push(ModuleTiming { module: "retrieval.vector".into(), ms: round_ms(vector_ms) });
        timer.timings.push(ModuleTiming { module: "retrieval.bm25".into(), ms: round_ms(keyword_ms) });

        let vector_ran = retrievals.iter().any(|r| r.vector_ran);
        let keyword_ran = retrievals.iter().any(|r| r.keyword_ran);
        let mut errors: Vec<String> = Vec::new();
        for r in &retrievals {
            for e in [&r.vector_error, &r.keyword_error].into_iter().flatten() {
                if !errors.contains(e) {
                    errors.push(e.clone());
                }
            }
        }
        if !vector_ran && !keyword_ran && !errors.is_empty() {
            return Err(SearchError::BackendUnavailable { message: errors.join("; ") });
        }
        out.warnings.extend(errors);
        if vector_ran {
            out.applied_modules.push("retrieval.vector".into());
        }
        if keyword_ran {
            out.applied_modules.push("retrieval.bm25".into());
        }
        if vector_ran && keyword_ran {
            out.applied_modules.push("retrieval.hybrid-rrf".into());
        }
        if sub_queries.len() > 1 {
            out.applied_modules.push("retrieval.multi-query".into());
        }
        if settings.retrieval.min_score > 0.0 {
            out.applied_modules.push("retrieval.min-score".into());
        }

        // Chunk bodies for the fused hits each list can keep: a list keeps its first
        // `top_k_per_query` hits that have a row and pass the exact filters, so the rows of its
        // first hits are read, and more of them only while a list is short (the stores push the
        // filters down, so it seldom is). One lookup per round, usually one round.
        let matcher = input.filters.matcher();
        let per_query = settings.retrieval.top_k_per_query as usize;
        let further = &settings.post_processing.further_files;
        let depth = if further.files > 0 { further.depth as usize } else { 0 };
        let wanted = per_query + depth;
        let mut by_key: HashMap<ChunkKey, ChunkRecord> = HashMap::new();
        let mut read: HashSet<ChunkKey> = HashSet::new();
        loop {
            let mut next: Vec<ChunkKey> = Vec::new();
            for r in &retrievals {
                let (mut kept, mut pending) = (0, 0);
                for f in &r.fused {
                    if kept + pending >= wanted {
                        break;
                    }
                    if !read.contains(&f.key) {
                        pending += 1;
                        if !next.contains(&f.key) {
                            next.push(f.key.clone());
                        }
                    } else if by_key
                        .get(&f.key)
                        .is_some_and(|c| matcher.matches(&c.chunk.path, c.chunk.language, &c.tags))
                    {
                        kept += 1;
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            let records = s
                .chunks
                .get(&next)
                .await
                .map_err(|e| SearchError::BackendUnavailable { message: e.to_string() })?;
            read.extend(next);
            by_key.extend(records.into_iter().map(|r| (ChunkKey::new(&r.namespace, &r.chunk.id), r)));
        }
        let lists: Vec<Vec<Candidate>> = retrievals
            .into_iter()
            .map(|r| {
                r.fused
                    .into_iter()
                    .filter_map(|f| {
                        let record = by_key.get(&f.key)?;
                        // Exact filters again: the stores push down what they can.
                        if !matcher.matches(&record.chunk.path, record.chunk.language, &record.tags) {
                            return None;
                        }
                        let mut c = Candidate::new(record.clone(), f.score);
                        c.trace = RetrievalTrace {
                            vector_rank: f.vector_rank,
                            vector_score: f.vector_score,
                            keyword_rank: f.keyword_rank,
                            keyword_score: f.keyword_score,
                            fused_score: f.score,
                        };
                        Some(c)
                    })
                    .take(wanted)
                    .collect()
            })
            .collect();
        timer.lap("retrieval.fetch");

        // Each list's first `topKPerQuery` hits are the candidates; the hits after them only
        // look for further files.
        let (heads, tails): (Vec<Vec<Candidate>>, Vec<Vec<Candidate>>) = lists
            .into_iter()
            .map(|mut list| {
                let tail = list.split_off(list.len().min(per_query));
                (list, tail)
            })
            .unzip();
        let mut candidates = multi_query::merge(heads);
        out.retrieved = candidates.len();
        let found: HashSet<&str> = candidates.iter().map(|c| c.record.chunk.text_hash.as_str()).collect();
        let deeper: Vec<Candidate> = multi_query::merge(tails)
            .into_iter()
            .filter(|c| !found.contains(c.record.chunk.text_hash.as_str()))
            .collect();
        timer.lap("retrieval.merge");

        let question =
            Question { text: &query, analysis: &analysis, matcher: &matcher, explain: input.explain };
        self.post_process(&mut candidates, deeper, &question, input.plan, &mut out, &mut timer).await;
        out.sub_queries = sub_queries;
        out.candidates = candidates;
        out.timings = timer.timings;
        Ok(out)
    }

    /// The vector queries (one per sub-query) across the namespaces, all of a namespace's queries in
    /// one call: per query, hits best first, an error note, milliseconds (of the whole call).
    async fn vector_search(
        &self,
        vectors: &[&[f32]],
        index: &dyn VectorIndex,
        input: &ExecuteInput<'_>,
        limit: usize,
    ) -> Vec<(Vec<ScoredKey>, Option<String>, f64)> {
        let s = &self.services;
        let settings = &input.plan.settings.retrieval;
        let t0 = s.clock.now_ms();
        let filter = VectorFilter {
            languages: input.filters.languages.iter().map(|l| l.as_str().to_string()).collect(),
            path_prefix: input.filters.path_prefix(),
            tag: (input.filters.tags.len() == 1).then(|| input.filters.tags[0].clone()),
            path_globs: input.filters.paths.clone(),
        };
        // An index that cannot apply path globs (Vectorize) takes only their literal prefix: its
        // hits are checked against the globs here, before they are ranked, and twice as many are
        // asked for.
        let matcher = input.filters.matcher();
        let globs = !input.filters.paths.is_empty() && !index.applies_path_globs();
        let top_k = if globs { limit.saturating_mul(2) } else { limit };
        let queries: Vec<VectorQuery> = vectors
            .iter()
            .map(|values| VectorQuery {
                vector: values.to_vec(),
                top_k: top_k.clamp(1, VECTOR_TOP_K_LIMIT),
                filter: filter.clone(),
            })
            .collect();
        let per_namespace = join_all(input.namespaces.iter().map(|ns| index.query_many(ns, &queries))).await;
        let ms = s.clock.now_ms() - t0;
        let mut out: Vec<(Vec<ScoredKey>, Option<String>, f64)> =
            queries.iter().map(|_| (Vec::new(), None, ms)).collect();
        for (ns, results) in input.namespaces.iter().zip(per_namespace) {
            for ((hits, error, _), r) in out.iter_mut().zip(results) {
                match r {
                    Ok(matches) => hits.extend(
                        matches
                            .into_iter()
                            .filter(|m| m.score >= settings.min_vector_similarity)
                            .filter(|m| !globs || matcher.matches_path(&m.metadata.path))
                            .take(limit)
                            .map(|m| ScoredKey { key: ChunkKey::new(ns, m.id), score: m.score }),
                    ),
                    Err(e) => {
                        *error = Some(format!("vector search failed in {ns} ({e}); keyword results only"))
                    }
                }
            }
        }
        for (hits, _, _) in &mut out {
            hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
            hits.truncate(limit);
        }
        out
    }

    /// BM25 for each distinct term list of the sub-queries, all in one call to the index (each
    /// result timed as the whole call); `None`s when the profile gives keywords no weight.
    async fn keyword_search(
        &self,
        term_lists: &[&Vec<QueryTerm>],
        input: &ExecuteInput<'_>,
        limit: usize,
    ) -> Vec<Option<(Result<Vec<ScoredKey>, PortError>, f64)>> {
        let s = &self.services;
        if input.plan.settings.retrieval.keyword_weight <= 0.0 {
            return term_lists.iter().map(|_| None).collect();
        }
        let t0 = s.clock.now_ms();
        let queries: Vec<KeywordQuery> = term_lists
            .iter()
            .map(|terms| KeywordQuery {
                namespaces: input.namespaces.clone(),
                terms: terms.to_vec(),
                filters: input.filters.clone(),
                limit,
            })
            .collect();
        // All sub-queries in one call: the index may share work between them.
        let results = s.keyword.search_many(&queries).await;
        let ms = s.clock.now_ms() - t0;
        results.into_iter().map(|r| Some((r, ms))).collect()
    }

    /// Fuse one sub-query's retriever results (weighted RRF, then `minScore`).
    fn fuse_one(
        &self,
        v: Option<(Vec<ScoredKey>, Option<String>, f64)>,
        k: Option<(Result<Vec<ScoredKey>, PortError>, f64)>,
        named: Option<&[ScoredKey]>,
        input: &ExecuteInput<'_>,
        fusion: FusionParams,
    ) -> Retrieved {
        let settings = &input.plan.settings.retrieval;
        let mut out = Retrieved {
            fused: Vec::new(),
            vector_error: None,
            keyword_error: None,
            vector_ran: false,
            keyword_ran: false,
            vector_ms: 0.0,
            keyword_ms: 0.0,
        };
        let vector_hits = v.map(|(hits, error, ms)| {
            out.vector_ms = ms;
            out.vector_ran = error.is_none() || !hits.is_empty();
            out.vector_error = error;
            hits
        });
        let keyword_hits = k.and_then(|(r, ms)| {
            out.keyword_ms = ms;
            match r {
                Ok(h) => {
                    out.keyword_ran = true;
                    Some(h)
                }
                Err(e) => {
                    out.keyword_error = Some(format!("keyword search failed ({e}); vector results only"));
                    None
                }
            }
        });
        let vector_hits = vector_hits.filter(|_| out.vector_ran);
        out.fused = fuse_with_named(vector_hits.as_deref(), keyword_hits.as_deref(), named, fusion);
        if settings.min_score > 0.0 {
            out.fused.retain(|f| f.score >= settings.min_score);
        }
        out
    }

    /// Callees and callers of the strongest candidates join the candidates
    /// ([`graph_candidates`]): two store round trips, none when no seed has a graph node.
    async fn graph_candidates(
        &self,
        candidates: &mut Vec<Candidate>,
        analysis: &QueryAnalysis,
        matcher: &FilterMatcher,
        plan: &ResolvedPlan,
        out: &mut Outcome,
    ) {
        let s = &self.services;
        let post = &plan.settings.post_processing;
        let settings = &post.graph_candidates;
        let ask = graph_candidates::ask(candidates, settings);
        if ask.queries.is_empty() {
            return;
        }
        let fetched =
            match s.chunks.graph_links(&ask.namespaces, &ask.queries, settings.per_seed as usize).await {
                Ok(links) => {
                    let points = ask.points(&links);
                    if points.is_empty() {
                        return;
                    }
                    s.chunks.chunks_at(&points).await.map(|records| (links, records))
                }
                Err(e) => Err(e),
            };
        match fetched {
            Ok((links, records)) => {
                let found = graph_candidates::Found { ask: &ask, links: &links, fetched: &records };
                let added = graph_candidates::add(
                    candidates,
                    found,
                    settings,
                    plan.settings.retrieval.top_k as usize,
                    |c| rerank::code_aware_multiplier(c, &post.code_aware, analysis),
                    |r| matcher.matches(&r.chunk.path, r.chunk.language, &r.tags),
                );
                if added > 0 {
                    out.applied_modules.push("post.graph-candidates".into());
                }
            }
            Err(e) => out.warnings.push(format!("code graph lookup failed ({e}); graph candidates skipped")),
        }
    }

    /// `deeper`: hits past each sub-query's candidates, read only to find further files.
    async fn post_process(
        &self,
        candidates: &mut Vec<Candidate>,
        deeper: Vec<Candidate>,
        question: &Question<'_>,
        plan: &ResolvedPlan,
        out: &mut Outcome,
        timer: &mut Timer<'_>,
    ) {
        let Question { text: query, analysis, matcher, explain } = *question;
        let s = &self.services;
        let post = &plan.settings.post_processing;
        if candidates.is_empty() {
            return;
        }
        if post.code_aware.enabled {
            out.rerank_applied |=
                rerank::code_aware(candidates, plan.code_aware_head(), &post.code_aware, analysis);
            out.applied_modules.push("post.code-aware".into());
            timer.lap("post.code-aware");
        }
        if post.heuristic.enabled {
            out.rerank_applied |= rerank::heuristic(candidates, post.rerank_top_n as usize, &post.heuristic);
            out.applied_modules.push("post.heuristic-rerank".into());
            timer.lap("post.heuristic-rerank");
        }
        if post.cross_encoder.enabled {
            if let Some(reranker) = s.reranker {
                let n = (post.rerank_top_n as usize).min(candidates.len());
                let docs: Vec<String> = candidates[..n].iter().map(|c| c.text().to_string()).collect();
                match reranker.rerank(query, &docs).await {
                    Ok(scores) if scores.len() == n => {
                        out.rerank_applied |= rerank::apply_cross_encoder_scores(
                            candidates,
                            &scores,
                            post.cross_encoder.weight,
                        );
                        out.applied_modules.push("post.cross-encoder".into());
                    }
                    Ok(scores) => out.warnings.push(format!(
                        "cross-encoder rerank skipped: {} scores for {n} documents",
                        scores.len()
                    )),
                    Err(e) => out.warnings.push(format!("cross-encoder rerank failed ({e}); skipped")),
                }
                timer.lap("post.cross-encoder");
            }
        }
        let graph = &post.graph_candidates;
        if graph.seeds > 0 && graph.per_seed > 0 {
            self.graph_candidates(candidates, analysis, matcher, plan, out).await;
            timer.lap("post.graph-candidates");
        }
        if post.parent_child.enabled {
            let window = post.parent_child.context_window_chars as usize;
            let families = parent_child::families(candidates);
            let fetched = if families.is_empty() {
                Ok(Vec::new())
            } else {
                s.chunks.families(&families, post.parent_child.max_children as usize).await
            };
            match fetched {
                Ok(fetched) => {
                    let (merged, _) =
                        parent_child::apply(std::mem::take(candidates), &fetched, false, window);
                    *candidates = merged;
                    out.applied_modules.push("post.parent-child".into());
                }
                Err(e) => out.warnings.push(format!(
                    "parent/child retrieval failed ({e}); document-level results were returned"
                )),
            }
            // Documents chunked into parents and children: the children were searched, their
            // parents are returned. Only prose chunks can be children: code costs no lookup.
            let keys: Vec<ChunkKey> = candidates
                .iter()
                .filter(|c| {
                    c.snippet.is_none()
                        && matches!(
                            c.record.chunk.chunk_type,
                            ChunkType::MarkdownSection | ChunkType::TextBlock
                        )
                })
                .map(|c| c.key())
                .collect();
            let prose = if keys.is_empty() { Ok(Vec::new()) } else { s.chunks.prose_families(&keys).await };
            let prose = prose.map_err(|e| e.to_string()).and_then(|families| {
                if families.is_empty() {
                    return Ok(false);
                }
                parent_child::prose::apply(candidates, &families, window)
                    .map(|_| true)
                    .map_err(|e| e.to_string())
            });
            match prose {
                Ok(true) => out.applied_modules.push("post.parent-child:prose".into()),
                Ok(false) => {}
                Err(e) => out.warnings.push(format!(
                    "PARENT_STAGE_FAILED: two-stage retrieval failed ({e}); the matched children were returned \
                     without their parents"
                )),
            }
            if post.parent_child.normalize_scores && !candidates.is_empty() {
                let sizes: Vec<usize> = candidates.iter().map(|c| c.text().chars().count()).collect();
                parent_child::normalize_scores(candidates.iter_mut().map(|c| &mut c.score).zip(sizes));
                crate::candidate::sort_by_score(candidates);
            }
            timer.lap("post.parent-child");
        }
        // No two matches of one answer hold the same lines: overlapping and adjacent matches of a
        // file are merged before the topK cut, so a repeat frees its slot for another match.
        if spans::merge(candidates, spans::Reach::Adjacent) > 0 {
            out.applied_modules.push("post.merge-spans".into());
        }
        timer.lap("post.merge-spans");
        if explain {
            out.ranking = candidates.iter().take(MAX_RANKING).map(ranked_candidate).collect();
        }
        let top_k = plan.settings.retrieval.top_k as usize;
        let mut rest = if post.further_files.files > 0 && candidates.len() > top_k {
            candidates.split_off(top_k)
        } else {
            Vec::new()
        };
        if post.further_files.files > 0 {
            rest.extend(deeper);
        }
        candidates.truncate(top_k);

        // The code graph of the matches: their callees and callers name `uses` / `usedBy`, and
        // lead `CALL_GRAPH` to its neighbours. One store round trip; matches without a graph
        // node (text, Markdown) ask nothing.
        let strategy = post.neighbor.strategy;
        let radius = post.neighbor.radius;
        let ask = neighbors::graph_ask(candidates);
        let mut links = None;
        if !ask.queries.is_empty() || strategy == NeighborStrategy::CallGraph {
            let per_query = neighbors::LINK_NAMES.max(2 * radius as usize);
            match s.chunks.graph_links(&ask.namespaces, &ask.queries, per_query).await {
                Ok(l) => {
                    neighbors::annotate(candidates, &ask, &l);
                    links = Some(l);
                }
                Err(e) => out.warnings.push(format!("code graph lookup failed ({e}); uses/usedBy omitted")),
            }
            timer.lap("post.code-graph");
        }
        if strategy != NeighborStrategy::Off && post.neighbor.limit > 0 {
            let call_graph = match (strategy, &links) {
                (NeighborStrategy::CallGraph, Some(links)) => {
                    let plan = neighbors::call_graph_plan(candidates, &ask, links);
                    for ns in &plan.without_graph {
                        out.warnings.push(format!(
                            "neighbor strategy CALL_GRAPH: {ns} has no code graph; LINEAR was used for its matches"
                        ));
                    }
                    Some((links, plan))
                }
                (NeighborStrategy::CallGraph, None) => {
                    out.warnings.push(
                        "neighbor strategy CALL_GRAPH: the code graph is unavailable; LINEAR was used".into(),
                    );
                    None
                }
                _ => None,
            };
            let lookups = match &call_graph {
                Some((_, plan)) => {
                    let linear: Vec<Candidate> = candidates
                        .iter()
                        .zip(&plan.follow)
                        .filter(|(_, follow)| !**follow)
                        .map(|(c, _)| c.clone())
                        .collect();
                    neighbors::lookups(&linear, NeighborStrategy::Linear, radius)
                }
                None if strategy == NeighborStrategy::CallGraph => {
                    neighbors::lookups(candidates, NeighborStrategy::Linear, radius)
                }
                None => neighbors::lookups(candidates, strategy, radius),
            };
            let mut fetched = Vec::new();
            let mut at = Vec::new();
            let mut failed = false;
            if !lookups.ranges.is_empty() {
                match s.chunks.neighbors(&lookups.ranges).await {
                    Ok(r) => fetched.extend(r),
                    Err(e) => {
                        failed = true;
                        out.warnings.push(format!("neighbor expansion failed ({e}); skipped"));
                    }
                }
            }
            if !lookups.families.is_empty() && !failed {
                match s.chunks.families(&lookups.families, post.neighbor.limit as usize + 1).await {
                    Ok(r) => fetched.extend(r),
                    Err(e) => {
                        failed = true;
                        out.warnings.push(format!("neighbor expansion failed ({e}); skipped"));
                    }
                }
            }
            if let Some((_, plan)) = &call_graph {
                if !plan.points.is_empty() && !failed {
                    match s.chunks.chunks_at(&plan.points).await {
                        Ok(r) => at = r,
                        Err(e) => {
                            failed = true;
                            out.warnings.push(format!("neighbor expansion failed ({e}); skipped"));
                        }
                    }
                }
            }
            if !failed {
                let limit = post.neighbor.limit as usize;
                let (expanded, ran) = match &call_graph {
                    Some((links, plan)) => (
                        neighbors::insert_call_graph(
                            std::mem::take(candidates),
                            (&fetched, &at),
                            &ask,
                            links,
                            plan,
                            radius,
                            limit,
                        )
                        .0,
                        NeighborStrategy::CallGraph,
                    ),
                    None => {
                        let ran = if strategy == NeighborStrategy::CallGraph {
                            NeighborStrategy::Linear
                        } else {
                            strategy
                        };
                        (neighbors::insert(std::mem::take(candidates), &fetched, ran, radius, limit).0, ran)
                    }
                };
                *candidates = expanded;
                out.applied_modules.push(format!("post.neighbor-expand:{}", ran.as_str()));
            }
            timer.lap("post.neighbor-expand");
        }

        // Neighbours can reach a match's lines, or each other's.
        if spans::merge(candidates, spans::Reach::Overlap) > 0
            && !out.applied_modules.iter().any(|m| m == "post.merge-spans")
        {
            out.applied_modules.push("post.merge-spans".into());
        }
        // No single match takes more than half the budget: a larger one is cut to the lines the
        // question points at.
        let focus_terms = keyword_terms(query, TermOptions::default());
        for c in candidates.iter_mut() {
            if c.tokens() > post.max_context_tokens / 2 {
                *c = coverage::cut_to_tokens(c, post.max_context_tokens / 2, &focus_terms);
            }
        }
        let further = coverage::further_files(
            candidates,
            &rest,
            post.further_files.files as usize,
            post.further_files.lines,
        );
        // The further files' tokens are set aside first (at most half the budget), so the matches
        // cannot crowd them all out.
        let reserve = further.iter().map(|c| c.tokens()).sum::<u32>().min(post.max_context_tokens / 2);
        let (mut kept, dropped) =
            budget::split(std::mem::take(candidates), post.max_context_tokens.saturating_sub(reserve));
        // A neighbour the budget kept that touches its match is read with it, as one span at the
        // match's place (after the budget: neighbours are still the first to go when it is short).
        spans::merge(&mut kept, spans::Reach::Consecutive);
        // A match the budget had no room for still names its file: it leads the further files, in
        // its place in the ranking, as a few lines.
        let mut dropped: Vec<Candidate> = dropped.into_iter().filter(|c| c.neighbor_of.is_none()).collect();
        let further = if dropped.is_empty() {
            further
        } else {
            dropped.extend(rest);
            coverage::further_files(
                &kept,
                &dropped,
                post.further_files.files as usize,
                post.further_files.lines,
            )
        };
        if !further.is_empty() {
            let used: u32 = kept.iter().map(|c| c.tokens()).sum();
            let (more, _) = budget::apply_after(further, post.max_context_tokens.saturating_sub(used));
            if !more.is_empty() {
                out.applied_modules.push("post.further-files".into());
            }
            // Direct matches first, then the further files, then the neighbours of the matches.
            let at = kept.iter().position(|c| c.neighbor_of.is_some()).unwrap_or(kept.len());
            kept.splice(at..at, more);
        }
        if post.code_aware.enabled && post.code_aware.code_first {
            let direct = kept.iter().position(|c| c.neighbor_of.is_some()).unwrap_or(kept.len());
            if rerank::code_first(&mut kept, direct, analysis) {
                out.applied_modules.push("post.code-first".into());
            }
        }
        *candidates = kept;
        out.applied_modules.push("post.context-budget".into());
        timer.lap("post.context-budget");
    }
}
