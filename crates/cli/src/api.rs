//! The parts of the edgerag HTTP API's JSON answers the CLI reads (camelCase on the wire, as in
//! `schemas/*.schema.json`). Unknown fields are ignored; fields the CLI only displays are
//! optional so an older or newer server still renders.
use serde::Deserialize;

/// `GET /v1/repos/{owner}/{name}/files`.
#[derive(Debug, Deserialize)]
pub struct FileList {
    #[serde(default)]
    pub files: Vec<IndexedFile>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedFile {
    pub path: String,
    pub content_hash: String,
    #[serde(default)]
    pub current: bool,
}

/// The answer to an upload or a delete (`202`, job-accepted).
#[derive(Debug, Deserialize)]
pub struct JobAccepted {
    pub job: JobId,
}

#[derive(Debug, Deserialize)]
pub struct JobId {
    pub id: String,
}

/// `GET /v1/jobs/{id}` and the jobs inside a repository status.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub id: String,
    pub status: String,
    #[serde(default)]
    pub progress: f64,
    pub eta_seconds: Option<f64>,
    #[serde(default)]
    pub files: FileCounters,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub queued_at: String,
    pub last_error: Option<JobError>,
}

impl Job {
    pub fn finished(&self) -> bool {
        self.status == "SUCCEEDED" || self.status == "FAILED"
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FileCounters {
    pub total: u64,
    pub done: u64,
    pub added: u64,
    pub changed: u64,
    pub unchanged: u64,
    pub deleted: u64,
    pub skipped: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct JobError {
    pub code: String,
    pub message: String,
}

/// `GET /v1/repos/{owner}/{name}/status`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoStatus {
    pub repo: RepoSummary,
    pub ready: bool,
    #[serde(default)]
    pub progress: f64,
    #[serde(default)]
    pub attempts: u64,
    pub eta_seconds: Option<f64>,
    pub embedder: Option<Embedder>,
    #[serde(default)]
    pub vector_index: String,
    pub job: Option<Job>,
    pub last_error: Option<JobError>,
    #[serde(default)]
    pub recent_jobs: Vec<Job>,
}

#[derive(Debug, Deserialize)]
pub struct Embedder {
    pub provider: String,
    pub model: String,
    pub dims: u64,
}

/// `GET /v1/repos`.
#[derive(Debug, Deserialize)]
pub struct RepoList {
    #[serde(default)]
    pub repos: Vec<RepoSummary>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoSummary {
    pub owner: String,
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub file_count: u64,
    #[serde(default)]
    pub chunk_count: u64,
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub ready_at: Option<String>,
}

/// `POST /v1/search` and `/v1/search/global` (response v4).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    #[serde(default)]
    pub repo_owner: Option<String>,
    #[serde(default)]
    pub repo_name: Option<String>,
    #[serde(default)]
    pub profile: Option<String>,
    #[serde(default)]
    pub matches: Vec<SearchMatch>,
    pub no_results_reason: Option<String>,
    #[serde(default)]
    pub applied_modules: Vec<String>,
    #[serde(default)]
    pub warnings: Vec<String>,
    pub debug: Option<SearchDebug>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchMatch {
    pub path: String,
    #[serde(default)]
    pub start_line: u64,
    #[serde(default)]
    pub end_line: u64,
    pub symbol: Option<String>,
    #[serde(default)]
    pub language: String,
    #[serde(default)]
    pub score: f64,
    #[serde(default)]
    pub snippet: String,
    #[serde(default)]
    pub metadata: MatchMetadata,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchMetadata {
    pub repo_owner: Option<String>,
    pub repo_name: Option<String>,
    pub neighbor_of_span_hash: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchDebug {
    #[serde(default)]
    pub timings: Vec<ModuleTiming>,
    #[serde(default)]
    pub total_ms: f64,
}

#[derive(Debug, Deserialize)]
pub struct ModuleTiming {
    pub module: String,
    pub ms: f64,
}

/// The error body every 4xx/5xx carries: `{error: {code, message}}`.
#[derive(Debug, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Deserialize)]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
}
