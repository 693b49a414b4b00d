//! The local index in one D1 database: upserts, reads by id, deletes, the filtered paged scan and
//! the scan that builds a namespace's in-memory copy.
use std::collections::HashMap;

use edgerag_core::vector::cache::Change;
use edgerag_core::vector::codec::{decode_f32_hex, decode_f32_hex_into, encode_f32_hex};
use edgerag_core::vector::quantized::{
    rescore, CandidateQuery, FilterFields, QuantizedRow, QuantizedVectors,
};
use edgerag_core::vector::topk::{cosine_with_norm, norm, TopK};
use edgerag_core::vector::{
    dedup_last_wins, VectorError, VectorMatch, VectorMetadata, VectorQuery, VectorRecord,
};
use serde::Deserialize;

use super::sql::{
    check_page_hex, filter_sql, parse_metadata, tags_of_column, BuildPageRow, ChangeRow, FullRow,
    GenerationRow, KeyedRow, MetaRow, PageRow,
};
use super::{
    d1, CachePath, Lookup, CACHE, IDS_PER_STATEMENT, KEYS_PER_STATEMENT, LOGGED_GENERATIONS, MAX_REFRESH_ROWS,
};
use crate::ledger::{Budget, Unbounded};
use crate::store::args;
use crate::store::{json_batches, numbered_placeholders, parts, Arg, Db, JSON_BATCH_BYTES};

/// Snapshot parts read per statement (≈ 7.5 MB of text; parts of `store::parts::PART_BYTES`).
const SNAPSHOT_PARTS_PER_READ: usize = 8;

/// What [`D1Vectors::prepare_snapshot`] found or did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotState {
    /// The stored snapshot was already at the namespace's generation.
    Current,
    /// A new one was written.
    Written,
    /// Part of a new one was written, within the caller's budget: another call writes the rest.
    Partial,
    /// The namespace changed meanwhile: nothing written (the next job or build writes it).
    Moved,
    /// The namespace does not fit the memory budget: no copy, no snapshot.
    TooBig,
}

/// The state of a namespace's in-memory copy for a query.
enum CopyState {
    /// Current: answer from it.
    Ready(CachePath),
    /// The namespace does not fit the budget: scan.
    TooBig,
    /// None (or dropped): build one at this generation.
    Missing(f64),
}

/// A row read back: its vector from `hex(vector)`, its metadata from JSON.
fn record(id: String, hex: &str, metadata: &str) -> Result<VectorRecord, VectorError> {
    Ok(VectorRecord { values: decode_f32_hex(hex)?, metadata: parse_metadata(&id, metadata)?, id })
}

/// One `json_group_array` column of a scan page, which must hold exactly `n` values.
fn page_column<T: serde::de::DeserializeOwned>(
    name: &str,
    json: Option<String>,
    n: usize,
) -> Result<Vec<T>, VectorError> {
    let values: Vec<T> = serde_json::from_str(json.as_deref().unwrap_or("[]"))
        .map_err(|e| d1(&format!("scan page {name}"), e))?;
    if values.len() != n {
        return Err(d1("scan page", format!("{} {name} for {n} rows", values.len())));
    }
    Ok(values)
}

/// The local index in one D1 database.
pub(super) struct D1Vectors {
    pub(super) db: Db,
    pub(super) dims: usize,
    pub(super) page_rows: usize,
    pub(super) cache_bytes: usize,
}

/// `namespace` then `ids` (`?1`, `?2…`).
fn with_ids<'a>(namespace: &'a str, ids: &'a [String]) -> Vec<Arg<'a>> {
    let mut args = vec![Arg::Text(namespace)];
    args.extend(ids.iter().map(|id| Arg::Text(id)));
    args
}

impl D1Vectors {
    pub(super) async fn upsert(&self, namespace: &str, records: &[VectorRecord]) -> Result<(), VectorError> {
        let records = dedup_last_wins(records);
        let mut rows = Vec::with_capacity(records.len());
        let mut copies = Vec::with_capacity(records.len());
        for r in &records {
            let metadata = serde_json::to_string(&r.metadata).map_err(|e| d1("metadata", e))?;
            rows.push(serde_json::json!([
                r.id,
                encode_f32_hex(&r.values),
                metadata,
                r.metadata.path,
                r.metadata.language,
                edgerag_core::tags::to_column(&r.metadata.tags)
            ]));
            copies.push(serde_json::json!([r.id, QuantizedRow::encode(&r.values).to_text()]));
        }
        // The rows travel as JSON arrays, the vectors as hex text made BLOBs by `unhex` (a BLOB
        // parameter crosses the D1 binding as a JSON array of byte numbers).
        let sql = "INSERT INTO local_vectors (namespace, id, dims, vector, metadata, path, language, tags) \
             SELECT ?1, json_extract(value, '$[0]'), ?2, unhex(json_extract(value, '$[1]')), \
               json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'), \
               json_extract(value, '$[5]') FROM json_each(?3) WHERE true \
             ON CONFLICT(namespace, id) DO UPDATE SET dims = excluded.dims, vector = excluded.vector, \
             metadata = excluded.metadata, path = excluded.path, language = excluded.language, tags = excluded.tags";
        // Then each vector's 8-bit copy as the in-memory copy holds it (what a build reads instead
        // of the f32 vector), by the vector's rowid, once the vectors are in (rewriting a vector
        // drops its old copy), in JSON of their own: [id, copy]. CROSS JOIN keeps the JSON rows
        // outside, each seeking its vector by (namespace, id); left free, SQLite may walk the
        // namespace's vectors and the JSON rows for each.
        let copies_sql = "INSERT INTO local_vector_copies (row, quantized_v1) \
             SELECT v.rowid, json_extract(j.value, '$[1]') FROM json_each(?2) AS j \
             CROSS JOIN local_vectors AS v ON v.namespace = ?1 AND v.id = json_extract(j.value, '$[0]') WHERE true \
             ON CONFLICT(row) DO UPDATE SET quantized_v1 = excluded.quantized_v1";
        let mut statements = Vec::new();
        for batch in json_batches(rows, JSON_BATCH_BYTES) {
            let args = args![namespace, self.dims, batch.as_str()];
            statements.push(self.db.stmt(sql, &args).map_err(|e| d1("bind", e))?);
        }
        for batch in json_batches(copies, JSON_BATCH_BYTES) {
            let args = args![namespace, batch.as_str()];
            statements.push(self.db.stmt(copies_sql, &args).map_err(|e| d1("bind", e))?);
        }
        statements.extend(self.prune_changes(namespace)?);
        self.db.batch(statements).await.map_err(|e| d1("upsert", e))?;
        Ok(())
    }

    /// Statements that forget the changed rows logged more than [`LOGGED_GENERATIONS`] generations
    /// ago (run with each write of the index, in its batch).
    fn prune_changes(&self, namespace: &str) -> Result<Vec<worker::D1PreparedStatement>, VectorError> {
        let keep = LOGGED_GENERATIONS as f64;
        Ok(vec![
            self.db
                .stmt(
                    "UPDATE local_vector_generations SET logged_from = generation - ?2 \
                     WHERE namespace = ?1 AND generation - ?2 > logged_from",
                    &args![namespace, keep],
                )
                .map_err(|e| d1("bind", e))?,
            self.db
                .stmt(
                    "DELETE FROM local_vector_changes WHERE namespace = ?1 AND generation <= \
                     (SELECT logged_from FROM local_vector_generations WHERE namespace = ?1)",
                    &args![namespace],
                )
                .map_err(|e| d1("bind", e))?,
        ])
    }

    pub(super) async fn get_by_ids(
        &self,
        namespace: &str,
        ids: &[String],
    ) -> Result<Vec<VectorRecord>, VectorError> {
        let mut found = std::collections::HashMap::new();
        // One round trip for all groups (a query re-scores its candidates through here).
        let mut statements = Vec::new();
        for group in ids.chunks(IDS_PER_STATEMENT) {
            let sql = format!(
                "SELECT id, hex(vector) AS v, metadata FROM local_vectors WHERE namespace = ?1 AND id IN ({})",
                numbered_placeholders(2, group.len())
            );
            statements.push(self.db.stmt(&sql, &with_ids(namespace, group)).map_err(|e| d1("bind", e))?);
        }
        let groups: Vec<Vec<FullRow>> = self.db.batch_rows(statements).await.map_err(|e| d1("get", e))?;
        for row in groups.into_iter().flatten() {
            found.insert(row.id.clone(), record(row.id, &row.v, &row.metadata)?);
        }
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    pub(super) async fn delete_by_ids(&self, namespace: &str, ids: &[String]) -> Result<(), VectorError> {
        let mut statements = Vec::new();
        for group in ids.chunks(IDS_PER_STATEMENT) {
            let sql = format!(
                "DELETE FROM local_vectors WHERE namespace = ?1 AND id IN ({})",
                numbered_placeholders(2, group.len())
            );
            statements.push(self.db.stmt(&sql, &with_ids(namespace, group)).map_err(|e| d1("bind", e))?);
        }
        statements.extend(self.prune_changes(namespace)?);
        self.db.batch(statements).await.map_err(|e| d1("delete", e))?;
        Ok(())
    }

    /// The filtered paged scan: exact, memory bounded by one page.
    async fn scan(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError> {
        let (filter, filter_args) = filter_sql(&query.filter, 5);
        // One result row per page: the page's ids and its vectors' hex concatenated, so a page
        // crosses from D1 as two strings instead of `page_rows` objects (the per-row cost dominates).
        // The aggregates walk the same rows in the same order; TopK does not depend on that order.
        // Path globs are not SQL: with globs, the page's paths come too and are matched here.
        let globs = query.filter.globs();
        let paths = if globs.accepts_all() { "" } else { ", json_group_array(path) AS paths" };
        let sql = format!(
            "SELECT count(*) AS n, max(r) AS last, group_concat(id, char(31)) AS ids, group_concat(v, '') AS vs{paths} \
             FROM (SELECT rowid AS r, id, path, hex(vector) AS v FROM local_vectors \
                   WHERE namespace = ?1 AND dims = ?2 AND rowid > ?3{filter} ORDER BY rowid LIMIT ?4)"
        );
        let qn = norm(&query.vector);
        let mut top: TopK<()> = TopK::new(query.top_k);
        let mut buf: Vec<f32> = Vec::with_capacity(self.dims);
        let hex_len = self.dims * 8;
        let mut after = -1f64;
        // Other requests (and their responses) go between slices of the scan.
        let mut slices = crate::background::Slices::new();
        loop {
            slices.pause_if_due().await;
            let mut args = Vec::from(args![namespace, self.dims, after, self.page_rows]);
            args.extend(filter_args.iter().map(|a| Arg::Text(a)));
            let page: Option<PageRow> = self.db.first(&sql, &args).await.map_err(|e| d1("scan", e))?;
            let Some(page) = page.filter(|p| p.n > 0.0) else { break };
            let (ids, vs) = (page.ids.unwrap_or_default(), page.vs.unwrap_or_default());
            let n = page.n as usize;
            check_page_hex(&vs, n, hex_len)?;
            let paths: Option<Vec<String>> =
                page.paths.map(|p| page_column("paths", Some(p), n)).transpose()?;
            for (i, id) in ids.split('\u{1f}').enumerate().take(n) {
                if paths.as_ref().is_some_and(|p| !globs.is_match(&p[i])) {
                    continue;
                }
                decode_f32_hex_into(&vs[i * hex_len..(i + 1) * hex_len], &mut buf)?;
                let score = cosine_with_norm(&query.vector, qn, &buf);
                if top.accepts(score, id) {
                    top.push(score, id.to_string(), ());
                }
            }
            after = page.last.unwrap_or(f64::MAX);
            if n < self.page_rows {
                break;
            }
        }

        let best = top.into_sorted().into_iter().map(|(score, id, ())| (score, id)).collect();
        self.with_metadata(namespace, best).await
    }

    pub(super) async fn query_traced(
        &self,
        namespace: &str,
        query: &VectorQuery,
    ) -> Result<(Vec<VectorMatch>, CachePath), VectorError> {
        if self.cache_bytes == 0 {
            return Ok((self.scan(namespace, query).await?, CachePath::Scan));
        }
        match self.current_copy(namespace).await? {
            CopyState::Ready(path) => {
                let mut answers = self.answer_many_from(namespace, &[query]).await?;
                Ok((answers.pop().unwrap_or_default(), path))
            }
            CopyState::TooBig => Ok((self.scan(namespace, query).await?, CachePath::Scan)),
            CopyState::Missing(generation) => self.build_and_answer(namespace, query, generation).await,
        }
    }

    /// The namespace's in-memory copy at its current generation: as it is, read from the stored
    /// snapshot (when the isolate has none), brought up to date with the rows changed since it was
    /// built (when few did and they are still logged), or missing (build it, at the generation
    /// given).
    async fn current_copy(&self, namespace: &str) -> Result<CopyState, VectorError> {
        let (generation, logged_from) = self.generation(namespace).await?;
        let mut loaded = false;
        let built_at = loop {
            match CACHE.with(|c| c.borrow_mut().lookup(namespace, self.dims, generation)) {
                Lookup::Hit if loaded => return Ok(CopyState::Ready(CachePath::Loaded)),
                Lookup::Hit => return Ok(CopyState::Ready(CachePath::Hit)),
                Lookup::TooBig => return Ok(CopyState::TooBig),
                Lookup::Miss if !loaded => {
                    loaded = true;
                    let Some((at, set)) = self.load_snapshot(namespace, generation, logged_from).await else {
                        return Ok(CopyState::Missing(generation));
                    };
                    CACHE.with(|c| {
                        c.borrow_mut().store(namespace, self.dims, at, Some(set), self.cache_bytes)
                    });
                }
                Lookup::Miss => return Ok(CopyState::Missing(generation)),
                Lookup::Stale { built_at } => break built_at,
            }
        };
        if built_at >= logged_from {
            if let Some(changes) = self.changes_since(namespace, built_at).await? {
                let budget = self.cache_bytes;
                let refreshed = CACHE.with(|c| {
                    c.borrow_mut().refresh(namespace, self.dims, built_at, generation, changes, budget)
                });
                if refreshed {
                    return Ok(CopyState::Ready(if loaded {
                        CachePath::Loaded
                    } else {
                        CachePath::Refreshed
                    }));
                }
            }
        }
        // Another query may have brought the copy up to date meanwhile; otherwise rebuild, without
        // holding the stale copy during the build.
        if CACHE.with(|c| c.borrow_mut().lookup(namespace, self.dims, generation)) == Lookup::Hit {
            return Ok(CopyState::Ready(CachePath::Hit));
        }
        CACHE.with(|c| c.borrow_mut().drop_copy(namespace, self.dims));
        Ok(CopyState::Missing(generation))
    }

    /// The namespace's stored snapshot ([`QuantizedVectors::to_snapshot`]) and the generation it
    /// was built at, when it can serve: complete, built at a generation whose later changes are
    /// still logged, within the memory budget. `None` otherwise — also when it cannot be read,
    /// which is logged and left to the build (that rewrites it).
    async fn load_snapshot(
        &self,
        namespace: &str,
        generation: f64,
        logged_from: f64,
    ) -> Option<(f64, QuantizedVectors)> {
        match self.read_snapshot(namespace, generation, logged_from).await {
            Ok(found) => found,
            Err(e) => {
                crate::log::warn(
                    "vector_snapshot_unreadable",
                    &[("namespace", namespace), ("detail", &e.to_string())],
                );
                None
            }
        }
    }

    async fn read_snapshot(
        &self,
        namespace: &str,
        generation: f64,
        logged_from: f64,
    ) -> Result<Option<(f64, QuantizedVectors)>, VectorError> {
        let started = crate::time::now_ms();
        let sql = "SELECT part, parts, generation, data FROM local_vector_snapshots \
             WHERE namespace = ?1 AND dims = ?2 AND part >= ?3 AND part < ?4 ORDER BY part";
        let select = |from: usize, to: usize| self.db.stmt(sql, &args![namespace, self.dims, from, to]);
        // Older than the logged changes, newer than the namespace (cannot be), or more than the
        // budget: not worth reading.
        let accept = |h: &parts::PartHeader| {
            h.generation >= logged_from
                && h.generation <= generation
                && h.parts.saturating_sub(1).saturating_mul(parts::PART_BYTES) <= self.cache_bytes
        };
        let found = parts::read(&self.db, SNAPSHOT_PARTS_PER_READ, select, accept)
            .await
            .map_err(|e| d1("snapshot", e))?;
        let parts::Read::Found { generation: at, bytes, parts, statements, wait_ms } = found else {
            return Ok(None);
        };
        let read_ms = crate::time::now_ms() - started;
        let len = bytes.len();
        let set = QuantizedVectors::from_snapshot_vec(bytes)
            .ok_or_else(|| d1("snapshot", format!("{len} bytes that are not a copy")))?;
        if set.dims() != self.dims {
            return Err(d1("snapshot", format!("a copy of {} dims for {}", set.dims(), self.dims)));
        }
        crate::log::info(
            "vector_snapshot_loaded",
            &[
                ("namespace", namespace),
                ("vectors", &set.len().to_string()),
                ("bytes", &len.to_string()),
                ("parts", &parts.to_string()),
                ("statements", &statements.to_string()),
                ("readMs", &format!("{read_ms:.0}")),
                ("sqlMs", &format!("{wait_ms:.0}")),
                ("ms", &format!("{:.0}", crate::time::now_ms() - started)),
            ],
        );
        Ok(Some((at, set)))
    }

    /// Stores the namespace's in-memory copy (held at `generation`) as its snapshot, replacing the
    /// previous one, in one transaction that applies only while the namespace is still at that
    /// generation. Idempotent. `false` when there is no such copy or the generation moved.
    pub(super) async fn write_snapshot(&self, namespace: &str, generation: f64) -> Result<bool, VectorError> {
        Ok(self.write_snapshot_parts(namespace, generation, &Unbounded, false).await? == Some(true))
    }

    /// [`D1Vectors::write_snapshot`] within `budget`: with `resume`, the parts already stored at
    /// `generation` (by an earlier call that ran out of budget) are kept; as many of the others as fit are
    /// written (at least one), each only while the namespace is still at that generation; the
    /// parts past the snapshot's end go with the last ones. `Some(true)` when the snapshot is
    /// complete, `Some(false)` when parts are left for another call, `None` when there is no such
    /// copy or the generation moved. Until it is complete the stored parts are of two
    /// generations, which a reader refuses (it builds the copy instead).
    async fn write_snapshot_parts(
        &self,
        namespace: &str,
        generation: f64,
        budget: &dyn Budget,
        resume: bool,
    ) -> Result<Option<bool>, VectorError> {
        #[derive(Deserialize)]
        struct PartRow {
            part: f64,
        }
        let started = crate::time::now_ms();
        if CACHE.with(|c| c.borrow_mut().lookup(namespace, self.dims, generation)) != Lookup::Hit {
            return Ok(None);
        }
        let Some(bytes) =
            CACHE.with(|c| c.borrow_mut().with_copy(namespace, self.dims, |set| set.to_snapshot()))
        else {
            return Ok(None);
        };
        let pieces = parts::cut(&bytes);
        let parts = pieces.len();
        let sql = "SELECT part FROM local_vector_snapshots \
             WHERE namespace = ?1 AND dims = ?2 AND generation = ?3 AND parts = ?4";
        let stored: Vec<PartRow> = if resume {
            self.db
                .all(sql, &args![namespace, self.dims, generation, parts])
                .await
                .map_err(|e| d1("snapshot", e))?
        } else {
            Vec::new()
        };
        let stored: std::collections::HashSet<usize> = stored.iter().map(|r| r.part as usize).collect();
        let left: Vec<(usize, &[u8])> =
            pieces.into_iter().filter(|(part, _)| !stored.contains(part)).collect();
        // The parts that fit (one statement each, the last ones with the delete of the parts past
        // the end); at least one.
        let mut take = left.len();
        while take > 1 && !budget.fits(take + usize::from(take == left.len())) {
            take -= 1;
        }
        let last = take == left.len();
        let guard = "(SELECT generation FROM local_vector_generations WHERE namespace = ?1) = ?3";
        let insert = format!(
            "INSERT OR REPLACE INTO local_vector_snapshots (namespace, dims, part, parts, generation, data) \
             SELECT ?1, ?2, ?4, ?5, ?3, ?6 WHERE {guard}"
        );
        let mut statements = Vec::new();
        for (part, piece) in &left[..take] {
            let data = parts::part_text(piece);
            statements.push(
                self.db
                    .stmt(&insert, &args![namespace, self.dims, generation, *part, parts, data.as_str()])
                    .map_err(|e| d1("bind", e))?,
            );
        }
        if last {
            statements.push(
                self.db
                    .stmt(
                        &format!(
                            "DELETE FROM local_vector_snapshots WHERE namespace = ?1 AND dims = ?2 \
                               AND part >= ?4 AND {guard}"
                        ),
                        &args![namespace, self.dims, generation, parts],
                    )
                    .map_err(|e| d1("bind", e))?,
            );
        }
        let changes = self.db.batch(statements).await.map_err(|e| d1("snapshot write", e))?;
        // Every part written, or nothing (the generation moved: the guard failed on all).
        let written = take == 0 || changes.first().copied().unwrap_or(0) == 1;
        crate::log::info(
            "vector_snapshot_written",
            &[
                ("namespace", namespace),
                ("written", if written { "true" } else { "false" }),
                ("bytes", &bytes.len().to_string()),
                ("parts", &parts.to_string()),
                ("partsWritten", &take.to_string()),
                ("partsLeft", &(left.len() - take).to_string()),
                ("ms", &format!("{:.0}", crate::time::now_ms() - started)),
            ],
        );
        Ok(written.then_some(last))
    }

    /// Makes sure the namespace's stored snapshot is at its current generation: nothing when it
    /// is, else the isolate's copy (read, refreshed or built) written as the snapshot, as many of
    /// its parts as `budget` allows (see [`D1Vectors::write_snapshot_parts`]; a later call writes
    /// the rest). Run when a job finishes, so that new isolates read the copy instead of building
    /// it.
    pub(super) async fn prepare_snapshot(
        &self,
        namespace: &str,
        budget: &dyn Budget,
    ) -> Result<SnapshotState, VectorError> {
        #[derive(Deserialize)]
        struct Stored {
            n: f64,
            parts: Option<f64>,
            lo: Option<f64>,
            hi: Option<f64>,
        }
        let (generation, _) = self.generation(namespace).await?;
        let sql = "SELECT count(*) AS n, max(parts) AS parts, min(generation) AS lo, max(generation) AS hi \
             FROM local_vector_snapshots WHERE namespace = ?1 AND dims = ?2";
        let stored: Option<Stored> =
            self.db.first(sql, &args![namespace, self.dims]).await.map_err(|e| d1("snapshot", e))?;
        let complete = stored.is_some_and(|s| {
            s.n > 0.0 && s.parts == Some(s.n) && s.lo == Some(generation) && s.hi == Some(generation)
        });
        if complete {
            return Ok(SnapshotState::Current);
        }
        let generation = match self.current_copy(namespace).await? {
            CopyState::Ready(_) => self.generation(namespace).await?.0,
            CopyState::TooBig => return Ok(SnapshotState::TooBig),
            CopyState::Missing(generation) => {
                if !self.build(namespace, generation).await? {
                    return Ok(SnapshotState::TooBig);
                }
                generation
            }
        };
        Ok(match self.write_snapshot_parts(namespace, generation, budget, true).await? {
            Some(true) => SnapshotState::Written,
            Some(false) => SnapshotState::Partial,
            None => SnapshotState::Moved,
        })
    }

    /// The rows of the namespace changed after generation `since`, as they are now; `None` when
    /// more than [`MAX_REFRESH_ROWS`] did (rebuilding is then cheaper).
    async fn changes_since(&self, namespace: &str, since: f64) -> Result<Option<Vec<Change>>, VectorError> {
        let sql = "SELECT c.row AS r, v.path AS path, v.language AS language, v.tags AS tags, \
             iif(length(q.quantized_v1) = ?5, q.quantized_v1, NULL) AS q, \
             iif(v.rowid IS NULL OR length(q.quantized_v1) = ?5, NULL, hex(v.vector)) AS v \
             FROM (SELECT DISTINCT row FROM local_vector_changes \
                   WHERE namespace = ?1 AND generation > ?2 LIMIT ?4) AS c \
             LEFT JOIN local_vectors AS v ON v.rowid = c.row AND v.namespace = ?1 AND v.dims = ?3 \
             LEFT JOIN local_vector_copies AS q ON q.row = v.rowid";
        let text_len = QuantizedRow::text_len(self.dims);
        let args = args![namespace, since, self.dims, MAX_REFRESH_ROWS + 1, text_len];
        let rows: Vec<ChangeRow> = self.db.all(sql, &args).await.map_err(|e| d1("changes", e))?;
        if rows.len() > MAX_REFRESH_ROWS {
            return Ok(None);
        }
        let hex_len = self.dims * 8;
        rows.into_iter()
            .map(|row| {
                let key = row.r as i64;
                let encoded = match (row.q, row.v) {
                    (Some(text), _) => self.stored_row(&text)?,
                    (None, Some(hex)) => {
                        check_page_hex(&hex, 1, hex_len)?;
                        QuantizedRow::encode(&decode_f32_hex(&hex)?)
                    }
                    (None, None) => return Ok(Change::Remove { key }),
                };
                let fields = FilterFields {
                    path: row.path.unwrap_or_default(),
                    language: row.language.unwrap_or_default(),
                    tags: tags_of_column(row.tags.as_deref().unwrap_or_default()),
                };
                Ok(Change::Upsert { key, row: encoded, fields })
            })
            .collect::<Result<Vec<_>, VectorError>>()
            .map(Some)
    }

    /// A row's stored 8-bit copy (of the right length: the statements read only those).
    fn stored_row(&self, text: &str) -> Result<QuantizedRow, VectorError> {
        QuantizedRow::from_text(self.dims, text)
            .ok_or_else(|| d1("stored copy", format!("unreadable 8-bit copy of {} chars", text.len())))
    }

    async fn count(&self, namespace: &str) -> Result<usize, VectorError> {
        #[derive(Deserialize)]
        struct CountRow {
            n: f64,
        }
        let sql = "SELECT count(*) AS n FROM local_vectors WHERE namespace = ?1 AND dims = ?2";
        let row: Option<CountRow> =
            self.db.first(sql, &args![namespace, self.dims]).await.map_err(|e| d1("count", e))?;
        Ok(row.map_or(0, |r| r.n as usize))
    }

    /// The namespace's generation, and the oldest generation whose changed rows are all logged.
    async fn generation(&self, namespace: &str) -> Result<(f64, f64), VectorError> {
        let sql = "SELECT generation, logged_from FROM local_vector_generations WHERE namespace = ?1";
        let row: Option<GenerationRow> =
            self.db.first(sql, &args![namespace]).await.map_err(|e| d1("generation", e))?;
        Ok(row.map_or((0.0, 0.0), |r| (r.generation, r.logged_from)))
    }

    /// [`VectorIndex::query_many`]: when the namespace's in-memory copy is current (or brought up
    /// to date), one generation read, one pass over the copy for every query and one read of all
    /// their candidates' f32 values; otherwise each query on its own (the first rebuilds the copy,
    /// the rest use it).
    pub(super) async fn query_many(
        &self,
        namespace: &str,
        queries: &[&VectorQuery],
    ) -> Vec<Result<Vec<VectorMatch>, VectorError>> {
        if self.cache_bytes > 0 && queries.len() > 1 {
            match self.current_copy(namespace).await {
                Ok(CopyState::Ready(_)) => {
                    return match self.answer_many_from(namespace, queries).await {
                        Ok(answers) => answers.into_iter().map(Ok).collect(),
                        Err(e) => queries.iter().map(|_| Err(e.clone())).collect(),
                    };
                }
                Ok(_) => {}
                Err(e) => return queries.iter().map(|_| Err(e.clone())).collect(),
            }
        }
        let mut out = Vec::with_capacity(queries.len());
        for q in queries {
            out.push(self.query_traced(namespace, q).await.map(|(matches, _)| matches));
        }
        out
    }

    /// Top K of each query from the in-memory copy: the candidates of all of them re-scored exactly
    /// with their f32 values, read in one round trip (a zero query, which the copy cannot narrow,
    /// is scanned).
    async fn answer_many_from(
        &self,
        namespace: &str,
        queries: &[&VectorQuery],
    ) -> Result<Vec<Vec<VectorMatch>>, VectorError> {
        let asked: Vec<CandidateQuery<'_>> = queries
            .iter()
            .map(|q| CandidateQuery { vector: &q.vector, top_k: q.top_k, filter: &q.filter })
            .collect();
        // A copy evicted meanwhile (by another query's build) leaves every query to the scan.
        let candidates = CACHE
            .with(|c| c.borrow_mut().with_copy(namespace, self.dims, |set| set.candidates_many(&asked)))
            .unwrap_or_else(|| vec![None; queries.len()]);
        let mut all: Vec<i64> = candidates.iter().flatten().flatten().copied().collect();
        all.sort_unstable();
        all.dedup();
        let records = self.rows_by_key(namespace, &all).await?;
        let by_id: HashMap<&str, &VectorRecord> = records.values().map(|r| (r.id.as_str(), r)).collect();
        let mut answers = Vec::with_capacity(queries.len());
        for (query, keys) in queries.iter().zip(&candidates) {
            let Some(keys) = keys else {
                answers.push(self.scan(namespace, query).await?);
                continue;
            };
            let mine =
                keys.iter().filter_map(|k| records.get(k)).map(|r| (r.id.as_str(), r.values.as_slice()));
            let best = rescore(&query.vector, query.top_k, mine);
            // Every id `rescore` returns is one of the records read.
            answers.push(
                best.into_iter()
                    .filter_map(|(score, id)| {
                        let metadata = by_id.get(id.as_str())?.metadata.clone();
                        Some(VectorMatch { id, score, metadata })
                    })
                    .collect(),
            );
        }
        Ok(answers)
    }

    /// The namespace's rows with these `rowid`s (the in-memory copy's keys), of this index's
    /// dimension: one statement per [`KEYS_PER_STATEMENT`] keys, one round trip.
    async fn rows_by_key(
        &self,
        namespace: &str,
        keys: &[i64],
    ) -> Result<HashMap<i64, VectorRecord>, VectorError> {
        let sql = "SELECT rowid AS r, id, hex(vector) AS v, metadata FROM local_vectors \
             WHERE rowid IN (SELECT value FROM json_each(?2)) AND namespace = ?1 AND dims = ?3";
        let mut statements = Vec::new();
        for group in keys.chunks(KEYS_PER_STATEMENT) {
            let json = serde_json::to_string(group).map_err(|e| d1("keys", e))?;
            statements.push(
                self.db.stmt(sql, &args![namespace, json.as_str(), self.dims]).map_err(|e| d1("bind", e))?,
            );
        }
        if statements.is_empty() {
            return Ok(HashMap::new());
        }
        let groups: Vec<Vec<KeyedRow>> = self.db.batch_rows(statements).await.map_err(|e| d1("get", e))?;
        let mut found = HashMap::new();
        for row in groups.into_iter().flatten() {
            found.insert(row.r as i64, record(row.id, &row.v, &row.metadata)?);
        }
        Ok(found)
    }

    /// Builds the namespace's in-memory copy in one unfiltered scan and answers the query from it;
    /// a namespace that does not fit the budget is marked so and the query scanned. Each row's
    /// stored 8-bit copy is read (a fifth of the bytes of its f32 vector); rows without one are
    /// encoded from the f32 vector here and their copy written back, once.
    async fn build_and_answer(
        &self,
        namespace: &str,
        query: &VectorQuery,
        generation: f64,
    ) -> Result<(Vec<VectorMatch>, CachePath), VectorError> {
        if !self.build(namespace, generation).await? {
            return Ok((self.scan(namespace, query).await?, CachePath::Scan));
        }
        let answer = self.answer_many_from(namespace, &[query]).await?.pop().unwrap_or_default();
        // For the next isolates: they read the copy instead of building it.
        if let Err(e) = self.write_snapshot(namespace, generation).await {
            crate::log::warn(
                "vector_snapshot_write_failed",
                &[("namespace", namespace), ("detail", &e.to_string())],
            );
        }
        Ok((answer, CachePath::Built))
    }

    /// Builds the namespace's in-memory copy in one unfiltered scan (see
    /// [`D1Vectors::build_and_answer`]); `false` when it does not fit the budget (recorded so).
    async fn build(&self, namespace: &str, generation: f64) -> Result<bool, VectorError> {
        let sql = "SELECT count(*) AS n, max(r) AS last, json_group_array(r) AS rowids, \
             json_group_array(path) AS paths, json_group_array(language) AS langs, \
             json_group_array(tags) AS tags, json_group_array(q) AS qs, group_concat(v, '') AS vs \
             FROM (SELECT v.rowid AS r, v.path AS path, v.language AS language, v.tags AS tags, \
                     iif(length(c.quantized_v1) = ?5, c.quantized_v1, NULL) AS q, \
                     iif(length(c.quantized_v1) = ?5, NULL, hex(v.vector)) AS v \
                   FROM local_vectors AS v LEFT JOIN local_vector_copies AS c ON c.row = v.rowid \
                   WHERE v.namespace = ?1 AND v.dims = ?2 AND v.rowid > ?3 ORDER BY v.rowid LIMIT ?4)";
        // Sized up front (and skipped when it cannot fit): growing the codes by doubling would
        // briefly need twice their memory.
        let rows = self.count(namespace).await?;
        let fits = rows.saturating_mul(QuantizedVectors::bytes_per_vector(self.dims)) <= self.cache_bytes;
        // A few rows may arrive between the count and the scan: the copy then grows a little.
        let mut set = fits.then(|| QuantizedVectors::with_capacity(self.dims, rows + 16));
        let mut encoded_here: Vec<(i64, String)> = Vec::new();
        let hex_len = self.dims * 8;
        let text_len = QuantizedRow::text_len(self.dims);
        let mut after = -1f64;
        let mut slices = crate::background::Slices::new();
        while let Some(s) = set.as_mut() {
            slices.pause_if_due().await;
            let args = args![namespace, self.dims, after, self.page_rows, text_len];
            let page: Option<BuildPageRow> = self.db.first(sql, &args).await.map_err(|e| d1("scan", e))?;
            let Some(page) = page.filter(|p| p.n > 0.0) else { break };
            let n = page.n as usize;
            let keys: Vec<i64> = page_column("rowids", page.rowids, n)?;
            let paths: Vec<String> = page_column("paths", page.paths, n)?;
            let langs: Vec<String> = page_column("languages", page.langs, n)?;
            let tags: Vec<String> = page_column("tags", page.tags, n)?;
            let stored: Vec<Option<String>> = page_column("stored copies", page.qs, n)?;
            // The f32 hex of exactly the rows without a stored copy, in order.
            let vs = page.vs.unwrap_or_default();
            check_page_hex(&vs, stored.iter().filter(|q| q.is_none()).count(), hex_len)?;
            let mut hex = vs.as_bytes().chunks(hex_len);
            let rows = keys.into_iter().zip(paths).zip(langs).zip(tags).zip(stored);
            for ((((key, path), language), tags), text) in rows {
                let row = match text {
                    Some(text) => self.stored_row(&text)?,
                    None => {
                        let chunk = hex.next().ok_or_else(|| d1("scan page", "missing vector"))?;
                        let values =
                            decode_f32_hex(std::str::from_utf8(chunk).map_err(|e| d1("scan page", e))?)?;
                        let row = QuantizedRow::encode(&values);
                        encoded_here.push((key, row.to_text()));
                        row
                    }
                };
                s.push_row(key, row, FilterFields { path, language, tags: tags_of_column(&tags) });
            }
            after = page.last.unwrap_or(f64::MAX);
            if s.bytes() > self.cache_bytes {
                set = None; // does not fit after all: cache nothing, scan
            } else if n < self.page_rows {
                break;
            }
        }
        let built = set.is_some();
        CACHE.with(|c| c.borrow_mut().store(namespace, self.dims, generation, set, self.cache_bytes));
        if !built {
            return Ok(false);
        }
        if let Err(e) = self.write_back(namespace, generation, &encoded_here).await {
            // Nothing is lost: the next build encodes these rows again.
            crate::log::warn("vector_copy_write_back_failed", &[("detail", &e.to_string())]);
        }
        Ok(true)
    }

    /// Stores the 8-bit copies a build encoded from f32 vectors, for rows that still have none,
    /// while the namespace is still at the generation they were read at (any write to a vector
    /// moves it, so no copy of an older vector is ever stored).
    async fn write_back(
        &self,
        namespace: &str,
        generation: f64,
        encoded: &[(i64, String)],
    ) -> Result<(), VectorError> {
        if encoded.is_empty() {
            return Ok(());
        }
        let sql = "INSERT INTO local_vector_copies (row, quantized_v1) \
             SELECT v.rowid, json_extract(j.value, '$[1]') FROM json_each(?2) AS j \
             CROSS JOIN local_vectors AS v ON v.rowid = json_extract(j.value, '$[0]') AND v.namespace = ?1 AND v.dims = ?3 \
             WHERE (SELECT generation FROM local_vector_generations WHERE namespace = ?1) = ?4 \
             ON CONFLICT(row) DO NOTHING";
        let rows: Vec<serde_json::Value> = encoded.iter().map(|(k, t)| serde_json::json!([k, t])).collect();
        let statements = json_batches(rows, JSON_BATCH_BYTES)
            .iter()
            .map(|batch| {
                self.db
                    .stmt(sql, &args![namespace, batch.as_str(), self.dims, generation])
                    .map_err(|e| d1("bind", e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.db.batch(statements).await.map_err(|e| d1("write back", e))?;
        Ok(())
    }

    /// `(score, id)` best first → matches with their metadata.
    async fn with_metadata(
        &self,
        namespace: &str,
        best: Vec<(f32, String)>,
    ) -> Result<Vec<VectorMatch>, VectorError> {
        let ids: Vec<String> = best.iter().map(|(_, id)| id.clone()).collect();
        let mut metadata = self.metadata_of(namespace, &ids).await?;
        best.into_iter()
            .map(|(score, id)| {
                let meta = metadata.remove(&id).ok_or_else(|| {
                    VectorError::Backend(format!("local index: {id} vanished during the query"))
                })?;
                Ok(VectorMatch { id, score, metadata: meta })
            })
            .collect()
    }

    async fn metadata_of(
        &self,
        namespace: &str,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, VectorMetadata>, VectorError> {
        let mut out = std::collections::HashMap::new();
        let mut statements = Vec::new();
        for group in ids.chunks(IDS_PER_STATEMENT) {
            let sql = format!(
                "SELECT id, metadata FROM local_vectors WHERE namespace = ?1 AND id IN ({})",
                numbered_placeholders(2, group.len())
            );
            statements.push(self.db.stmt(&sql, &with_ids(namespace, group)).map_err(|e| d1("bind", e))?);
        }
        let groups: Vec<Vec<MetaRow>> =
            self.db.batch_rows(statements).await.map_err(|e| d1("metadata", e))?;
        for row in groups.into_iter().flatten() {
            let m = parse_metadata(&row.id, &row.metadata)?;
            out.insert(row.id, m);
        }
        Ok(out)
    }
}
