//! Per-node chunk plan runs: `POST /v1/repos/{owner}/{name}/plans` and
//! `GET /v1/repos/{owner}/{name}/plans/{runId}`.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `POST /v1/repos/{owner}/{name}/plans`: build one chunk plan per code-graph node.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlanRequest {
    /// `per-node` (the default, and the only strategy); anything else is 400 `UNKNOWN_STRATEGY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// Count the plans without writing anything.
    #[serde(default)]
    pub dry_run: bool,
    /// Process at most this many nodes (highest priority first). At least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_nodes: Option<u64>,
    /// Nodes per page (default 200); below 50 it is raised to 50, above 1000 lowered to 1000, with
    /// a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u32>,
    /// Only nodes of these kinds (`METHOD`, `class`, … any case). Unknown kinds are ignored with a
    /// warning; when none is known, every kind is processed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_kinds: Option<Vec<String>>,
    /// Load each page's `CALLS` edges into the plans' relations and "uses / used by" text
    /// (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_edges_relations: Option<bool>,
}

/// `QUEUED → RUNNING → READY | FAILED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PlanRunStatus {
    Queued,
    Running,
    Ready,
    Failed,
}

impl PlanRunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanRunStatus::Queued => "QUEUED",
            PlanRunStatus::Running => "RUNNING",
            PlanRunStatus::Ready => "READY",
            PlanRunStatus::Failed => "FAILED",
        }
    }

    pub fn parse(s: &str) -> Option<PlanRunStatus> {
        [PlanRunStatus::Queued, PlanRunStatus::Running, PlanRunStatus::Ready, PlanRunStatus::Failed]
            .into_iter()
            .find(|v| v.as_str() == s)
    }

    pub fn is_final(self) -> bool {
        matches!(self, PlanRunStatus::Ready | PlanRunStatus::Failed)
    }
}

/// The parameters a run applies (after defaults and clamping).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct PlanParams {
    pub dry_run: bool,
    pub batch_size: u32,
    pub limit_nodes: Option<u64>,
    /// `null`: every kind.
    pub include_kinds: Option<Vec<String>>,
    pub with_edges_relations: bool,
}

/// Why a run failed (or the last retried failure).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct PlanRunError {
    pub code: String,
    pub message: String,
    pub at: String,
}

/// A plan run's record.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct PlanRunView {
    pub id: String,
    pub owner: String,
    pub name: String,
    pub strategy: String,
    pub status: PlanRunStatus,
    pub params: PlanParams,
    /// Nodes planned so far.
    pub processed_nodes: u64,
    /// Plan chunks written (embedded and indexed).
    pub written_chunks: u64,
    /// Plans not written (a dry run counts every plan here).
    pub skipped_chunks: u64,
    /// Code plans whose `summarize` stage ran the configured generator.
    pub summarized_chunks: u64,
    /// Code plans whose `summarize` stage was skipped (no generator configured, or it failed).
    pub summarize_skipped: u64,
    /// Node pages processed.
    pub pages: u64,
    /// From the first page's start to completion (or to now while running).
    pub duration_ms: u64,
    /// Nodes per second.
    pub rate: f64,
    pub warnings: Vec<String>,
    pub last_error: Option<PlanRunError>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
}

/// `POST …/plans` (202) and `GET …/plans/{runId}` (200) response.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct PlanRunResponse {
    pub run: PlanRunView,
}
