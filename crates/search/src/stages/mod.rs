//! The stages of the read path, one module each, in the order [`crate::pipeline`] runs them. Each
//! is a plain function over plain data, unit-tested beside its code, and records itself in
//! `appliedModules`.
//!
//! | step | modules | what they do |
//! | --- | --- | --- |
//! | 1 sanitize | [`sanitize`] | raw request JSON → the tool's typed request; the scope (owner/name) |
//! | 2 profile | [`profile`] | the named bundle of settings the request asks for |
//! | 3 guard | [`guard`] | every value within its bounds → [`ResolvedPlan`](guard::ResolvedPlan) |
//! | 4 expand | [`transform`] (LLM, optional), [`evidence`] (what a long question names), [`expand`] (deterministic) | the query's rewrites and sub-queries |
//! | 5 retrieve | [`query`] (keyword terms → FTS5 `MATCH`), [`filters`] (paths, languages, tags) | what both retrievers are asked |
//! | 6 fuse | [`fusion`] (weighted RRF, minScore), [`multi_query`] (sub-queries merged) | one ranked list |
//! | 7 rerank | [`graph_candidates`], [`rerank`] (code-aware, heuristic, cross-encoder), [`parent_child`] | the head of the list reordered |
//! | 8 neighbours | [`spans`] (no lines twice), [`neighbors`] | the chunks around each match |
//! | 9 budget | [`coverage`] (more files for the same tokens), [`budget`] | what fits the context window |
//!
//! Adding a stage (template): a file here with its unit tests; a row above; its call in
//! [`crate::pipeline`] at its place in the order, recording its name in `appliedModules`; its
//! settings in [`profile`] (bounded in [`guard`]) when it has any; a store port it reads in
//! [`crate::ports`] with its in-memory implementation in [`crate::memory`] and a case in the shared
//! suite (`testing.rs`).
pub mod sanitize;

pub mod profile;

pub mod guard;

pub mod evidence;
pub mod expand;
pub mod transform;

pub mod filters;
pub mod query;

pub mod fusion;
pub mod multi_query;

pub mod graph_candidates;
pub mod parent_child;
pub mod rerank;

pub mod neighbors;
pub mod spans;

pub mod budget;
pub mod coverage;
