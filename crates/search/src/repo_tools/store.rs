//! The port the repository tools read through: a repository's files, their text (as chunks), its
//! code graph and the ranks computed when a job finishes. The worker implements it over D1
//! (`src/repo_tools/d1.rs`); [`super::memory::MemoryRepo`] implements it in memory, and the
//! behaviour suite ([`super::testing`]) runs the tools over both.
//!
//! The trait is `?Send` because JS futures in the worker are not `Send`.
use crate::error::PortError;

/// One indexed file.
#[derive(Debug, Clone, PartialEq)]
pub struct RepoFile {
    pub path: String,
    pub language: String,
    /// Bytes.
    pub size: u64,
    /// The last line of its last chunk (0 without chunks, or when not asked for).
    pub lines: u32,
}

/// Which files [`RepoStore::files`] lists.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileFilter<'a> {
    /// Only files under this folder (`folder/…`); every file when empty.
    pub folder: &'a str,
    /// Only files of this language.
    pub language: Option<&'a str>,
    /// Only paths `>= from`.
    pub from: &'a str,
    /// Fill [`RepoFile::lines`] (it costs a read of the files' chunks; 0 otherwise).
    pub lines: bool,
}

/// One node of the code graph.
#[derive(Debug, Clone, PartialEq)]
pub struct RepoSymbol {
    pub id: String,
    /// `FUNCTION`, `CLASS`, `MODULE`, …
    pub kind: String,
    pub name: String,
    pub fqn: String,
    pub path: String,
    /// The language the file was parsed as (`python`, `rust`, …).
    pub language: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: Option<String>,
    pub doc: Option<String>,
    /// The enclosing symbol; `None` for a file's own module node.
    pub parent: Option<String>,
    pub route: Option<String>,
    pub http_method: Option<String>,
    /// PageRank computed when the last job finished (0 before).
    pub rank: f64,
}

/// One resolved edge of the code graph that says its source uses its target (`CALLS`,
/// `REFERENCES`, `IMPORTS`, `EXTENDS`, `IMPLEMENTS`).
#[derive(Debug, Clone, PartialEq)]
pub struct RepoEdge {
    pub src: String,
    pub dst: String,
    pub kind: String,
    /// Where the use is written.
    pub path: String,
    pub line: u32,
}

/// Which end of its edges a set of symbols is, for [`RepoStore::edges_at`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeEnd {
    /// The symbols are the edges' sources (what they call, import, use).
    Source,
    /// The symbols are the edges' targets (who calls, imports, uses them).
    Target,
}

/// One edge of the code graph seen from one of its ends ([`RepoStore::edges_at`]), resolved or
/// not.
#[derive(Debug, Clone, PartialEq)]
pub struct SymbolEdge {
    /// The symbol asked about.
    pub near: String,
    /// The symbol at the other end; `None` for a target outside the index.
    pub other: Option<String>,
    /// The target's name as written.
    pub dst_name: String,
    pub kind: String,
    /// Where the edge is written.
    pub path: String,
    pub line: u32,
    pub confidence: f64,
}

/// The edges from the symbols of one file to those of another, counted (a file's edges to itself
/// are not listed).
#[derive(Debug, Clone, PartialEq)]
pub struct FileLink {
    pub src: String,
    pub dst: String,
    pub edges: u32,
}

/// One chunk's text and first line.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkText {
    pub path: String,
    pub start_line: u32,
    pub text: String,
}

/// A file and its rank (the sum of its symbols').
#[derive(Debug, Clone, PartialEq)]
pub struct FileRank {
    pub path: String,
    pub rank: f64,
}

/// What the repository tools read of one namespace. Every list is in the order documented, so two
/// implementations holding the same repository give the tools the same input.
#[async_trait::async_trait(?Send)]
pub trait RepoStore {
    /// Indexed files passing `filter`, in path order.
    async fn files(&self, namespace: &str, filter: &FileFilter<'_>) -> Result<Vec<RepoFile>, PortError>;

    /// One indexed file.
    async fn file(&self, namespace: &str, path: &str) -> Result<Option<RepoFile>, PortError>;

    /// The chunks of `paths` (symbol plans excluded) ordered by path, start line, chunk index.
    async fn chunk_texts(&self, namespace: &str, paths: &[String]) -> Result<Vec<ChunkText>, PortError>;

    /// Paths of the files with a chunk containing one of `literals` (each 3+ characters), ignoring
    /// case; may name more files than contain one, never fewer.
    async fn paths_containing(&self, namespace: &str, literals: &[String]) -> Result<Vec<String>, PortError>;

    /// Every symbol of `paths` (module nodes included) ordered by path, start line, end line
    /// descending, id.
    async fn symbols_in(&self, namespace: &str, paths: &[String]) -> Result<Vec<RepoSymbol>, PortError>;

    /// The definitions of `paths` — every symbol but modules and fields — without their `doc`
    /// (`None`), ordered by path, start line, end line descending, id.
    async fn definitions(&self, namespace: &str, paths: &[String]) -> Result<Vec<RepoSymbol>, PortError>;

    /// The symbols of these ids, ordered by path, start line, end line descending, id.
    async fn symbols_by_id(&self, namespace: &str, ids: &[String]) -> Result<Vec<RepoSymbol>, PortError>;

    /// Symbols other than modules whose name is one of `names` or whose lowercased name is one of
    /// `lowercase`, ordered by path, start line, end line descending, id.
    async fn symbols_named(
        &self,
        namespace: &str,
        names: &[String],
        lowercase: &[String],
    ) -> Result<Vec<RepoSymbol>, PortError>;

    /// Symbols (modules included) whose name or fully qualified name is `name`, of `kind` when
    /// given (as stored: upper case), ordered by path, start line, id.
    async fn symbols_by_name(
        &self,
        namespace: &str,
        name: &str,
        kind: Option<&str>,
    ) -> Result<Vec<RepoSymbol>, PortError>;

    /// The edges of `kinds` whose `end` is one of `ids`, resolved or not, ordered by that end's id,
    /// path, line, target name.
    async fn edges_at(
        &self,
        namespace: &str,
        ids: &[String],
        end: EdgeEnd,
        kinds: &[&str],
    ) -> Result<Vec<SymbolEdge>, PortError>;

    /// The last line of the chunks of `path` (symbol plans excluded); `None` when it has none.
    async fn last_line(&self, namespace: &str, path: &str) -> Result<Option<u32>, PortError>;

    /// The chunks of `path` (symbol plans excluded) holding a line of `start..=end`, ordered by
    /// start line, chunk index.
    async fn chunks_between(
        &self,
        namespace: &str,
        path: &str,
        start: u32,
        end: u32,
    ) -> Result<Vec<ChunkText>, PortError>;

    /// Every file of the code graph with its rank, ordered by path.
    async fn file_ranks(&self, namespace: &str) -> Result<Vec<FileRank>, PortError>;

    /// Resolved voting edges whose target is one of `targets`, ordered by target, path, line,
    /// source.
    async fn edges_into(&self, namespace: &str, targets: &[String]) -> Result<Vec<RepoEdge>, PortError>;

    /// The voting edges between files, counted per pair of files, ordered by source and target.
    async fn file_links(&self, namespace: &str) -> Result<Vec<FileLink>, PortError>;
}

/// Edge kinds that say their source uses their target (the ones `repo.impact` follows and PageRank
/// counts).
pub const VOTING_KINDS: [&str; 5] = ["CALLS", "REFERENCES", "IMPORTS", "EXTENDS", "IMPLEMENTS"];

/// Why a tool could not answer: a bad argument or a missing path (4xx with a stable code), or the
/// store failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    #[error("{message}")]
    Request { status: u16, code: &'static str, message: String },
    #[error(transparent)]
    Store(#[from] PortError),
}

impl ToolError {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        ToolError::Request { status: 400, code, message: message.into() }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::bad_request("INVALID_REQUEST", message)
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Self {
        ToolError::Request { status: 404, code, message: message.into() }
    }

    /// The HTTP status (500 for a store failure).
    pub fn status(&self) -> u16 {
        match self {
            ToolError::Request { status, .. } => *status,
            ToolError::Store(_) => 500,
        }
    }

    /// The stable error code.
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::Request { code, .. } => code,
            ToolError::Store(_) => "INTERNAL",
        }
    }
}

pub type ToolResult<T> = Result<T, ToolError>;
