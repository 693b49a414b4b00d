//! Staging a job's files in D1: classify each input against what the namespace already holds
//! (added / changed / unchanged by content hash + index key; skipped with a reason; deleted), write
//! the rows in bounded batches, and collect the rows the pipeline must process.
//!
//! What the namespace holds is looked up per batch of inputs, only for their paths (one
//! statement per batch), never as a map of every indexed file: the inputs wait, in order, until a
//! batch is full ([`LOOKUP_ROWS`] inputs or [`LOOKUP_BYTES`] of file bodies) or the input ends,
//! and are then classified in that order exactly as one by one.
use std::collections::{HashSet, VecDeque};

use crate::api::{FileCounters, SkippedFile};
use crate::ingest::Candidate;
use crate::store::chunks::{self, IndexedFile};
use crate::store::staging::{self, StageRow, StagedRef};
use crate::store::{Db, StoreError, StoreResult};

/// Flush when the buffered file bodies reach this many bytes (bounds memory and D1 batch size).
const FLUSH_BYTES: usize = 4 * 1024 * 1024;
const FLUSH_ROWS: usize = 240;
/// Inputs classified per lookup of their paths, and the file bodies they may hold meanwhile.
const LOOKUP_ROWS: usize = FLUSH_ROWS;
const LOOKUP_BYTES: usize = FLUSH_BYTES / 2;
/// Indexed paths read per statement when `replace` deletes the files an input did not mention.
const GONE_PAGE_ROWS: usize = 5_000;

/// An input waiting for its path's lookup.
enum Input {
    /// A file, with its tag set (stored form).
    File(Candidate, String),
    /// The deletion of a path (as given: normalized when classified).
    Delete(String),
}

impl Input {
    /// The path looked up (none for a path that does not normalize).
    fn path(&self) -> Option<String> {
        match self {
            Input::File(c, _) => Some(c.path().to_string()),
            Input::Delete(raw) => crate::ingest::paths::normalize(raw).ok(),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Input::File(Candidate::Accepted(f), _) => f.text.len(),
            _ => 0,
        }
    }
}

/// Why staging stopped.
#[derive(Debug, thiserror::Error)]
pub enum StageFailure {
    /// The job was finished (or cancelled) by someone else while we staged into it.
    #[error("the job finished while files were being staged into it")]
    JobClosed,
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub struct Stager {
    db: Db,
    pub job_id: String,
    namespace: String,
    index_key: String,
    /// Inputs not classified yet, in order, and the file bodies they hold.
    pending: VecDeque<Input>,
    pending_bytes: usize,
    /// Paths seen in this input (for `replace`: everything else is deleted).
    seen: HashSet<String>,
    buffer: Vec<StageRow>,
    buffer_bytes: usize,
    /// Classification of this input.
    pub counters: FileCounters,
    pub skipped: Vec<SkippedFile>,
    /// Rows written (via `RETURNING`): what the pipeline must process.
    pub refs: Vec<StagedRef>,
    /// Tags every file of this input carries (a normalised set).
    pub tags: Vec<String>,
}

impl Stager {
    pub async fn new(db: &Db, job_id: &str, namespace: &str, index_key: &str) -> StoreResult<Stager> {
        Ok(Stager {
            db: db.clone(),
            job_id: job_id.into(),
            namespace: namespace.into(),
            index_key: index_key.into(),
            pending: VecDeque::new(),
            pending_bytes: 0,
            seen: HashSet::new(),
            buffer: Vec::new(),
            buffer_bytes: 0,
            counters: FileCounters::default(),
            skipped: Vec::new(),
            refs: Vec::new(),
            tags: Vec::new(),
        })
    }

    /// Point the stager at another job (the previous one finished under us).
    pub async fn retarget(&mut self, job_id: &str) -> StoreResult<()> {
        self.job_id = job_id.into();
        self.refs.clear();
        // The finished job may have indexed some buffered files already.
        let paths: Vec<&str> =
            self.buffer.iter().filter(|r| r.content.is_some()).map(|r| r.path.as_str()).collect();
        let indexed = chunks::indexed_files_among(&self.db, &self.namespace, &paths).await?;
        for row in &mut self.buffer {
            let now_unchanged = row.content.is_some()
                && indexed.get(&row.path).is_some_and(|p| {
                    Some(&p.content_hash) == row.content_hash.as_ref()
                        && p.index_key.as_deref() == Some(self.index_key.as_str())
                        && p.tags == row.tags
                });
            if now_unchanged {
                row.change = "unchanged";
                row.status = "done";
                row.content = None;
            }
        }
        Ok(())
    }

    /// The staging row of `candidate`; `tags` is the file's tag set, stored form; `prior` what
    /// the namespace holds at its path. A file whose tags changed is re-indexed like a changed
    /// file (same chunk ids, new tags on them).
    fn row_for(&self, candidate: Candidate, tags: String, prior: Option<&IndexedFile>) -> StageRow {
        match candidate {
            Candidate::Accepted(f) => {
                let unchanged = prior.is_some_and(|p| {
                    p.content_hash == f.content_hash
                        && p.index_key.as_deref() == Some(self.index_key.as_str())
                        && p.tags == tags
                });
                let (change, status, content) = match (prior, unchanged) {
                    (Some(_), true) => ("unchanged", "done", None),
                    (Some(_), false) => ("changed", "pending", Some(f.text)),
                    (None, _) => ("added", "pending", Some(f.text)),
                };
                StageRow {
                    path: f.path,
                    change,
                    reason: None,
                    status,
                    content,
                    content_hash: Some(f.content_hash),
                    size: f.size,
                    language: Some(f.language),
                    tags,
                }
            }
            // A file that is now unindexable but was indexed before: its old chunks must go.
            Candidate::Skipped(s) if prior.is_some() => deletion(&s.path, Some(s.reason.to_string())),
            Candidate::Skipped(s) => StageRow {
                path: s.path,
                change: "skipped",
                reason: Some(s.reason.to_string()),
                status: "done",
                content: None,
                content_hash: None,
                size: 0,
                language: None,
                tags: String::new(),
            },
        }
    }

    fn count(&mut self, row: &StageRow, delta: i64) {
        let add = |n: &mut u64| *n = n.saturating_add_signed(delta);
        add(&mut self.counters.total);
        match row.change {
            "added" => add(&mut self.counters.added),
            "changed" => add(&mut self.counters.changed),
            "unchanged" => add(&mut self.counters.unchanged),
            "deleted" => add(&mut self.counters.deleted),
            _ => add(&mut self.counters.skipped),
        }
        if row.status == "done" {
            add(&mut self.counters.done);
        }
        if let Some(reason) = &row.reason {
            if delta < 0 {
                self.skipped.retain(|s| s.path != row.path);
            } else if self.skipped.len() < 1000 {
                self.skipped.push(SkippedFile { path: row.path.clone(), reason: reason.clone() });
            }
        }
    }

    /// Stage one input file with the input's tags. Duplicate paths in one input: the last one wins.
    pub async fn add(&mut self, candidate: Candidate) -> Result<(), StageFailure> {
        let tags = edgerag_core::tags::to_column(&self.tags);
        self.enqueue(Input::File(candidate, tags)).await
    }

    /// Stage one input file carrying `tags` as well as the input's (`tags` already checked with
    /// `edgerag_core::tags::normalize`; the union is bounded by the caller).
    pub async fn add_tagged(&mut self, candidate: Candidate, tags: &[String]) -> Result<(), StageFailure> {
        let mut all: Vec<String> = self.tags.iter().chain(tags).cloned().collect();
        all.sort();
        all.dedup();
        self.enqueue(Input::File(candidate, edgerag_core::tags::to_column(&all))).await
    }

    /// Stage the deletion of `path` (skipped as `NOT_FOUND` when it is not indexed).
    pub async fn delete(&mut self, raw_path: &str) -> Result<(), StageFailure> {
        self.enqueue(Input::Delete(raw_path.to_string())).await
    }

    /// `input` waits for its lookup; a full batch is classified.
    async fn enqueue(&mut self, input: Input) -> Result<(), StageFailure> {
        self.pending_bytes += input.bytes();
        self.pending.push_back(input);
        if self.pending.len() >= LOOKUP_ROWS || self.pending_bytes >= LOOKUP_BYTES {
            self.classify().await?;
        }
        Ok(())
    }

    /// Classifies the waiting inputs in order against what the namespace holds at their paths (one
    /// lookup), staging each. An input whose staging failed (the job closed) is staged; those
    /// after it wait for the next call, and are looked up again then.
    async fn classify(&mut self) -> Result<(), StageFailure> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let paths: Vec<String> = self.pending.iter().filter_map(Input::path).collect();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let indexed = chunks::indexed_files_among(&self.db, &self.namespace, &paths).await?;
        while let Some(input) = self.pending.pop_front() {
            self.pending_bytes -= input.bytes();
            let row = match input {
                Input::File(candidate, tags) => {
                    let prior = indexed.get(candidate.path());
                    self.row_for(candidate, tags, prior)
                }
                Input::Delete(raw_path) => match crate::ingest::paths::normalize(&raw_path) {
                    Ok(path) if indexed.contains_key(&path) => deletion(&path, None),
                    Ok(path) => skipped(&path, "NOT_FOUND"),
                    Err(reason) => skipped(&raw_path, reason),
                },
            };
            self.push(row).await?;
        }
        Ok(())
    }

    async fn push(&mut self, row: StageRow) -> Result<(), StageFailure> {
        if !self.seen.insert(row.path.clone()) {
            // Same path again in this input: replace the buffered row (or restage it).
            if let Some(i) = self.buffer.iter().position(|r| r.path == row.path) {
                let old = self.buffer.remove(i);
                self.buffer_bytes -= old.content.as_ref().map_or(0, String::len);
                self.count(&old, -1);
            }
        }
        self.count(&row, 1);
        self.buffer_bytes += row.content.as_ref().map_or(0, String::len);
        self.buffer.push(row);
        if self.buffer_bytes >= FLUSH_BYTES || self.buffer.len() >= FLUSH_ROWS {
            self.write().await?;
        }
        Ok(())
    }

    /// With `replace`, stage the deletion of every indexed file this input did not mention (in
    /// path order, the indexed paths read in pages).
    pub async fn finish(&mut self, replace: bool) -> Result<(), StageFailure> {
        self.classify().await?;
        if replace {
            let mut after = String::new();
            loop {
                let page =
                    chunks::indexed_paths_after(&self.db, &self.namespace, &after, GONE_PAGE_ROWS).await?;
                let full = page.len() == GONE_PAGE_ROWS;
                for path in page {
                    if !self.seen.contains(&path) {
                        self.push(deletion(&path, None)).await?;
                    }
                    after = path;
                }
                if !full {
                    break;
                }
            }
        }
        self.write().await
    }

    /// Stage the waiting inputs, then write the buffered rows in one transaction, only while the
    /// job is still active.
    pub async fn flush(&mut self) -> Result<(), StageFailure> {
        self.classify().await?;
        self.write().await
    }

    /// Write the buffered rows in one transaction, only while the job is still active.
    async fn write(&mut self) -> Result<(), StageFailure> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let now = crate::time::now_iso();
        let mut statements =
            staging::insert_statements(&self.db, &self.job_id, &self.namespace, &self.buffer, &now)?;
        let inserts = statements.len();
        statements.push(self.db.stmt(
            "SELECT status FROM repo_rag_index_job WHERE id = ?",
            &crate::store::args![&self.job_id],
        )?);
        let results: Vec<Vec<serde_json::Value>> = self.db.batch_rows(statements).await?;
        let active = results
            .get(inserts)
            .and_then(|rows| rows.first())
            .and_then(|row| row.get("status"))
            .and_then(|s| s.as_str())
            .is_some_and(|s| s == "QUEUED" || s == "RUNNING");
        if !active {
            // Nothing was written (every insert is guarded by the same condition): keep the
            // buffer so the caller can retarget and flush again.
            return Err(StageFailure::JobClosed);
        }
        for rows in results.into_iter().take(inserts) {
            for row in rows {
                if let Ok(r) = serde_json::from_value::<StagedRef>(row) {
                    self.refs.push(r);
                }
            }
        }
        self.buffer.clear();
        self.buffer_bytes = 0;
        Ok(())
    }
}

fn deletion(path: &str, reason: Option<String>) -> StageRow {
    StageRow {
        path: path.into(),
        change: "deleted",
        reason,
        status: "embedded",
        content: None,
        content_hash: None,
        size: 0,
        language: None,
        tags: String::new(),
    }
}

fn skipped(path: &str, reason: &str) -> StageRow {
    StageRow {
        path: path.into(),
        change: "skipped",
        reason: Some(reason.into()),
        status: "done",
        content: None,
        content_hash: None,
        size: 0,
        language: None,
        tags: String::new(),
    }
}
