//! The isolate's in-memory BM25 copies of namespaces' keyword indexes
//! ([`edgerag_search::bm25::Bm25Index`]): a keyword query over a namespace at rest is answered
//! from its copy — the postings of its phrases only — instead of FTS5 scoring every match, with
//! the same ids and scores.
//!
//! - **Trusted at one generation.** `keyword_generations` (migration 0090) holds a counter per
//!   namespace that triggers bump on every write to `chunks`, and the time of the last one. A copy
//!   answers only while the namespace's generation is the one it was built at; the generation is
//!   read in the batch that asks which namespaces have their own index (no extra round trip).
//! - **Built at rest, in the background.** A namespace without a current copy is answered by
//!   FTS5; the copy is built only when the namespace has not changed for `KEYWORD_INDEX_QUIET_MS`
//!   (an ingestion in progress would otherwise make every search rebuild it), by the query that
//!   finds it missing, after its response (`waitUntil`; one build per namespace at a time in an
//!   isolate): no search waits for a build. Callers without a request to extend (the test routes)
//!   build first and answer from the copy.
//! - **Exact or not used.** The build reads every row of the namespace's FTS5 index (its `docsize`
//!   shadow table, joined to `chunks` by rowid): the copy holds the same documents, tokenized as
//!   FTS5 does (`edgerag_search::bm25::for_each_token`, measured against SQLite), and each
//!   document's token count per column must equal FTS5's own. A character past what was measured,
//!   a count that differs, a namespace over the memory budget or a write during the build leave
//!   the namespace to FTS5 until its next change.
//! - **Budget.** `KEYWORD_INDEX_CACHE_MB` (default 32 with Vectorize, 16 beside the local vector
//!   index's own 16; 0 turns copies off) for all namespaces together, least recently used dropped
//!   first. A namespace whose copy would not fit is answered by FTS5 (its build stops once over).
//! - **Written at a job's end.** Before a namespace is READY again, the job's end stores its
//!   snapshot at the new generation ([`prepare_snapshot`]), so the first search after an
//!   ingestion reads it like any new isolate's; a search builds it only when the end could not.
//! - **Read ready-made.** A copy built from the rows is stored beside the namespace as a snapshot
//!   (`keyword_snapshots`, migration 0130: [`Bm25Index::to_snapshot`] bytes in base64 parts under
//!   the D1 value budget, tagged with the generation it was built at, written in one transaction
//!   guarded by that generation). A later build at the same generation — a new isolate's —
//!   reads it in a few statements instead of every row (a 50,000-chunk namespace: 3 statements
//!   instead of 50 pages); one of another generation is not used, an unreadable one is logged
//!   and replaced by the build.
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use edgerag_core::Language;
use edgerag_search::bm25::{Bm25Index, DocInput};
use serde::Deserialize;
use worker::{D1PreparedStatement, Env};

use crate::background::{self, Background};
use crate::store::{parts, placeholders, Arg, Db, StoreError, StoreResult};

/// Default memory for every namespace's copy together when vectors live in Vectorize (≈ 110,000
/// chunks): half of the isolate's 64 MB memory budget (`src/limits.json`).
pub const DEFAULT_BYTES: usize = 32 << 20;
/// The default beside the local vector index, whose copies have their own 16 MB: together the
/// same half of the budget.
pub const DEFAULT_BYTES_BESIDE_LOCAL_VECTORS: usize = 16 << 20;
/// Default time a namespace must go unchanged before its copy is built.
pub const DEFAULT_QUIET_MS: f64 = 2_000.0;
/// Rows per build page (≈ 0.5–2 MB of text, tens of milliseconds of work: one slice). A
/// 242,000-chunk namespace is built in 243 statements, once per generation (new isolates read the
/// snapshot); pages of 2,000 rows halved that but made the searches answered during a build wait
/// twice as long between slices.
const PAGE_ROWS: usize = 1_000;

/// How the copies are used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopyConfig {
    /// Memory for all copies together; 0: never built, every query goes to FTS5.
    pub bytes: usize,
    /// How long a namespace must go unchanged before a copy is built for it.
    pub quiet_ms: f64,
}

impl Default for CopyConfig {
    fn default() -> Self {
        CopyConfig { bytes: DEFAULT_BYTES, quiet_ms: DEFAULT_QUIET_MS }
    }
}

impl CopyConfig {
    #[cfg(feature = "test-hooks")]
    pub const OFF: CopyConfig = CopyConfig { bytes: 0, quiet_ms: DEFAULT_QUIET_MS };

    /// `KEYWORD_INDEX_CACHE_MB` (0..=1024; default 32 MB with Vectorize, 16 MB beside the local
    /// vector index) and `KEYWORD_INDEX_QUIET_MS` (0..=3,600,000); a bad value keeps the default
    /// and is returned as a warning.
    pub fn from_env(env: &Env) -> (CopyConfig, Vec<String>) {
        let mut config = CopyConfig::default();
        if !matches!(crate::vector::index_kind(env), Ok(crate::vector::IndexKind::Vectorize)) {
            config.bytes = DEFAULT_BYTES_BESIDE_LOCAL_VECTORS;
        }
        let mut warnings = Vec::new();
        let mut read = |name: &str, max: u32| -> Option<u32> {
            crate::config::whole_number(name, crate::bindings::var(env, name).as_deref(), 0..=max)
                .unwrap_or_else(|e| {
                    warnings.push(format!("{e}; default kept"));
                    None
                })
        };
        if let Some(mb) = read("KEYWORD_INDEX_CACHE_MB", 1024) {
            config.bytes = mb as usize * 1024 * 1024;
        }
        if let Some(ms) = read("KEYWORD_INDEX_QUIET_MS", 3_600_000) {
            config.quiet_ms = f64::from(ms);
        }
        (config, warnings)
    }
}

/// A namespace's generation as a query reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct Generation {
    pub namespace: String,
    pub generation: f64,
    /// Unix ms of the last change.
    pub changed_at: f64,
}

impl Generation {
    /// A namespace no write has touched since migration 0090: generation 0, at rest.
    pub fn untouched(namespace: &str) -> Generation {
        Generation { namespace: namespace.to_string(), generation: 0.0, changed_at: 0.0 }
    }
}

/// The generations of `namespaces` (at most [`crate::store::MAX_PARAMS`]).
pub fn generations_statement(db: &Db, namespaces: &[&str]) -> StoreResult<D1PreparedStatement> {
    let sql = format!(
        "SELECT namespace, generation, changed_at FROM keyword_generations WHERE namespace IN ({})",
        placeholders(namespaces.len())
    );
    let args: Vec<Arg> = namespaces.iter().map(|n| Arg::Text(n)).collect();
    db.stmt(&sql, &args)
}

/// What a query does for one namespace.
pub enum Plan {
    /// Answer from this copy.
    Copy(Rc<Bm25Index>),
    /// Build the copy now, then answer from it.
    Build,
    /// Answer through FTS5.
    Fts,
}

struct Entry {
    generation: f64,
    /// `None`: the namespace cannot be copied at this generation (see the module doc).
    copy: Option<Rc<Bm25Index>>,
    used: u64,
}

#[derive(Default)]
struct Cache {
    entries: HashMap<String, Entry>,
    clock: u64,
}

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(Cache::default());
    /// Namespaces whose copy is being built in the background.
    static BUILDING: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
}

/// The plan for `generation`'s namespace at `now_ms`.
pub fn plan(config: CopyConfig, generation: &Generation, now_ms: f64) -> Plan {
    if config.bytes == 0 {
        return Plan::Fts;
    }
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        c.clock += 1;
        let clock = c.clock;
        match c.entries.get_mut(&generation.namespace) {
            Some(e) if e.generation == generation.generation => {
                e.used = clock;
                e.copy.clone().map_or(Plan::Fts, Plan::Copy)
            }
            _ if now_ms - generation.changed_at >= config.quiet_ms => Plan::Build,
            _ => Plan::Fts,
        }
    })
}

/// Keep `copy` (or that the namespace cannot be copied) at `generation`, within the budget.
fn store(config: CopyConfig, namespace: &str, generation: f64, copy: Option<Rc<Bm25Index>>) {
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        c.clock += 1;
        let used = c.clock;
        c.entries.insert(namespace.to_string(), Entry { generation, copy, used });
        loop {
            let total: usize = c.entries.values().filter_map(|e| e.copy.as_ref()).map(|x| x.bytes()).sum();
            if total <= config.bytes {
                break;
            }
            let oldest = c
                .entries
                .iter()
                .filter(|(n, e)| e.copy.is_some() && n.as_str() != namespace)
                .min_by_key(|(_, e)| e.used)
                .map(|(n, _)| n.clone());
            match oldest {
                Some(n) => {
                    c.entries.remove(&n);
                }
                None => break,
            }
        }
    });
}

#[derive(Deserialize)]
struct BuildRow {
    r: f64,
    sz: String,
    id: String,
    s: String,
    p: String,
    pt: String,
    y: Option<String>,
    l: String,
    t: String,
}

/// Token counts per column from FTS5's `docsize` record (SQLite varints, as hex).
fn docsize(hex: &str) -> Option<[u32; 3]> {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| hex.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
        .collect::<Option<_>>()?;
    let mut out = [0u32; 3];
    let mut at = 0;
    for slot in &mut out {
        let mut v: u64 = 0;
        loop {
            let b = *bytes.get(at)?;
            at += 1;
            v = (v << 7) | u64::from(b & 0x7f);
            if b & 0x80 == 0 {
                break;
            }
        }
        *slot = u32::try_from(v).ok()?;
    }
    Some(out)
}

/// Build `namespace`'s copy at `generation` (read at plan time), keep it (or that it cannot be
/// used) and return it. `None`: answer through FTS5. The copy is read from the namespace's stored
/// snapshot when there is one of this generation; otherwise it is built from the rows and, when
/// usable, stored as the snapshot for the next isolates.
pub async fn build(config: CopyConfig, db: &Db, namespace: &str, generation: f64) -> Option<Rc<Bm25Index>> {
    let started = crate::time::now_ms();
    match read_snapshot(config, db, namespace, generation).await {
        Ok(Some((copy, read))) => {
            crate::log::info(
                "keyword_copy_loaded",
                &[
                    ("namespace", namespace),
                    ("docs", &copy.len().to_string()),
                    ("bytes", &copy.bytes().to_string()),
                    ("snapshotBytes", &read.bytes.to_string()),
                    ("parts", &read.parts.to_string()),
                    ("statements", &read.statements.to_string()),
                    ("sqlMs", &format!("{:.0}", read.wait_ms)),
                    ("ms", &format!("{:.0}", crate::time::now_ms() - started)),
                ],
            );
            let copy = Rc::new(copy);
            store(config, namespace, generation, Some(copy.clone()));
            return Some(copy);
        }
        Ok(None) => {}
        Err(e) => crate::log::warn(
            "keyword_snapshot_unreadable",
            &[("namespace", namespace), ("detail", &e.to_string())],
        ),
    }
    match read_copy(config, db, namespace, generation, None).await {
        Ok(Some((copy, usable))) => {
            crate::log::info(
                "keyword_copy_built",
                &[
                    ("namespace", namespace),
                    ("docs", &copy.len().to_string()),
                    ("bytes", &copy.bytes().to_string()),
                    ("usable", if usable { "true" } else { "false" }),
                    ("inexact_docs", &copy.inexact().to_string()),
                    ("ms", &format!("{:.0}", crate::time::now_ms() - started)),
                ],
            );
            let copy = usable.then(|| Rc::new(copy));
            store(config, namespace, generation, copy.clone());
            if let Some(copy) = &copy {
                if let Err(e) =
                    write_snapshot(db, namespace, generation, copy, &crate::ledger::Unbounded).await
                {
                    crate::log::warn(
                        "keyword_snapshot_write_failed",
                        &[("namespace", namespace), ("detail", &e.to_string())],
                    );
                }
            }
            copy
        }
        // Changed during the build: the next query sees the new generation.
        Ok(None) => None,
        Err(e) => {
            crate::log::warn("keyword_copy_failed", &[("namespace", namespace), ("detail", &e.to_string())]);
            None
        }
    }
}

/// What a job's end did for the namespace's keyword snapshot ([`prepare_snapshot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepared {
    /// Written at the namespace's current generation.
    Written,
    /// One of the current generation was there already.
    Current,
    /// None written: copies are off, the namespace has no chunks, its copy would not be usable
    /// (over the memory budget, or not FTS5's bit for bit), it changed meanwhile, or its rows
    /// need more statements than the message has left. The first search builds it, as before.
    Skipped(&'static str),
}

/// Statements besides the pages of rows and the snapshot's parts: the generation, the stored
/// snapshot's, the count, the build's closing generation check and the write's delete.
const PREPARE_FIXED_STATEMENTS: usize = 5;

/// At a job's end, before the namespace is READY: its keyword snapshot at its current generation,
/// so the first search of every isolate reads the copy ready-made (a few statements) instead of
/// building it from every row after answering through FTS5. A current snapshot is left as it is;
/// otherwise the copy is built from the rows (a statement per [`PAGE_ROWS`]) and written, when it
/// is usable and the rows fit `budget`. The copy is not kept in this isolate. Idempotent: a rerun
/// finds the snapshot current.
pub async fn prepare_snapshot(
    config: CopyConfig,
    db: &Db,
    namespace: &str,
    budget: &dyn crate::ledger::Budget,
) -> StoreResult<Prepared> {
    if config.bytes == 0 {
        return Ok(Prepared::Skipped("copies off"));
    }
    #[derive(Deserialize)]
    struct One {
        n: f64,
    }
    let ns = [Arg::Text(namespace)];
    let read = |sql: &'static str| db.first::<One>(sql, &ns);
    let Some(generation) =
        read("SELECT generation AS n FROM keyword_generations WHERE namespace = ?1").await?.map(|r| r.n)
    else {
        return Ok(Prepared::Skipped("no chunks"));
    };
    let stored =
        read("SELECT generation AS n FROM keyword_snapshots WHERE namespace = ?1 AND part = 0").await?;
    if stored.map(|r| r.n) == Some(generation) {
        return Ok(Prepared::Current);
    }
    let t = crate::store::keyword::table(namespace);
    let docs =
        db.first::<One>(&format!("SELECT count(*) AS n FROM {t}_docsize"), &[]).await?.map_or(0.0, |r| r.n);
    if docs == 0.0 {
        return Ok(Prepared::Skipped("no chunks"));
    }
    // A page per PAGE_ROWS rows, and an empty one when they are a whole number of pages.
    let pages = docs as usize / PAGE_ROWS + 1;
    if !budget.fits(pages + PREPARE_FIXED_STATEMENTS) {
        return Ok(Prepared::Skipped("statements"));
    }
    Ok(match read_copy(config, db, namespace, generation, Some(docs as usize)).await? {
        None => Prepared::Skipped("changed"),
        Some((_, false)) => Prepared::Skipped("not usable"),
        Some((copy, true)) => match write_snapshot(db, namespace, generation, &copy, budget).await? {
            Some(true) => Prepared::Written,
            Some(false) => Prepared::Skipped("changed"),
            None => Prepared::Skipped("statements"),
        },
    })
}

/// Snapshot parts read per statement (≈ 7.5 MB of text).
const SNAPSHOT_PARTS_PER_READ: usize = 8;

/// What reading a snapshot cost.
struct SnapshotRead {
    bytes: usize,
    parts: usize,
    statements: usize,
    wait_ms: f64,
}

/// The namespace's stored copy, when there is one of `generation` that fits the budget and reads
/// back as a copy FTS5's ranking can be answered from; `None` when there is none (or an older
/// one, or one over the budget); an error for one that is unreadable (the build replaces it).
async fn read_snapshot(
    config: CopyConfig,
    db: &Db,
    namespace: &str,
    generation: f64,
) -> StoreResult<Option<(Bm25Index, SnapshotRead)>> {
    let sql = "SELECT part, parts, generation, data FROM keyword_snapshots \
         WHERE namespace = ?1 AND part >= ?2 AND part < ?3 ORDER BY part";
    let select =
        |from: usize, to: usize| db.stmt(sql, &[Arg::Text(namespace), Arg::from(from), Arg::from(to)]);
    let accept = |h: &parts::PartHeader| {
        h.generation == generation
            && h.parts.saturating_sub(1).saturating_mul(parts::PART_BYTES) <= config.bytes
    };
    let parts::Read::Found { bytes, parts, statements, wait_ms, .. } =
        parts::read(db, SNAPSHOT_PARTS_PER_READ, select, accept).await?
    else {
        return Ok(None);
    };
    let len = bytes.len();
    let copy = Bm25Index::from_snapshot(&bytes)
        .ok_or_else(|| StoreError(format!("{len} bytes that are not a keyword copy")))?;
    drop(bytes);
    if copy.inexact() > 0 || copy.bytes() > config.bytes {
        return Ok(None);
    }
    Ok(Some((copy, SnapshotRead { bytes: len, parts, statements, wait_ms })))
}

/// Stores `copy` (built at `generation`) as the namespace's snapshot, replacing the previous one,
/// in one transaction that applies only while the namespace is still at that generation.
/// Idempotent; `Some(false)` when the generation moved, `None` (nothing written) when its
/// statements do not fit `budget`.
async fn write_snapshot(
    db: &Db,
    namespace: &str,
    generation: f64,
    copy: &Bm25Index,
    budget: &dyn crate::ledger::Budget,
) -> StoreResult<Option<bool>> {
    let started = crate::time::now_ms();
    let bytes = copy.to_snapshot();
    let guard = "COALESCE((SELECT generation FROM keyword_generations WHERE namespace = ?1), 0) = ?2";
    let pieces = parts::cut(&bytes);
    let count = pieces.len();
    if !budget.fits(count + 1) {
        return Ok(None);
    }
    let mut statements = vec![db.stmt(
        &format!("DELETE FROM keyword_snapshots WHERE namespace = ?1 AND {guard}"),
        &[Arg::Text(namespace), Arg::Real(generation)],
    )?];
    let insert = format!(
        "INSERT INTO keyword_snapshots (namespace, part, parts, generation, data) \
         SELECT ?1, ?3, ?4, ?2, ?5 WHERE {guard}"
    );
    for (part, piece) in pieces {
        let data = parts::part_text(piece);
        statements.push(db.stmt(
            &insert,
            &[
                Arg::Text(namespace),
                Arg::Real(generation),
                Arg::from(part),
                Arg::from(count),
                Arg::Text(&data),
            ],
        )?);
    }
    let changes = db.batch(statements).await?;
    let written = changes.get(1).copied().unwrap_or(0) == 1;
    crate::log::info(
        "keyword_snapshot_written",
        &[
            ("namespace", namespace),
            ("written", if written { "true" } else { "false" }),
            ("bytes", &bytes.len().to_string()),
            ("parts", &count.to_string()),
            ("ms", &format!("{:.0}", crate::time::now_ms() - started)),
        ],
    );
    Ok(Some(written))
}

/// A namespace's build claimed in this isolate (no other query starts one meanwhile) and not yet
/// started: the search that found the copy missing starts it once it has answered, so the build's
/// work does not land between that search's own steps. Dropped unstarted, it gives the claim back.
pub struct PendingBuild {
    claim: Claim,
    config: CopyConfig,
    db: Db,
    generation: f64,
}

/// The namespace's place in `BUILDING`, given back when dropped.
struct Claim(String);

impl Drop for Claim {
    fn drop(&mut self) {
        BUILDING.with(|b| b.borrow_mut().remove(&self.0));
    }
}

/// Claim `namespace`'s build at `generation`; `None` when this isolate is building it already
/// (each concurrent query finding it missing would start another).
pub fn claim_build(config: CopyConfig, db: &Db, namespace: &str, generation: f64) -> Option<PendingBuild> {
    if !BUILDING.with(|b| b.borrow_mut().insert(namespace.to_string())) {
        return None;
    }
    Some(PendingBuild { claim: Claim(namespace.to_string()), config, db: db.clone(), generation })
}

impl PendingBuild {
    /// [`build`] in the request's background.
    pub fn start(self, background: &Background) {
        background.spawn(async move {
            #[cfg(feature = "test-hooks")]
            test_hooks::delay_build().await;
            build(self.config, &self.db, &self.claim.0, self.generation).await;
        });
    }
}

/// Whether a copy that holds `bytes` after `read` of its `total` documents is bound to end over
/// `budget`: its size per document so far, times every document, over half as much again as the
/// budget (the documents read first need not be typical, and a copy still growing holds more
/// than it will packed). A namespace far over the budget is then given up after a page or two
/// instead of after reading a budget's worth of rows.
fn bound_to_exceed(bytes: usize, read: usize, total: usize, budget: usize) -> bool {
    read > 0 && (bytes as f64 / read as f64) * total as f64 > budget as f64 * 1.5
}

/// The copy and whether it may answer; `None` when the namespace changed while it was read.
/// `docs`: how many documents the namespace's index holds, when known (a job's end counted them),
/// so that a copy bound to exceed the budget stops early ([`bound_to_exceed`]).
async fn read_copy(
    config: CopyConfig,
    db: &Db,
    namespace: &str,
    generation: f64,
    docs: Option<usize>,
) -> StoreResult<Option<(Bm25Index, bool)>> {
    let t = crate::store::keyword::table(namespace);
    let sql = format!(
        "SELECT d.id AS r, hex(d.sz) AS sz, c.id AS id, c.search_text AS s, c.path AS p, COALESCE(c.path_terms, c.path) AS pt, \
           COALESCE(c.symbol_terms, c.symbol_name) AS y, c.language AS l, c.tags AS t \
         FROM {t}_docsize d CROSS JOIN chunks c ON c.rowid = d.id \
         WHERE d.id > ?1 ORDER BY d.id LIMIT ?2"
    );
    let mut index = Bm25Index::new();
    let mut usable = true;
    let mut after = -1f64;
    // Other requests (and their responses) go between slices of the build.
    let mut slices = background::Slices::new();
    loop {
        slices.pause_if_due().await;
        let rows: Vec<BuildRow> = db.all(&sql, &[Arg::Real(after), Arg::Int(PAGE_ROWS as i64)]).await?;
        let Some(last) = rows.last() else { break };
        after = last.r;
        let n = rows.len();
        for row in rows {
            let tags = edgerag_core::tags::from_column(&row.t);
            index.insert(DocInput {
                id: &row.id,
                row: row.r as i64,
                columns: [&row.s, &row.pt, row.y.as_deref().unwrap_or_default()],
                path: &row.p,
                language: Language::from_name(&row.l).unwrap_or(Language::Text),
                tags: &tags,
            });
            let ours = index.sizes(&row.id);
            usable &= ours.is_some() && ours == docsize(&row.sz);
        }
        let over = index.bytes() > config.bytes
            || docs.is_some_and(|total| bound_to_exceed(index.bytes(), index.len(), total, config.bytes));
        if !usable || index.inexact() > 0 || over {
            usable = false;
            break;
        }
        if n < PAGE_ROWS {
            break;
        }
    }
    #[derive(Deserialize)]
    struct Now {
        generation: f64,
    }
    let now: Option<Now> = db
        .first("SELECT generation FROM keyword_generations WHERE namespace = ?1", &[Arg::Text(namespace)])
        .await?;
    if now.map_or(0.0, |n| n.generation) != generation {
        return Ok(None);
    }
    index.pack();
    let fits = index.bytes() <= config.bytes;
    Ok(Some((index, usable && fits)))
}

/// Whether this isolate holds a copy of `namespace` (at any generation) and whether one is being
/// built in the background.
#[cfg(feature = "test-hooks")]
pub fn copy_state(namespace: &str) -> (bool, bool) {
    let held = CACHE.with(|c| c.borrow().entries.get(namespace).is_some_and(|e| e.copy.is_some()));
    (held, BUILDING.with(|b| b.borrow().contains(namespace)))
}

/// Drops every keyword copy of this isolate (a test route: what a new isolate starts with).
#[cfg(feature = "test-hooks")]
pub fn forget_copies() {
    CACHE.with(|c| *c.borrow_mut() = Cache::default());
}

/// A pause before each background build, so a test can see that the search did not wait for it.
#[cfg(feature = "test-hooks")]
pub mod test_hooks {
    use std::cell::Cell;

    thread_local! {
        static DELAY_MS: Cell<u64> = const { Cell::new(0) };
    }

    pub fn set_build_delay(ms: u64) {
        DELAY_MS.with(|d| d.set(ms));
    }

    pub(super) async fn delay_build() {
        let ms = DELAY_MS.with(Cell::get);
        if ms > 0 {
            worker::Delay::from(std::time::Duration::from_millis(ms)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docsize_reads_one_varint_per_column() {
        assert_eq!(docsize("050002"), Some([5, 0, 2]));
        // 300 = 0b10_0101100: 0x82 0x2C.
        assert_eq!(docsize("822C0001"), Some([300, 0, 1]));
        assert_eq!(docsize("05"), None);
        assert_eq!(docsize("zz0000"), None);
    }

    #[test]
    fn a_copy_is_given_up_early_only_when_far_over_its_budget() {
        let mb = 1 << 20;
        // 270 bytes a document, as measured at 200,000 chunks: 54 MB against 32.
        assert!(bound_to_exceed(270_000, 1_000, 200_000, 32 * mb));
        // 110,000 documents would be near the budget: read on (the budget decides at the end).
        assert!(!bound_to_exceed(270_000, 1_000, 110_000, 32 * mb));
        assert!(!bound_to_exceed(0, 0, 200_000, 32 * mb));
    }
}
