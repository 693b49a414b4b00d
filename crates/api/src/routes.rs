//! Requests and answers of the worker's own routes: chunking, repositories and their jobs,
//! webhooks, the caller's identity, the code-navigation views, documents and settings.
//!
//! Requests reject unknown fields. Answers list every field in their schema
//! (`additionalProperties: false`) but are read tolerantly: a client of an older version still
//! parses the answer of a newer server that added a field.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ErrorDetail;

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/// `POST /v1/chunk`: give either `content` (one file, named by `path`) or `files`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChunkRequest {
    /// Name of `content` (drives language detection). Default `input.txt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<FileInput>>,
    /// Chunking options, as the CLI and the preview take them: a `preset` plus any
    /// `ChunkConfig` field (camelCase), e.g. `{"preset":"compact","overlapLines":0}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<edgerag_core::options::ChunkOptionsSchema>")]
    pub options: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileInput {
    /// Relative path inside the repository (`a/b.rs`); `..`, absolute paths and empty segments
    /// make the file skipped with a reason.
    pub path: String,
    /// UTF-8 text.
    pub content: String,
}

/// A file of a JSON upload.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UploadFile {
    /// Relative path inside the repository (`a/b.rs`); `..`, absolute paths and empty segments
    /// make the file skipped with a reason.
    pub path: String,
    /// UTF-8 text.
    pub content: String,
    /// This file's own tags, added to the upload's `tags`. A tag is 1–64 bytes without commas,
    /// control characters or surrounding spaces; at most 20 per file, upload tags included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// `POST /v1/repos/{owner}/{name}/index`: fetch the repository's tarball from GitHub.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IndexRequest {
    /// Branch, tag or commit; the default branch when absent. Pushes to this ref re-index it.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// The secret of the repository's GitHub push webhook (`POST /v1/webhooks/github`, content
    /// type `application/json`); absent keeps the one set before. Stored, never returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub webhook_secret: Option<String>,
    /// Re-fetch the repository by itself every this many minutes (the scheduled run); absent
    /// keeps the interval set before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 43200))]
    pub sync_interval_minutes: Option<u32>,
}

/// `POST /v1/repos/{owner}/{name}/files` with `Content-Type: application/json`. (A `.tar.gz` body
/// is the other form: `Content-Type: application/gzip`, `?replace=true` optional.)
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UploadRequest {
    pub files: Vec<UploadFile>,
    /// Tags for every file of the upload (an archive upload takes them as `?tags=a,b`). Stored with
    /// each file's chunks and vectors and matched by the search's `filters.tags`; re-uploading a
    /// file with other tags re-indexes it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The upload is the whole repository: indexed files not in it are deleted.
    #[serde(default)]
    pub replace: bool,
    /// Free-form label stored with the namespace (e.g. a commit id).
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
}

/// `DELETE /v1/repos/{owner}/{name}/files`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteFilesRequest {
    pub paths: Vec<String>,
}

/// `PUT /v1/repos/{owner}/{name}/documents/{path}` with `Content-Type: application/json` (a
/// `text/plain` or `text/markdown` body is the other form: the body is the text).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PutDocumentRequest {
    /// The whole document (UTF-8; at most `MAX_FILE_BYTES`).
    pub text: String,
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

/// `GET /health`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct HealthResponse {
    /// Always `ok` when the worker answers.
    pub status: String,
    pub version: String,
    /// Whether the D1 database answered a trivial query.
    pub database: bool,
    pub embedder: Option<EmbedderView>,
    /// `vectorize` or `local` (the exact D1-backed index).
    pub vector_index: String,
}

/// `POST /v1/chunk` response: one entry per input file, in input order.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ChunkResponse {
    pub files: Vec<ChunkedFile>,
    pub chunk_count: usize,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ChunkedFile {
    pub path: String,
    pub language: String,
    pub chunks: Vec<edgerag_core::Chunk>,
    /// Set when the file could not be chunked (binary, too large); the other files still are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
}

/// A skipped input and why (`PATH_TRAVERSAL`, `ABSOLUTE_PATH`, `LINK`, `SPECIAL_FILE`,
/// `FILE_TOO_LARGE`, `BINARY_FILE`, `INVALID_UTF8`, `IGNORED_DIR`, `IGNORED_PATTERN`,
/// `INVALID_PATH`, `NOT_FOUND`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct SkippedFile {
    pub path: String,
    pub reason: String,
}

/// A file a job indexed with a warning: its chunks are searchable, but not all of it was kept
/// (`GRAPH_TOO_LARGE`: its code graph was over the D1 value budget and is not stored, so its
/// definitions and calls are not in the code graph; `PARSE_OVER_BUDGET`: its syntax tree would
/// have been over the memory budget, so it was cut by the grammar-free heuristics and has no code
/// graph).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct FileWarning {
    pub path: String,
    pub code: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct FileCounters {
    /// Files the job has to account for (all of the categories below).
    pub total: u64,
    /// Files fully processed (indexed, skipped, unchanged or deleted).
    pub done: u64,
    pub added: u64,
    pub changed: u64,
    pub unchanged: u64,
    pub deleted: u64,
    pub skipped: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ChunkCounters {
    /// Chunks produced for added/changed files.
    pub total: u64,
    pub embedded: u64,
    pub indexed: u64,
}

/// `last_error` of a job.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct JobError {
    pub code: String,
    pub message: String,
    /// `fetch`, `chunk`, `embed`, `index`, `finish` (the job's end: code graph, snapshot) or `request`.
    pub stage: String,
    pub attempt: u32,
    pub at: String,
}

/// `QUEUED → RUNNING → SUCCEEDED | FAILED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "QUEUED",
            JobStatus::Running => "RUNNING",
            JobStatus::Succeeded => "SUCCEEDED",
            JobStatus::Failed => "FAILED",
        }
    }

    pub fn parse(s: &str) -> Option<JobStatus> {
        Some(match s {
            "QUEUED" => JobStatus::Queued,
            "RUNNING" => JobStatus::Running,
            "SUCCEEDED" => JobStatus::Succeeded,
            "FAILED" => JobStatus::Failed,
            _ => return None,
        })
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, JobStatus::Succeeded | JobStatus::Failed)
    }
}

/// `GET /v1/jobs/{id}` and the `job` member of write responses.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct JobView {
    pub id: String,
    pub namespace: String,
    pub owner: String,
    pub name: String,
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    /// `github`, `upload` or `delete`.
    pub source: String,
    pub status: JobStatus,
    /// Last stage that ran: `fetch`, `chunk`, `embed`, `index`, `finish` (the job's end: the code graph and the vector snapshot, before READY), `done`.
    pub stage: Option<String>,
    /// Highest delivery attempt of any of the job's messages.
    pub attempt: u32,
    pub max_attempts: u32,
    pub queued_at: String,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    /// 0–100.
    pub progress: f64,
    /// Estimated seconds to completion while RUNNING (from the progress rate so far).
    pub eta_seconds: Option<f64>,
    pub files: FileCounters,
    pub chunks: ChunkCounters,
    /// Skip count per reason code.
    pub skipped_by_reason: std::collections::BTreeMap<String, u64>,
    /// The first skipped files with their reasons (at most 100).
    pub skipped: Vec<SkippedFile>,
    /// The first files indexed with a warning (at most 100), e.g. `GRAPH_TOO_LARGE`, `PARSE_OVER_BUDGET`.
    #[serde(default)]
    pub warnings: Vec<FileWarning>,
    pub last_error: Option<JobError>,
}

/// Response of the write endpoints that start (or join) a job.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct JobAccepted {
    pub job: JobView,
    /// True when the request joined a job that was already QUEUED or RUNNING.
    pub reused: bool,
    /// Files in the request (uploads and deletes; 0 for a GitHub fetch, which is staged later).
    pub received: u64,
    /// How this request's files were classified.
    pub staged: FileCounters,
    /// This request's skipped files.
    pub skipped: Vec<SkippedFile>,
    /// Set when this GitHub fetch could not be done by the active job (`job`, e.g. an upload):
    /// the fetch is queued and starts when that job finishes. The active job's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_after: Option<String>,
}

/// What a webhook delivery did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WebhookOutcome {
    /// A re-index job was started (`job`).
    Queued,
    /// The active fetch of the same ref (`job`) will pick the push up.
    Joined,
    /// Another job (`job`) is active: the fetch starts when it finishes.
    QueuedAfter,
    /// This `X-GitHub-Delivery` was handled before.
    Duplicate,
    /// Nothing to do (`reason`).
    Ignored,
    /// GitHub App: the installation's repositories (`repositories`) were registered and their
    /// indexing started.
    Added,
    /// GitHub App: the repositories (`repositories`) left the installation and were removed from
    /// the index.
    Removed,
}

/// `POST /v1/webhooks/github` (202 when a fetch was queued or joined, 200 otherwise).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct WebhookResponse {
    pub delivery: String,
    pub event: String,
    pub namespace: String,
    pub outcome: WebhookOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobView>,
    /// `added` / `removed`: the repositories (`owner/name`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repositories: Vec<String>,
}

/// `GET /v1/me`: who the request's bearer token is (the console shows it).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct WhoAmI {
    /// `anonymous`, `api-token`, `key`, or `user` (signed in with GitHub).
    pub kind: String,
    /// A key's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    /// A signed-in user's GitHub login.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login: Option<String>,
    /// May manage the deployment (the API token, an admin key, an admin sign-in).
    pub admin: bool,
}

/// `DELETE /v1/repos/{owner}/{name}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct DeleteRepoResponse {
    pub namespace: String,
    pub deleted: DeletedCounts,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct DeletedCounts {
    pub files: u64,
    pub chunks: u64,
    pub vectors: u64,
    pub jobs: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct EmbedderView {
    pub provider: String,
    pub model: String,
    pub dims: u32,
}

/// `GET /v1/repos/{owner}/{name}/files`: the indexed files (clients diff against it to upload
/// only what changed and delete what disappeared).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct FilesResponse {
    pub namespace: String,
    pub files: Vec<IndexedFileView>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct IndexedFileView {
    pub path: String,
    /// BLAKE3 of the file's bytes (hex).
    pub content_hash: String,
    pub size: u64,
    pub language: String,
    pub chunk_count: u64,
    /// False when the file was indexed with another chunker version or embedding model: uploading
    /// it again re-indexes it even though its bytes did not change.
    pub current: bool,
    pub updated_at: String,
    /// The tags the file was uploaded with.
    pub tags: Vec<String>,
}

/// `GET /v1/repos`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ReposResponse {
    pub repos: Vec<RepoSummary>,
}

/// `EMPTY`, `INDEXING`, `READY` or `FAILED`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct RepoSummary {
    pub namespace: String,
    pub owner: String,
    pub name: String,
    pub status: String,
    /// The last job succeeded and none is running: search sees exactly the latest content.
    pub ready: bool,
    /// Last time the namespace became READY (`null` if never): it has searchable content.
    pub ready_at: Option<String>,
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub source: Option<String>,
    pub file_count: u64,
    pub chunk_count: u64,
    pub updated_at: String,
}

/// `GET /v1/repos/{owner}/{name}/status` (MCP `repo.rag_index_status`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct RepoStatusResponse {
    pub repo: RepoSummary,
    /// The latest job's status (`null` before the first job).
    pub status: Option<JobStatus>,
    pub ready: bool,
    /// 0–100 of the latest job.
    pub progress: f64,
    pub eta_seconds: Option<f64>,
    pub attempts: u32,
    pub last_error: Option<JobError>,
    /// The latest job in full.
    pub job: Option<JobView>,
    /// Telemetry of the most recent jobs (newest first, at most 10).
    pub recent_jobs: Vec<JobView>,
    /// Model of the vectors stored for this namespace (`null` before the first index).
    pub embedder: Option<EmbedderView>,
    /// `vectorize` or `local`.
    pub vector_index: String,
    /// How the repository is kept fresh from GitHub (absent when it was never fetched from there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<GithubSyncView>,
}

/// A GitHub repository's registration (`POST .../index`). The webhook secret itself is never shown.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct GithubSyncView {
    /// The tracked ref (`null`: the default branch).
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    /// A webhook secret is set: signed pushes re-index the tracked ref.
    pub webhook: bool,
    pub sync_interval_minutes: Option<u32>,
    /// When a fetch was last asked for (API, webhook or schedule).
    pub last_sync_at: Option<String>,
    /// A fetch waiting for the active job to finish.
    pub queued_fetch: Option<QueuedFetchView>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct QueuedFetchView {
    pub after_job: String,
    /// `api`, `webhook` or `schedule`.
    pub trigger: String,
    pub requested_at: String,
}

// ---------------------------------------------------------------------------------------------
// Code navigation (the code graph and file text)
// ---------------------------------------------------------------------------------------------

/// A definition in the code graph.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct SymbolView {
    pub id: String,
    pub kind: String,
    pub name: String,
    pub fqn: String,
    pub path: String,
    pub language: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: Option<String>,
    pub doc: Option<String>,
    /// Id of the enclosing symbol (a method's class).
    pub parent: Option<String>,
    /// `ENDPOINT` only: the HTTP route as written (`/users/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// `ENDPOINT` only: `GET`, `POST`, … or `ANY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_method: Option<String>,
}

/// `GET /v1/repos/{owner}/{name}/symbols` response (ordered by path and line).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct SymbolsResponse {
    pub symbols: Vec<SymbolView>,
}

/// `GET /v1/repos/{owner}/{name}/symbols/{id}` response.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct SymbolResponse {
    pub symbol: SymbolView,
}

/// One edge found from the symbol.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ReferenceView {
    /// The symbol at the other end; absent when it is outside the index (see `dstName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<SymbolView>,
    /// The name as written, for an edge to a symbol outside the index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_name: Option<String>,
    /// Edge kind (`CALLS`, `IMPORTS`, `EXTENDS`, `IMPLEMENTS`, `REFERENCES`).
    pub kind: String,
    /// Where the edge is written (the call site, the import).
    pub path: String,
    pub line: u32,
    pub confidence: f64,
    /// 1 for a direct reference, 2 for a reference of a reference.
    pub depth: u32,
}

/// `GET /v1/repos/{owner}/{name}/symbols/{id}/references` response.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ReferencesResponse {
    pub symbol: SymbolView,
    pub references: Vec<ReferenceView>,
    /// The `offset` of the next page; absent on the last page.
    pub next_offset: Option<u32>,
}

/// `GET /v1/repos/{owner}/{name}/files/{path}/lines` response.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct FileLinesResponse {
    pub path: String,
    pub start: u32,
    pub end: u32,
    /// The lines joined with `\n` (no newline after the last one).
    pub text: String,
}

// ---------------------------------------------------------------------------------------------
// Documents (editor-written, chunked into parents and children after a debounce)
// ---------------------------------------------------------------------------------------------

/// `202` of `PUT …/documents/{path}`: stored, chunked after the debounce.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct DocumentAccepted {
    pub namespace: String,
    pub path: String,
    /// 1 for the first PUT, +1 for each later one.
    pub version: i64,
    /// BLAKE3 of the text (64 hex).
    pub content_hash: String,
    /// Always `true` here: the searchable chunks lag behind until the document is chunked.
    pub dirty: bool,
}

/// A parent of a chunked document.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct DocumentParentView {
    pub id: String,
    /// 0-based position in the document.
    pub order: i64,
    pub heading_path: Vec<String>,
    /// 1-based, inclusive.
    pub start_line: i64,
    pub end_line: i64,
    pub chars: i64,
    pub child_count: i64,
}

/// `GET …/documents/{path}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct DocumentView {
    pub namespace: String,
    pub path: String,
    pub version: i64,
    /// The searchable chunks are older than `version` (chunking pending, or failing: see
    /// `lastError`).
    pub dirty: bool,
    pub content_hash: String,
    pub last_chunked_at: Option<String>,
    /// `{code, message, at}` of the last failed chunking run; `null` once a run succeeds.
    pub last_error: Option<serde_json::Value>,
    /// How many times the document was chunked (a burst of edits inside the debounce counts once).
    pub chunk_runs: i64,
    pub parents: usize,
    /// Searchable children (chunks) of the document.
    pub children: i64,
    pub parent_list: Vec<DocumentParentView>,
    pub updated_at: String,
}

/// `DELETE …/documents/{path}`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct DeletedDocument {
    pub namespace: String,
    pub path: String,
    pub deleted: DeletedDocumentCounts,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct DeletedDocumentCounts {
    /// Children removed (rows, full-text entries and vectors).
    pub chunks: u64,
}

// ---------------------------------------------------------------------------------------------
// Repository settings
// ---------------------------------------------------------------------------------------------

/// How Markdown and plain-text files of a repository are chunked (code files always use the
/// code chunker).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ChunkingMode {
    /// Markdown sections and line windows (the default).
    #[default]
    Flat,
    /// Parents (sections, paragraph groups) and children (runs of sentences cut at semantic
    /// cliffs); search returns each parent once (two-stage retrieval).
    ParentChild,
}

impl ChunkingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkingMode::Flat => "flat",
            ChunkingMode::ParentChild => "parent-child",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "flat" => Some(ChunkingMode::Flat),
            "parent-child" => Some(ChunkingMode::ParentChild),
            _ => None,
        }
    }
}

/// `PUT /v1/repos/{owner}/{name}/settings` (applies to files indexed afterwards) and the answer
/// of `GET` / `PUT`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RepoSettings {
    /// `flat` (default) or `parent-child`.
    pub chunking: ChunkingMode,
}
