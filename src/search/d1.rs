//! The search ports over D1: BM25 through FTS5 (`chunks_fts` joined to `chunks` by rowid), chunk
//! lookups by id / position / symbol, and the namespace catalog. Every statement stays under D1's
//! 100 bound parameters; lookups of one request go out as one `batch` per database (one round
//! trip each): namespaces are grouped by the database that holds them ([`Stores`]).
use edgerag_core::{Chunk, ChunkMetadata, ChunkType, Language};
use edgerag_search::ports::{
    link_order, ChunkKey, ChunkRecord, ChunkStore, GraphLinks, KeywordIndex, KeywordQuery, LinePoint,
    LinkDirection, NamespaceCatalog, NamespaceInfo, NamespaceStatus, NeighborRange, ProseFamily, ScoredKey,
    SymbolFamily, SymbolLink, SymbolQuery,
};
use edgerag_search::query::{fts5_phrases, mergeable_phrases, shared_scoring, without_absent, BM25_WEIGHTS};
use edgerag_search::PortError;
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use edgerag_search::bm25::{Bm25Index, Phrase};
use worker::D1PreparedStatement;

mod prose;

pub use copies::CopyConfig;
#[cfg(feature = "test-hooks")]
pub use copies::{copy_state, forget_copies, test_hooks as copy_hooks};

use crate::auth::Access;
use crate::background::Background;
use crate::keyword_copy as copies;
use crate::store::{numbered_placeholders, placeholders, Arg, Db, StoreError, Stores, MAX_PARAMS};

/// D1-backed implementation of every store port, over every database of the deployment, limited
/// to the namespaces the caller may read: the catalog lists only those, and lookups drop any
/// other namespace they are asked for.
pub struct D1Search {
    stores: Stores,
    access: Access,
    copies: CopyConfig,
    /// Where a namespace's copy is built when a query finds it missing: in the background of the
    /// request (the query is answered through FTS5), or — without one — before answering.
    background: Option<Background>,
    /// Copy builds claimed by this search's queries, started by [`D1Search::start_background_work`].
    pending: std::cell::RefCell<Vec<copies::PendingBuild>>,
    /// (namespace, query) pairs answered from an in-memory copy so far.
    copy_answers: std::cell::Cell<usize>,
}

impl D1Search {
    pub fn new(stores: Stores, access: Access) -> Self {
        D1Search {
            stores,
            access,
            copies: CopyConfig::default(),
            background: None,
            pending: Default::default(),
            copy_answers: Default::default(),
        }
    }

    /// How many (namespace, keyword query) pairs were answered from an in-memory copy.
    #[cfg(feature = "test-hooks")]
    pub fn copy_answers(&self) -> usize {
        self.copy_answers.get()
    }

    /// How keyword queries use in-memory copies of the namespaces' indexes (`copies`).
    pub fn with_copies(mut self, copies: CopyConfig) -> Self {
        self.copies = copies;
        self
    }

    /// Build missing copies in the background of the request (see [`D1Search::background`]).
    pub fn with_background(mut self, background: Background) -> Self {
        self.background = Some(background);
        self
    }

    /// Start the copy builds this search's queries claimed: call once the search has answered.
    pub fn start_background_work(&self) {
        let Some(background) = &self.background else { return };
        for build in self.pending.borrow_mut().drain(..) {
            build.start(background);
        }
    }

    /// `items` grouped by the database of their namespace.
    async fn by_database<'a, T>(
        &self,
        items: &'a [T],
        namespace: impl Fn(&T) -> &str,
        backend: &str,
    ) -> Result<Vec<(Db, Vec<&'a T>)>, PortError> {
        let mut namespaces: Vec<String> = items.iter().map(|i| namespace(i).to_string()).collect();
        namespaces.retain(|n| self.access.may_read_namespace(n));
        namespaces.sort();
        namespaces.dedup();
        let groups = self.stores.group(&namespaces).await.map_err(port(backend))?;
        Ok(groups
            .into_iter()
            .map(|(db, nss)| {
                let mine: Vec<&T> = items.iter().filter(|i| nss.iter().any(|n| n == namespace(i))).collect();
                (db, mine)
            })
            .collect())
    }
}

impl D1Search {
    /// Which of `namespaces` (all in `db`) have their own keyword index, and the generations of
    /// those namespaces (one round trip).
    async fn own_indexes(
        &self,
        db: &Db,
        namespaces: &[&String],
    ) -> Result<(HashSet<String>, HashMap<String, copies::Generation>), PortError> {
        #[derive(Deserialize)]
        struct Registered {
            namespace: String,
            generation: Option<f64>,
            changed_at: Option<f64>,
        }
        let mut statements = Vec::new();
        let groups: Vec<Vec<&str>> =
            namespaces.chunks(MAX_PARAMS).map(|g| g.iter().map(|n| n.as_str()).collect()).collect();
        for names in &groups {
            statements
                .push(crate::store::keyword::registered_statement(db, names).map_err(port("keyword-index"))?);
        }
        if self.copies.bytes > 0 {
            for names in &groups {
                statements.push(copies::generations_statement(db, names).map_err(port("keyword-index"))?);
            }
        }
        let rows: Vec<Vec<Registered>> = db.batch_rows(statements).await.map_err(port("keyword-index"))?;
        let mut own = HashSet::new();
        let mut generations = HashMap::new();
        for (k, group) in rows.into_iter().enumerate() {
            for r in group {
                if k < groups.len() {
                    own.insert(r.namespace);
                } else {
                    let g = copies::Generation {
                        namespace: r.namespace.clone(),
                        generation: r.generation.unwrap_or(0.0),
                        changed_at: r.changed_at.unwrap_or(0.0),
                    };
                    generations.insert(r.namespace, g);
                }
            }
        }
        Ok((own, generations))
    }

    /// The namespaces of `own` answered from an in-memory copy for these queries: every phrase
    /// asked of them must be one the copy reads exactly as FTS5 does. A namespace at rest without
    /// a copy gets one built — after the search has answered when the request has a background
    /// (this query is answered through FTS5), else now.
    async fn copies_for(
        &self,
        db: &Db,
        own: &HashSet<String>,
        generations: &HashMap<String, copies::Generation>,
        queries: &[KeywordQuery],
        live: &[usize],
        exact: &[Option<Vec<Phrase>>],
    ) -> HashMap<String, Rc<Bm25Index>> {
        let mut out = HashMap::new();
        if self.copies.bytes == 0 {
            return out;
        }
        let mut names: Vec<&String> = own.iter().collect();
        names.sort();
        for ns in names {
            if live.iter().any(|&i| queries[i].namespaces.contains(ns) && exact[i].is_none()) {
                continue;
            }
            let generation =
                generations.get(ns).cloned().unwrap_or_else(|| copies::Generation::untouched(ns));
            let copy = match copies::plan(self.copies, &generation, crate::time::now_ms()) {
                copies::Plan::Copy(copy) => Some(copy),
                copies::Plan::Build if self.background.is_some() => {
                    let claimed = copies::claim_build(self.copies, db, ns, generation.generation);
                    self.pending.borrow_mut().extend(claimed);
                    None
                }
                copies::Plan::Build => copies::build(self.copies, db, ns, generation.generation).await,
                copies::Plan::Fts => None,
            };
            if let Some(copy) = copy {
                out.insert(ns.clone(), copy);
            }
        }
        out
    }
}

fn port(backend: &str) -> impl Fn(StoreError) -> PortError + '_ {
    move |e| PortError::new(backend, e.to_string())
}

/// The keyword filters as SQL conditions on `alias`'s `language`, `path` and `tags` columns (each
/// a whole condition; all must hold), numbered placeholders from `?{first}`, and their values in
/// that order: any of the languages, any of the path globs, any of the tags (as stored needles).
fn filter_conditions<'v>(
    alias: &str,
    first: usize,
    languages: &[&'v str],
    globs: &'v [String],
    tags: &'v [String],
) -> (Vec<String>, Vec<Arg<'v>>) {
    let mut values: Vec<Arg<'v>> = Vec::new();
    let mut conditions = Vec::new();
    let mut mark = |value: &'v str| {
        values.push(Arg::Text(value));
        format!("?{}", first + values.len() - 1)
    };
    if !languages.is_empty() {
        let marks: Vec<String> = languages.iter().map(|l| mark(l)).collect();
        conditions.push(format!("{alias}.language IN ({})", marks.join(", ")));
    }
    if !globs.is_empty() {
        let ors: Vec<String> = globs.iter().map(|g| format!("{alias}.path GLOB {}", mark(g))).collect();
        conditions.push(format!("({})", ors.join(" OR ")));
    }
    if !tags.is_empty() {
        let ors: Vec<String> = tags.iter().map(|t| format!("instr({alias}.tags, {}) > 0", mark(t))).collect();
        conditions.push(format!("({})", ors.join(" OR ")));
    }
    (conditions, values)
}

#[derive(Deserialize)]
struct Hit {
    /// Which of a statement's lists the row ranks (0 unless it serves extensions).
    list: usize,
    namespace: String,
    id: String,
    score: f64,
}

/// What a keyword query binds besides its terms: the filters as stored values, and the limit.
struct Bound<'q> {
    languages: Vec<&'q str>,
    globs: Vec<String>,
    tags: Vec<String>,
    /// Rows asked of each statement: over-fetched a little when the exact glob check (done by
    /// the pipeline) may drop rows.
    limit: usize,
}

impl<'q> Bound<'q> {
    fn of(q: &'q KeywordQuery) -> Self {
        let globs: Vec<String> = q.filters.sql_globs().into_iter().take(30).collect();
        Bound {
            languages: q.filters.languages.iter().take(20).map(|l| l.as_str()).collect(),
            // Any of the tags (the request allows at most 20), matched as whole tags in the stored form.
            tags: q.filters.tags.iter().take(20).map(|t| edgerag_core::tags::column_needle(t)).collect(),
            limit: if globs.is_empty() { q.limit } else { q.limit * 2 },
            globs,
        }
    }
}

/// Extra phrases one keyword statement scores beside its base (each is a small scoring pass of its
/// own; 32 keep the statement far below D1's statement size limit).
const MAX_EXTRA_PHRASES: usize = 32;

/// The statement over a namespace's own index, for a base expression and lists that extend it
/// (their extra phrases, in order; [`shared_scoring`]). Rows carry `list`: 0 for the base, `j` for
/// extension `j`.
///
/// Each match of the base is checked against the filters on the match's row of the narrow
/// `chunk_facets` (language, path, tags by the chunk's rowid: one seek per match instead of
/// reading its chunk row, which holds the chunk's text and cost more than scoring the match), and
/// only the kept ones are scored, once (materialized); then chunk rows are read only for the kept
/// matches that can be in the top `limit`: those scoring at most the `limit`-th best score (ties
/// included, so the (score, id) order stays exact).
///
/// An extension's ranking reuses the base's scores: each extra phrase is scored alone (`bm25()` of
/// a one-phrase query is that phrase's term), and the extension's candidates are the base's best
/// rows and the rows holding an extra phrase, scored `((base + term₁) + …)` — FTS5's own sum
/// (a row of the base scores below zero, so `min` keeps its score over the `0.0` of a row that only
/// holds extra phrases).
fn own_statement(
    db: &Db,
    namespace: &str,
    expr: &str,
    extensions: &[Vec<String>],
    bound: &Bound,
) -> Result<D1PreparedStatement, PortError> {
    let t = crate::store::keyword::table(namespace);
    // Placeholders from `?3`: after `?1` (the query) and `?2` (the namespace, which comes after
    // the filters in the statement).
    let (facets, values) = filter_conditions("f", 3, &bound.languages, &bound.globs, &bound.tags);
    let mut params: Vec<Arg> = vec![Arg::Text(expr), Arg::Text(namespace)];
    params.extend(values);
    params.push(Arg::Int(bound.limit as i64));
    let limit = format!("?{}", params.len());
    let filter = if facets.is_empty() {
        String::new()
    } else {
        format!(
            " AND EXISTS (SELECT 1 FROM chunk_facets f WHERE f.chunk_rowid = {t}.rowid AND {})",
            facets.join(" AND ")
        )
    };
    let weights = bm25_weights();
    let scored = |name: &str, column: &str, matched: &str| {
        format!(
            "{name} AS MATERIALIZED (SELECT {t}.rowid AS rowid, bm25({t}, {weights}) AS {column} FROM {t} \
               WHERE {t} MATCH {matched}{filter})"
        )
    };
    let best = |k: &str, list: usize| {
        format!(
            "SELECT * FROM (SELECT {list} AS list, c.namespace AS namespace, c.id AS id, {k}.score AS score \
             FROM {k} CROSS JOIN chunks c ON c.rowid = {k}.rowid \
             WHERE c.namespace = ?2 \
               AND {k}.score <= IFNULL((SELECT score FROM {k} ORDER BY score LIMIT 1 OFFSET {limit} - 1), {k}.score) \
             ORDER BY {k}.score, c.id LIMIT {limit})"
        )
    };
    let mut ctes = vec![scored("k", "score", "?1")];
    let mut selects = vec![best("k", 0)];
    let json: Vec<String> =
        extensions.iter().map(|x| serde_json::Value::from(x.clone()).to_string()).collect();
    for (j, extra) in extensions.iter().enumerate() {
        params.push(Arg::Text(&json[j]));
        let list = params.len();
        for i in 0..extra.len() {
            ctes.push(scored(&format!("x{j}_{i}"), "s", &format!("json_extract(?{list}, '$[{i}]')")));
        }
        let rows: Vec<String> = (0..extra.len()).map(|i| format!("SELECT rowid FROM x{j}_{i}")).collect();
        ctes.push(format!("e{j} AS MATERIALIZED ({})", rows.join(" UNION ")));
        let sum = (0..extra.len())
            .fold("c.score".to_string(), |acc, i| format!("({acc} + IFNULL(x{j}_{i}.s, 0.0))"));
        let joins: String =
            (0..extra.len()).map(|i| format!(" LEFT JOIN x{j}_{i} ON x{j}_{i}.rowid = c.rowid")).collect();
        ctes.push(format!(
            "b{j} AS MATERIALIZED (SELECT c.rowid AS rowid, {sum} AS score FROM \
               (SELECT rowid, min(score) AS score FROM ( \
                  SELECT rowid, score FROM k \
                    WHERE score <= IFNULL((SELECT score FROM k ORDER BY score LIMIT 1 OFFSET {limit} - 1), score) \
                  UNION ALL SELECT rowid, score FROM k WHERE rowid IN (SELECT rowid FROM e{j}) \
                  UNION ALL SELECT rowid, 0.0 FROM e{j}) GROUP BY rowid) c{joins})"
        ));
        selects.push(best(&format!("b{j}"), j + 1));
    }
    let sql = format!("WITH {} {}", ctes.join(", "), selects.join(" UNION ALL "));
    debug_assert!(params.len() <= MAX_PARAMS);
    db.stmt(&sql, &params).map_err(port("keyword-index"))
}

/// The statements over the shared index for namespaces written before they had their own.
/// CROSS JOIN pins the plan to "FTS5 drives, chunks looked up by rowid". Left free, SQLite may
/// walk the namespace's rows through the (namespace, id) index and probe the full-text query once
/// per row instead: at 5,000 rows a namespace that is ~2,000× slower (minutes, not milliseconds),
/// and which plan it picks depends on statistics.
fn shared_statements(
    db: &Db,
    namespaces: &[&String],
    expr: &str,
    bound: &Bound,
) -> Result<Vec<D1PreparedStatement>, PortError> {
    let filter_values = bound.languages.len() + bound.globs.len() + bound.tags.len();
    // Namespaces per statement: what the query, filters and limit leave of the 100 parameters.
    let per_statement = MAX_PARAMS - 2 - filter_values;
    let mut statements = Vec::new();
    for group in namespaces.chunks(per_statement) {
        // The filters on `c` (the chunk row), placeholders after the query and namespaces.
        let (conditions, values) =
            filter_conditions("c", group.len() + 2, &bound.languages, &bound.globs, &bound.tags);
        let filter: String = conditions.iter().map(|c| format!(" AND {c}")).collect();
        let limit_param = group.len() + values.len() + 2;
        let sql = format!(
            "SELECT 0 AS list, c.namespace AS namespace, c.id AS id, bm25(chunks_fts, {weights}) AS score \
             FROM chunks_fts CROSS JOIN chunks c ON c.rowid = chunks_fts.rowid \
             WHERE chunks_fts MATCH ?1 AND c.namespace IN ({}){filter} ORDER BY score, c.id LIMIT ?{limit_param}",
            numbered_placeholders(2, group.len()),
            weights = bm25_weights()
        );
        let mut params: Vec<Arg> = vec![Arg::Text(expr)];
        params.extend(group.iter().map(|n| Arg::Text(n.as_str())));
        params.extend(values);
        params.push(Arg::Int(bound.limit as i64));
        debug_assert!(params.len() <= MAX_PARAMS);
        statements.push(db.stmt(&sql, &params).map_err(port("keyword-index"))?);
    }
    Ok(statements)
}

fn bm25_weights() -> String {
    let [w0, w1, w2] = BM25_WEIGHTS;
    format!("{w0:.1}, {w1:.1}, {w2:.1}")
}

impl D1Search {
    /// Of the phrases `asked` per namespace (each with its own index, all in `db`), those its index
    /// holds no row of: one statement per namespace, one round trip (none when nothing is asked).
    async fn absent_phrases(
        &self,
        db: &Db,
        asked: Vec<(&String, Vec<String>)>,
    ) -> Result<HashMap<String, Vec<String>>, PortError> {
        #[derive(Deserialize)]
        struct Present {
            phrase: String,
        }
        let asked: Vec<(&String, Vec<String>)> = asked.into_iter().filter(|(_, p)| !p.is_empty()).collect();
        if asked.is_empty() {
            return Ok(HashMap::new());
        }
        let mut statements = Vec::new();
        for (ns, phrases) in &asked {
            let t = crate::store::keyword::table(ns);
            let list =
                serde_json::to_string(phrases).map_err(|e| PortError::new("keyword-index", e.to_string()))?;
            statements.push(
                db.stmt(
                    &format!(
                        "SELECT j.value AS phrase FROM json_each(?1) j \
                         WHERE EXISTS (SELECT 1 FROM {t} WHERE {t} MATCH j.value)"
                    ),
                    &[Arg::Text(&list)],
                )
                .map_err(port("keyword-index"))?,
            );
        }
        let present: Vec<Vec<Present>> = db.batch_rows(statements).await.map_err(port("keyword-index"))?;
        Ok(asked
            .into_iter()
            .zip(present)
            .map(|((ns, phrases), present)| {
                let absent =
                    phrases.into_iter().filter(|p| !present.iter().any(|r| &r.phrase == p)).collect();
                (ns.clone(), absent)
            })
            .collect())
    }

    /// Every query's hits (best first, ties by id, at most its limit), all queries of a database
    /// in one batch: a statement serves every query that asks the same of the same namespace;
    /// queries whose phrases differ only by phrases a namespace's own index does not hold ask the
    /// same of it ([`mergeable_phrases`]); and a query whose phrases extend another's is ranked in
    /// the other's statement ([`shared_scoring`]). The ids and scores are exactly those of each
    /// query alone.
    async fn keyword_searches(&self, queries: &[KeywordQuery]) -> Result<Vec<Vec<ScoredKey>>, PortError> {
        let phrases: Vec<Vec<String>> = queries.iter().map(|q| fts5_phrases(&q.terms)).collect();
        let live: Vec<usize> = (0..queries.len())
            .filter(|&i| !phrases[i].is_empty() && !queries[i].namespaces.is_empty() && queries[i].limit > 0)
            .collect();
        // Queries that ask the same but for their terms share a shape: only they can share statements.
        let same_ask = |a: &KeywordQuery, b: &KeywordQuery| {
            a.namespaces == b.namespaces && a.filters == b.filters && a.limit == b.limit
        };
        let shape: Vec<usize> = (0..queries.len())
            .map(|i| (0..i).find(|&j| same_ask(&queries[j], &queries[i])).unwrap_or(i))
            .collect();
        let bound: Vec<Bound> = queries.iter().map(Bound::of).collect();
        let mut all_namespaces: Vec<String> =
            live.iter().flat_map(|&i| queries[i].namespaces.iter().cloned()).collect();
        all_namespaces.sort();
        all_namespaces.dedup();
        let mut hits: Vec<Vec<ScoredKey>> = vec![Vec::new(); queries.len()];
        // Each query's phrases as a copy reads them; `None` when FTS5 might read one otherwise.
        let copy_phrases: Vec<Option<Vec<Phrase>>> = queries
            .iter()
            .map(|q| q.terms.iter().filter_map(Phrase::of).map(|(p, exact)| exact.then_some(p)).collect())
            .collect();
        for (db, namespaces) in self.by_database(&all_namespaces, |n| n.as_str(), "keyword-index").await? {
            let (mut own, generations) = self.own_indexes(&db, &namespaces).await?;
            // Namespaces at rest are answered from their in-memory copies; the rest below.
            let copied = self.copies_for(&db, &own, &generations, queries, &live, &copy_phrases).await;
            for (ns, copy) in &copied {
                for &i in live.iter().filter(|&&i| queries[i].namespaces.contains(ns)) {
                    let Some(phrases) = &copy_phrases[i] else { continue };
                    let matcher = queries[i].filters.matcher();
                    self.copy_answers.set(self.copy_answers.get() + 1);
                    hits[i].extend(
                        copy.search(phrases, &matcher, queries[i].limit).into_iter().map(|h| ScoredKey {
                            key: ChunkKey::new(ns.clone(), h.id),
                            score: h.score as f32,
                        }),
                    );
                }
                own.remove(ns);
            }
            let namespaces: Vec<&String> =
                namespaces.into_iter().filter(|ns| !copied.contains_key(ns.as_str())).collect();
            let asks = |i: usize, ns: &String| live.contains(&i) && queries[i].namespaces.contains(ns);
            // Per own index, the phrases that could let queries of one shape share a ranking.
            let asked: Vec<(&String, Vec<String>)> = namespaces
                .iter()
                .copied()
                .filter(|ns| own.contains(ns.as_str()))
                .map(|ns| {
                    let mut candidates: Vec<String> = Vec::new();
                    for s in live.iter().copied().filter(|&i| shape[i] == i) {
                        let lists: Vec<Vec<String>> = (0..queries.len())
                            .filter(|&i| shape[i] == s && asks(i, ns))
                            .map(|i| phrases[i].clone())
                            .collect();
                        for p in mergeable_phrases(&lists) {
                            if !candidates.contains(&p) {
                                candidates.push(p);
                            }
                        }
                    }
                    (ns, candidates)
                })
                .collect();
            let absent = self.absent_phrases(&db, asked).await?;
            let mut statements = Vec::new();
            // Per statement, per list it ranks, the queries that list answers.
            let mut serves: Vec<Vec<Vec<usize>>> = Vec::new();
            // Own indexes: per namespace and shape, the distinct lists without the phrases the
            // index lacks, scored together where one extends another.
            for ns in namespaces.iter().copied().filter(|ns| own.contains(ns.as_str())) {
                let gone = absent.get(ns.as_str()).map_or(&[][..], Vec::as_slice);
                for s in live.iter().copied().filter(|&i| shape[i] == i) {
                    let mut lists: Vec<Vec<String>> = Vec::new();
                    let mut askers: Vec<Vec<usize>> = Vec::new();
                    for i in (0..queries.len()).filter(|&i| shape[i] == s && asks(i, ns)) {
                        let reduced = without_absent(&phrases[i], gone);
                        if reduced.is_empty() {
                            continue; // nothing the index holds: no match
                        }
                        match lists.iter().position(|l| *l == reduced) {
                            Some(k) => askers[k].push(i),
                            None => {
                                lists.push(reduced);
                                askers.push(vec![i]);
                            }
                        }
                    }
                    for group in shared_scoring(&lists, MAX_EXTRA_PHRASES) {
                        let base = &lists[group.base];
                        let extras: Vec<Vec<String>> =
                            group.extensions.iter().map(|&e| lists[e][base.len()..].to_vec()).collect();
                        statements.push(own_statement(&db, ns, &base.join(" OR "), &extras, &bound[s])?);
                        serves.push(
                            std::iter::once(group.base)
                                .chain(group.extensions)
                                .map(|l| askers[l].clone())
                                .collect(),
                        );
                    }
                }
            }
            // Namespaces written before they had their own index: the shared one, per distinct
            // expression and shape.
            let mut keyed: HashMap<(String, usize), Vec<usize>> = HashMap::new();
            for &i in &live {
                let shared: Vec<&String> = namespaces
                    .iter()
                    .copied()
                    .filter(|ns| asks(i, ns) && !own.contains(ns.as_str()))
                    .collect();
                if shared.is_empty() {
                    continue;
                }
                let key = (phrases[i].join(" OR "), shape[i]);
                if let Some(ids) = keyed.get(&key) {
                    ids.iter().for_each(|&k| serves[k][0].push(i));
                    continue;
                }
                let made = shared_statements(&db, &shared, &key.0, &bound[i])?;
                let ids: Vec<usize> = (statements.len()..statements.len() + made.len()).collect();
                statements.extend(made);
                serves.extend(ids.iter().map(|_| vec![vec![i]]));
                keyed.insert(key, ids);
            }
            if statements.is_empty() {
                continue;
            }
            let rows: Vec<Vec<Hit>> = db.batch_rows(statements).await.map_err(port("keyword-index"))?;
            for (rows, lists) in rows.into_iter().zip(serves) {
                for h in rows {
                    for &i in lists.get(h.list).map_or(&[][..], Vec::as_slice) {
                        hits[i].push(ScoredKey {
                            key: ChunkKey::new(h.namespace.clone(), h.id.clone()),
                            score: -h.score as f32,
                        });
                    }
                }
            }
        }
        for (q, h) in queries.iter().zip(&mut hits) {
            // FTS5's bm25() is "lower is better"; the rows were turned into higher-is-better.
            h.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
            h.truncate(q.limit);
        }
        Ok(hits)
    }
}

#[async_trait::async_trait(?Send)]
impl KeywordIndex for D1Search {
    async fn search(&self, q: &KeywordQuery) -> Result<Vec<ScoredKey>, PortError> {
        Ok(self.keyword_searches(std::slice::from_ref(q)).await?.pop().unwrap_or_default())
    }

    async fn search_many(&self, queries: &[KeywordQuery]) -> Vec<Result<Vec<ScoredKey>, PortError>> {
        match self.keyword_searches(queries).await {
            Ok(hits) => hits.into_iter().map(Ok).collect(),
            Err(e) => queries.iter().map(|_| Err(e.clone())).collect(),
        }
    }
}

/// The columns a chunk is rebuilt from (not `search_text`, which is only for FTS).
const CHUNK_SELECT: &str =
    "SELECT namespace, id, path, chunk_index, language, type, text, text_hash, start_line, \
     end_line, start_byte, end_byte, token_count, keywords, metadata, updated_at, version, tags FROM chunks";

#[derive(Deserialize)]
struct Row {
    namespace: String,
    id: String,
    path: String,
    chunk_index: i64,
    language: String,
    #[serde(rename = "type")]
    chunk_type: String,
    text: String,
    text_hash: String,
    start_line: i64,
    end_line: i64,
    start_byte: i64,
    end_byte: i64,
    token_count: i64,
    keywords: String,
    metadata: String,
    updated_at: Option<String>,
    version: i64,
    tags: String,
}

impl Row {
    fn record(self) -> ChunkRecord {
        let chunk_type: ChunkType = serde_json::from_value(serde_json::Value::String(self.chunk_type))
            .unwrap_or(ChunkType::TextBlock);
        let metadata: ChunkMetadata = serde_json::from_str(&self.metadata).unwrap_or_default();
        ChunkRecord {
            namespace: self.namespace,
            chunk: Chunk {
                id: self.id,
                text_hash: self.text_hash,
                path: self.path,
                language: Language::from_name(&self.language).unwrap_or(Language::Text),
                chunk_type,
                text: self.text,
                start_line: self.start_line.max(0) as u32,
                end_line: self.end_line.max(0) as u32,
                start_byte: self.start_byte.max(0) as usize,
                end_byte: self.end_byte.max(0) as usize,
                chunk_index: self.chunk_index.max(0) as u32,
                token_count: self.token_count.max(0) as u32,
                keywords: serde_json::from_str(&self.keywords).unwrap_or_default(),
                metadata,
                updated_at: self.updated_at,
                version: self.version.max(0) as u32,
            },
            tags: edgerag_core::tags::from_column(&self.tags),
        }
    }
}

impl D1Search {
    async fn rows(
        db: &Db,
        statements: Vec<worker::D1PreparedStatement>,
    ) -> Result<Vec<ChunkRecord>, PortError> {
        let groups: Vec<Vec<Row>> = db.batch_rows(statements).await.map_err(port("chunk-store"))?;
        Ok(groups.into_iter().flatten().map(Row::record).collect())
    }
}

#[async_trait::async_trait(?Send)]
impl ChunkStore for D1Search {
    async fn get(&self, keys: &[ChunkKey]) -> Result<Vec<ChunkRecord>, PortError> {
        let mut out = Vec::new();
        for (db, keys) in self.by_database(keys, |k| k.namespace.as_str(), "chunk-store").await? {
            let mut by_ns: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
            for k in keys {
                by_ns.entry(k.namespace.as_str()).or_default().push(k.id.as_str());
            }
            let mut statements = Vec::new();
            for (ns, ids) in by_ns {
                for group in ids.chunks(MAX_PARAMS - 1) {
                    let mut params: Vec<Arg> = vec![Arg::Text(ns)];
                    params.extend(group.iter().map(|id| Arg::Text(id)));
                    let sql = format!(
                        "{CHUNK_SELECT} WHERE namespace = ? AND id IN ({})",
                        placeholders(group.len())
                    );
                    statements.push(db.stmt(&sql, &params).map_err(port("chunk-store"))?);
                }
            }
            out.extend(Self::rows(&db, statements).await?);
        }
        Ok(out)
    }

    async fn neighbors(&self, ranges: &[NeighborRange]) -> Result<Vec<ChunkRecord>, PortError> {
        let mut out = Vec::new();
        for (db, ranges) in self.by_database(ranges, |r| r.namespace.as_str(), "chunk-store").await? {
            let mut statements = Vec::new();
            for group in ranges.chunks(MAX_PARAMS / 4) {
                let clause =
                    vec!["(namespace = ? AND path = ? AND chunk_index BETWEEN ? AND ?)"; group.len()]
                        .join(" OR ");
                let mut params: Vec<Arg> = Vec::with_capacity(group.len() * 4);
                for r in group {
                    params.extend([
                        Arg::Text(&r.namespace),
                        Arg::Text(&r.path),
                        Arg::Int(i64::from(r.from_index)),
                        Arg::Int(i64::from(r.to_index)),
                    ]);
                }
                let sql = format!("{CHUNK_SELECT} WHERE {clause} ORDER BY namespace, path, chunk_index");
                statements.push(db.stmt(&sql, &params).map_err(port("chunk-store"))?);
            }
            out.extend(Self::rows(&db, statements).await?);
        }
        Ok(out)
    }

    async fn families(&self, families: &[SymbolFamily], limit: usize) -> Result<Vec<ChunkRecord>, PortError> {
        let mut out = Vec::new();
        for (db, families) in self.by_database(families, |f| f.namespace.as_str(), "chunk-store").await? {
            let mut statements = Vec::new();
            for f in families {
                let sql = format!(
                "{CHUNK_SELECT} WHERE namespace = ? AND path = ? AND (parent_symbol = ? OR symbol_name = ?) \
                 ORDER BY chunk_index LIMIT ?"
            );
                let params = [
                    Arg::Text(&f.namespace),
                    Arg::Text(&f.path),
                    Arg::Text(&f.symbol),
                    Arg::Text(&f.symbol),
                    Arg::Int(limit as i64),
                ];
                statements.push(db.stmt(&sql, &params).map_err(port("chunk-store"))?);
            }
            out.extend(Self::rows(&db, statements).await?);
        }
        Ok(out)
    }

    async fn prose_families(&self, children: &[ChunkKey]) -> Result<Vec<ProseFamily>, PortError> {
        self.prose_families_d1(children).await
    }

    async fn graph_links(
        &self,
        namespaces: &[String],
        queries: &[SymbolQuery],
        per_query: usize,
    ) -> Result<GraphLinks, PortError> {
        let mut out = GraphLinks::default();
        let err = |e: worker::Error| PortError::new("code-graph", e.to_string());
        for (db, nss) in self.by_database(namespaces, |n| n.as_str(), "code-graph").await? {
            // One round trip per database: which namespaces have a graph, then the callees and
            // the callers of every asked chunk of the database (two statements).
            let mut statements = Vec::new();
            for group in nss.chunks(MAX_PARAMS) {
                let sql = format!(
                    "SELECT DISTINCT namespace FROM graph_files WHERE namespace IN ({})",
                    placeholders(group.len())
                );
                let params: Vec<Arg> = group.iter().map(|n| Arg::Text(n)).collect();
                statements.push(db.stmt(&sql, &params).map_err(port("code-graph"))?);
            }
            let graph_statements = statements.len();
            let mine: Vec<(usize, &SymbolQuery)> =
                queries.iter().enumerate().filter(|(_, q)| nss.iter().any(|n| **n == q.namespace)).collect();
            if !mine.is_empty() {
                // The asked chunks bound as one JSON array of
                // `[index, namespace, path, start, end, symbol id]`.
                let asked: Vec<serde_json::Value> = mine
                    .iter()
                    .map(|(qi, q)| {
                        serde_json::json!([qi, q.namespace, q.path, q.start_line, q.end_line, q.symbol_id])
                    })
                    .collect();
                let asked = serde_json::Value::from(asked).to_string();
                let params = [Arg::Text(&asked), Arg::Int(per_query as i64)];
                for sql in [USES_SQL, USED_BY_SQL] {
                    statements.push(db.stmt(sql, &params).map_err(port("code-graph"))?);
                }
            }
            if statements.is_empty() {
                continue;
            }
            let results = db.raw().batch(statements).await.map_err(err)?;
            let (graphs, links) = results.split_at(graph_statements.min(results.len()));
            for r in graphs {
                out.with_graph
                    .extend(r.results::<GraphNamespace>().map_err(err)?.into_iter().map(|r| r.namespace));
            }
            for (direction, r) in [LinkDirection::Uses, LinkDirection::UsedBy].into_iter().zip(links) {
                let mut found: Vec<SymbolLink> = r
                    .results::<LinkRow>()
                    .map_err(err)?
                    .into_iter()
                    .filter(|r| r.query < queries.len())
                    .map(|r| SymbolLink {
                        query: r.query,
                        direction,
                        name: r.name,
                        path: r.path,
                        line: r.line.max(0) as u32,
                        confidence: r.confidence as f32,
                    })
                    .collect();
                found.sort_by(|a, b| a.query.cmp(&b.query).then_with(|| link_order(&queries[a.query], a, b)));
                out.links.extend(found);
            }
        }
        out.with_graph.sort();
        out.with_graph.dedup();
        Ok(out)
    }

    async fn chunks_at(&self, points: &[LinePoint]) -> Result<Vec<ChunkRecord>, PortError> {
        let mut out = Vec::new();
        for (db, points) in self.by_database(points, |p| p.namespace.as_str(), "chunk-store").await? {
            let mut statements = Vec::new();
            for group in points.chunks(MAX_PARAMS / 4) {
                let clause =
                    vec!["(namespace = ? AND path = ? AND start_line <= ? AND end_line >= ?)"; group.len()]
                        .join(" OR ");
                let mut params: Vec<Arg> = Vec::with_capacity(group.len() * 4);
                for p in group {
                    params.extend([
                        Arg::Text(&p.namespace),
                        Arg::Text(&p.path),
                        Arg::Int(i64::from(p.line)),
                        Arg::Int(i64::from(p.line)),
                    ]);
                }
                let sql = format!("{CHUNK_SELECT} WHERE {clause} ORDER BY namespace, path, chunk_index");
                statements.push(db.stmt(&sql, &params).map_err(port("chunk-store"))?);
            }
            let mut rows = Self::rows(&db, statements).await?;
            // Statements may overlap (two points of one chunk in different groups).
            rows.sort_by(|a, b| {
                (&a.namespace, &a.chunk.path, a.chunk.chunk_index).cmp(&(
                    &b.namespace,
                    &b.chunk.path,
                    b.chunk.chunk_index,
                ))
            });
            rows.dedup_by(|a, b| a.namespace == b.namespace && a.chunk.id == b.chunk.id);
            out.extend(rows);
        }
        Ok(out)
    }
}

/// The asked chunks of [`USES_SQL`] and [`USED_BY_SQL`], from the JSON array bound as `?1`.
macro_rules! asked_chunks {
    () => {
        "q AS MATERIALIZED ( \
           SELECT json_extract(value, '$[0]') AS query, json_extract(value, '$[1]') AS namespace, \
             json_extract(value, '$[2]') AS path, json_extract(value, '$[3]') AS start_line, \
             json_extract(value, '$[4]') AS end_line, json_extract(value, '$[5]') AS symbol_id \
           FROM json_each(?1))"
    };
}

/// Callees of chunks: for each asked chunk (`query`), the resolved calls made on its lines, one row
/// per callee (its best edge), located at the callee's definition; the best `?2` by [`link_order`],
/// ties by the callee's id.
///
/// Each chunk's call sites are found first, by file and line (`MATERIALIZED`): left to itself the
/// planner walks the whole namespace's edges in callee order to save the `GROUP BY` a sort, a cost
/// that grows with the repository instead of with the chunk; `CROSS JOIN` keeps the asked chunks
/// the outer loop. All chunks go in one statement: a statement costs far more to send and run than
/// these few index seeks.
pub(crate) const USES_SQL: &str = concat!(
    "WITH ",
    asked_chunks!(),
    ", e AS MATERIALIZED ( \
       SELECT q.query, g.dst, MAX(g.confidence) AS confidence \
       FROM q CROSS JOIN graph_edges g ON g.namespace = q.namespace AND g.path = q.path \
         AND g.line BETWEEN q.start_line AND q.end_line \
       WHERE g.kind = 'CALLS' AND g.dst IS NOT NULL \
       GROUP BY q.query, g.dst), \
     r AS ( \
       SELECT e.query, n.name, n.path, n.start_line AS line, e.confidence, ROW_NUMBER() OVER ( \
         PARTITION BY e.query ORDER BY e.confidence DESC, n.path <> q.path, \
           ABS(n.start_line - q.start_line), n.name, n.path, e.dst) AS rank \
       FROM e JOIN q ON q.query = e.query JOIN graph_nodes n ON n.namespace = q.namespace AND n.id = e.dst) \
     SELECT query, name, path, line, confidence FROM r WHERE rank <= ?2 ORDER BY query, rank"
);

/// Callers of chunks: for each asked chunk, resolved calls into its node or into a node defined on
/// its lines (calls from its own lines excluded), one row per calling node, located at its first
/// call site (a caller's calls are all in its own file); the best `?2` by [`link_order`], ties by
/// the caller's id. The called nodes and then their calls are found by seeks (`MATERIALIZED`, and
/// `CROSS JOIN` to keep the asked chunks outermost, as in [`USES_SQL`]: not a walk over the edges).
pub(crate) const USED_BY_SQL: &str = concat!(
    "WITH ",
    asked_chunks!(),
    ", t AS MATERIALIZED ( \
       SELECT q.query, n.id FROM q JOIN graph_nodes n ON n.namespace = q.namespace AND n.id = q.symbol_id \
       UNION \
       SELECT q.query, n.id FROM q JOIN graph_nodes n ON n.namespace = q.namespace AND n.path = q.path \
         AND n.start_line BETWEEN q.start_line AND q.end_line), \
     e AS MATERIALIZED ( \
       SELECT t.query, g.src, g.path, MIN(g.line) AS line, MAX(g.confidence) AS confidence \
       FROM t CROSS JOIN q ON q.query = t.query \
         CROSS JOIN graph_edges g ON g.namespace = q.namespace AND g.dst = t.id AND g.kind = 'CALLS' \
       WHERE NOT (g.path = q.path AND g.line BETWEEN q.start_line AND q.end_line) \
       GROUP BY t.query, g.src), \
     r AS ( \
       SELECT e.query, s.name, e.path, e.line, e.confidence, ROW_NUMBER() OVER ( \
         PARTITION BY e.query ORDER BY e.confidence DESC, e.path <> q.path, \
           ABS(e.line - q.start_line), s.name, e.path, e.src) AS rank \
       FROM e JOIN q ON q.query = e.query JOIN graph_nodes s ON s.namespace = q.namespace AND s.id = e.src) \
     SELECT query, name, path, line, confidence FROM r WHERE rank <= ?2 ORDER BY query, rank"
);

#[derive(Deserialize)]
struct LinkRow {
    query: usize,
    name: String,
    path: String,
    line: i64,
    confidence: f64,
}

#[derive(Deserialize)]
struct GraphNamespace {
    namespace: String,
}

#[derive(Deserialize)]
struct NamespaceRow {
    owner: String,
    name: String,
    status: String,
    ready_at: Option<String>,
    chunk_count: i64,
}

#[async_trait::async_trait(?Send)]
impl NamespaceCatalog for D1Search {
    async fn list(&self) -> Result<Vec<NamespaceInfo>, PortError> {
        let mut rows: Vec<NamespaceRow> = Vec::new();
        for db in self.stores.databases() {
            rows.extend(
                db.all::<NamespaceRow>(
                    "SELECT owner, name, status, ready_at, chunk_count FROM namespaces",
                    &[],
                )
                .await
                .map_err(port("namespaces"))?,
            );
        }
        Ok(rows
            .into_iter()
            .filter(|r| self.access.may_read(&r.owner, &r.name))
            .map(|r| NamespaceInfo {
                owner: r.owner,
                name: r.name,
                status: NamespaceStatus::parse(&r.status).unwrap_or(NamespaceStatus::Empty),
                ready_at: r.ready_at,
                chunk_count: r.chunk_count.max(0) as u64,
            })
            .collect())
    }
}
