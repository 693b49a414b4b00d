//! Per-node chunk plan runs (`POST /v1/repos/{owner}/{name}/plans`): one plan per code-graph
//! node, built by the core's `graph::plan`, run page by page from queue messages.
//!
//! A page message (`StageMessage::Plan`, on the embed queue) takes page after page for up to
//! `MESSAGE_BUDGET_MS`, then sends the next page's message. A page reads the next `page_size` nodes after
//! the run's cursor (highest priority first, then by id), the page's `CALLS` edges in one query,
//! and builds the plans. A dry run only counts them. Otherwise each plan runs its stages:
//! `render-doc` (doc plans) or `extract-snippet` + `summarize` (code plans; the generator when one
//! is configured, else skipped and counted as skipped), `embed` (the content, through the
//! embedding cache) and `link-edges` (the "uses / used by" text). The page's chunks (type
//! `symbol-plan`, ids from the plan ids) are upserted into the vector index, then D1 — chunks
//! (FTS follows by trigger) and the run's counters — in one transaction whose counter update only
//! applies if the page is still the run's next one. A redelivered page thus rewrites the same rows
//! and counts nothing twice; a delivery that finds its page counted by another stops.
use std::collections::{BTreeSet, HashMap};

use edgerag_core::embed::embed_cached;
use edgerag_core::graph::plan::{self, ChunkPlan, Link, PlanSource, RunOptions, WRITE_BATCH};
use edgerag_core::graph::{Edge, EdgeKind, Resolution};
use edgerag_core::vector::VectorRecord;
use edgerag_search::ports::GenerateRequest;

use super::messages::{PlanPage, StageMessage};
use super::{producer, Ctx, StageError};
use crate::api::{PlanParams, PlanRunError, PlanRunStatus, PlanRunView};
use crate::error::ApiError;
use crate::http::ApiResult;
use crate::store::chunks::{self, ChunkRow};
use crate::store::plans::{self as store, NewRun, PageCounts, PageEdge, PlanRunRow};

/// Vectors per upsert call.
const VECTOR_BATCH: usize = 500;
/// `summarize` calls in flight at once.
const SUMMARIZE_CONCURRENCY: usize = 8;
/// Wall time a page message keeps taking pages before handing the run to the next message.
const MESSAGE_BUDGET_MS: f64 = 10_000.0;
/// Source lines given to the generator at most.
const SUMMARIZE_MAX_LINES: usize = 200;

/// Record a run and send its first page. The caller checked the repository exists.
pub async fn start(
    ctx: &Ctx,
    namespace: &str,
    options: &RunOptions,
    dry_run: bool,
    with_edges: bool,
) -> ApiResult<PlanRunRow> {
    let id = super::new_id("plan", namespace);
    let kinds: Option<Vec<String>> =
        options.kinds.as_ref().map(|k| k.iter().map(|k| k.as_str().to_string()).collect());
    store::insert_run(
        &ctx.db,
        &NewRun {
            id: &id,
            namespace,
            strategy: &options.strategy,
            dry_run,
            page_size: options.page_size,
            limit_nodes: options.limit_nodes,
            include_kinds: kinds.as_deref(),
            with_edges,
            warnings: &options.warnings,
            now: &crate::time::now_iso(),
        },
    )
    .await?;
    let first = [StageMessage::plan(namespace, &id, 0)];
    if let Err(e) = producer::send(&ctx.env, &first, ctx.cfg.deliver_twice).await {
        let now = crate::time::now_iso();
        let error =
            PlanRunError { code: "QUEUE_UNAVAILABLE".into(), message: e.to_string(), at: now.clone() };
        let _ =
            store::record_error(&ctx.db, &id, &serde_json::to_string(&error).unwrap_or_default(), true, &now)
                .await;
        return Err(ApiError::new(503, "QUEUE_UNAVAILABLE", e.to_string()));
    }
    store::get_run(&ctx.db, namespace, &id)
        .await?
        .ok_or_else(|| ApiError::internal("plan run", "the run just written is missing"))
}

/// The API view of a run.
pub fn view(row: &PlanRunRow, owner: &str, name: &str) -> PlanRunView {
    let status = PlanRunStatus::parse(&row.status).unwrap_or(PlanRunStatus::Failed);
    let duration_ms = match (row.duration_ms, &row.started_at) {
        (Some(d), _) if status.is_final() || row.pages > 0 => d.max(0) as u64,
        (_, Some(started)) => elapsed_ms(started),
        _ => 0,
    };
    let processed = row.processed_nodes.max(0) as u64;
    let rate = if duration_ms > 0 { processed as f64 * 1000.0 / duration_ms as f64 } else { 0.0 };
    PlanRunView {
        id: row.id.clone(),
        owner: owner.to_string(),
        name: name.to_string(),
        strategy: row.strategy.clone(),
        status,
        params: PlanParams {
            dry_run: row.dry_run != 0,
            batch_size: row.page_size.max(0) as u32,
            limit_nodes: row.limit_nodes.map(|l| l.max(0) as u64),
            include_kinds: row.kinds(),
            with_edges_relations: row.with_edges != 0,
        },
        processed_nodes: processed,
        written_chunks: row.written_chunks.max(0) as u64,
        skipped_chunks: row.skipped_chunks.max(0) as u64,
        summarized_chunks: row.summarized_chunks.max(0) as u64,
        summarize_skipped: row.summarize_skipped.max(0) as u64,
        pages: row.pages.max(0) as u64,
        duration_ms,
        rate: (rate * 100.0).round() / 100.0,
        warnings: serde_json::from_str(&row.warnings).unwrap_or_default(),
        last_error: row.last_error.as_deref().and_then(|e| serde_json::from_str::<PlanRunError>(e).ok()),
        created_at: row.created_at.clone(),
        started_at: row.started_at.clone(),
        completed_at: row.completed_at.clone(),
    }
}

fn elapsed_ms(since: &str) -> u64 {
    crate::time::ms_from_iso(since).map_or(0, |t| (crate::time::now_ms() - t).max(0.0) as u64)
}

/// Run one page; on failure keep the error on the run, and fail the run when the message will not
/// be delivered again.
pub async fn run(ctx: &Ctx, msg: &PlanPage) -> Result<(), StageError> {
    let db = ctx.stores.for_namespace(&msg.namespace).await?;
    let ctx = &ctx.on(db);
    match run_page(ctx, msg).await {
        Ok(()) => Ok(()),
        Err(e) => {
            let give_up = !e.retryable || ctx.attempt.get() >= ctx.cfg.max_attempts;
            let now = crate::time::now_iso();
            let error = serde_json::to_string(&PlanRunError {
                code: e.code.clone(),
                message: e.message.clone(),
                at: now.clone(),
            })
            .unwrap_or_default();
            let _ = store::record_error(&ctx.db, &msg.run_id, &error, give_up, &now).await;
            Err(e)
        }
    }
}

/// Pages of the run from `msg.page` on, while the message's time budget lasts; then the next page
/// goes on the queue (one queue hop per page would make the queue's batching delay the run's pace).
async fn run_page(ctx: &Ctx, msg: &PlanPage) -> Result<(), StageError> {
    let ns = msg.namespace.as_str();
    let began = crate::time::now_ms();
    let mut page = msg.page;
    loop {
        let Some(run) = store::get_run(&ctx.db, ns, &msg.run_id).await? else { return Ok(()) };
        let status = PlanRunStatus::parse(&run.status).unwrap_or(PlanRunStatus::Failed);
        if status.is_final() {
            return Ok(());
        }
        if page != run.pages {
            if page == msg.page && page < run.pages {
                // Already counted: a redelivery, maybe of the message whose successor was never
                // sent. Sending the run's next page again is harmless (it counts once).
                producer::send(&ctx.env, &[StageMessage::plan(ns, &run.id, run.pages)], false).await?;
            }
            return Ok(());
        }
        match one_page(ctx, &run).await? {
            PageOutcome::Done | PageOutcome::Lost => return Ok(()),
            PageOutcome::More => page += 1,
        }
        if crate::time::now_ms() - began > MESSAGE_BUDGET_MS {
            producer::send(&ctx.env, &[StageMessage::plan(ns, &run.id, page)], ctx.cfg.deliver_twice).await?;
            return Ok(());
        }
    }
}

enum PageOutcome {
    /// The run is finished.
    Done,
    /// Counted; more pages follow.
    More,
    /// Another delivery counted this page first.
    Lost,
}

/// Page `run.pages` of the run: read, plan, run the stages, write, count.
async fn one_page(ctx: &Ctx, run: &PlanRunRow) -> Result<PageOutcome, StageError> {
    let ns = run.namespace.as_str();
    let mut timings = Timings::start();
    store::mark_started(&ctx.db, &run.id, &crate::time::now_iso()).await?;
    let remaining = run.limit_nodes.map(|l| (l - run.processed_nodes).max(0) as u64);
    let size = remaining.map_or(run.page_size as u64, |r| r.min(run.page_size as u64)) as u32;
    let cursor = run.cursor_priority.zip(run.cursor_id.as_deref());
    let kinds = run.kinds();
    let nodes = if size == 0 {
        Vec::new()
    } else {
        store::node_page(&ctx.db, ns, kinds.as_deref(), cursor, size).await?
    };
    let edges = if run.with_edges != 0 && !nodes.is_empty() {
        let ids: Vec<String> = nodes.iter().map(|n| n.node.id.to_string()).collect();
        store::page_edges(&ctx.db, ns, &ids).await?
    } else {
        Vec::new()
    };
    let core_edges: Vec<Edge> = edges.iter().map(core_edge).collect();
    let plans: Vec<ChunkPlan> = nodes.iter().map(|n| plan::build_plan(&n.node, &core_edges)).collect();
    timings.lap("readMs");

    let mut counts = PageCounts { processed: plans.len() as u64, ..PageCounts::default() };
    let mut statements = Vec::new();
    if run.dry_run != 0 {
        counts.skipped = plans.len() as u64;
    } else if !plans.is_empty() {
        let written = write_plans(ctx, ns, &nodes, &plans, &edges, &mut counts, &mut timings).await?;
        statements.extend(written);
    }
    let done = (nodes.len() as u32) < size || size == 0 || remaining.is_some_and(|r| r <= nodes.len() as u64);
    let last = nodes.last().map(|n| (n.priority, &*n.node.id));
    let now = crate::time::now_iso();
    statements.push(store::advance_statement(&ctx.db, &run.id, run.pages, &counts, last, done, &now)?);
    let changes = ctx.db.batch(statements).await?;
    let counted = changes.last().copied().unwrap_or(0) > 0;
    timings.lap("writeMs");
    let (page_no, node_count, written) =
        (run.pages.to_string(), nodes.len().to_string(), counts.written.to_string());
    let laps: Vec<(&str, String)> = timings.laps.iter().map(|(k, v)| (*k, format!("{v:.0}"))).collect();
    let mut fields: Vec<(&str, &str)> = vec![
        ("namespace", ns),
        ("run", &run.id),
        ("page", &page_no),
        ("nodes", &node_count),
        ("written", &written),
        ("counted", if counted { "true" } else { "false" }),
        ("done", if done { "true" } else { "false" }),
    ];
    fields.extend(laps.iter().map(|(k, v)| (*k, v.as_str())));
    crate::log::info("plan_page", &fields);
    Ok(match (counted, done) {
        (false, _) => PageOutcome::Lost,
        (true, true) => PageOutcome::Done,
        (true, false) => PageOutcome::More,
    })
}

/// Milliseconds spent per step of a page (logged with `plan_page`).
struct Timings {
    last: f64,
    laps: Vec<(&'static str, f64)>,
}

impl Timings {
    fn start() -> Timings {
        Timings { last: crate::time::now_ms(), laps: Vec::new() }
    }

    fn lap(&mut self, name: &'static str) {
        let now = crate::time::now_ms();
        self.laps.push((name, now - self.last));
        self.last = now;
    }
}

fn core_edge(e: &PageEdge) -> Edge {
    Edge {
        kind: EdgeKind::Calls,
        src: e.src.as_str().into(),
        dst: e.dst.as_deref().map(Into::into),
        dst_name: e.dst_name.clone(),
        confidence: e.confidence as f32,
        resolution: serde_json::from_value(serde_json::Value::String(e.resolution.clone()))
            .unwrap_or(Resolution::External),
        path: e.path.as_str().into(),
        line: e.line.max(0) as u32,
        hint: None,
    }
}

/// The stages of every plan of a page; returns the D1 statements writing its chunks (the vectors
/// are already upserted).
async fn write_plans(
    ctx: &Ctx,
    ns: &str,
    nodes: &[store::PageNode],
    plans: &[ChunkPlan],
    edges: &[PageEdge],
    counts: &mut PageCounts,
    timings: &mut Timings,
) -> Result<Vec<worker::D1PreparedStatement>, StageError> {
    // extract-snippet: the code plans' lines, from the indexed chunks of their files (one query).
    let spans: Vec<(String, u32, u32)> = plans
        .iter()
        .filter(|p| p.source == PlanSource::Code)
        .map(|p| (p.path.clone(), p.start_line, p.end_line))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let pieces = store::file_chunks(&ctx.db, ns, &spans).await?;
    let mut by_path: HashMap<&str, Vec<(u32, &str)>> = HashMap::new();
    for p in &pieces {
        by_path.entry(p.path.as_str()).or_default().push((p.start_line.max(1) as u32, p.text.as_str()));
    }
    let bodies: Vec<String> = plans
        .iter()
        .zip(nodes)
        .map(|(p, n)| match p.source {
            PlanSource::Doc => plan::render_doc(&n.node),
            PlanSource::Code => plan::lines_from_pieces(
                by_path.get(p.path.as_str()).map(Vec::as_slice).unwrap_or(&[]),
                p.start_line,
                p.end_line,
            ),
        })
        .collect();

    // summarize: code plans only, with the configured generator.
    timings.lap("snippetMs");
    let (summaries, generator) = summarize(ctx, plans, &bodies, counts).await;
    timings.lap("summarizeMs");

    // link-edges: what each node calls and what calls it.
    let mut uses: HashMap<&str, Vec<Link>> = HashMap::new();
    let mut used_by: HashMap<&str, Vec<Link>> = HashMap::new();
    for e in edges {
        let confidence = e.confidence as f32;
        uses.entry(e.src.as_str()).or_default().push(Link {
            name: e.dst_fqn.clone().unwrap_or_else(|| e.dst_name.clone()),
            confidence,
            external: e.dst.is_none(),
        });
        if let (Some(dst), Some(src_fqn)) = (&e.dst, &e.src_fqn) {
            used_by.entry(dst.as_str()).or_default().push(Link {
                name: src_fqn.clone(),
                confidence,
                external: false,
            });
        }
    }

    let none = plan::LinkText::default();
    let mut chunks_out = Vec::with_capacity(plans.len());
    let mut texts = Vec::with_capacity(plans.len());
    for ((p, body), summary) in plans.iter().zip(&bodies).zip(&summaries) {
        // embed covers the content (rendered doc, or snippet and summary); link-edges then adds
        // the relations to the stored, full-text-indexed chunk.
        let content = plan::plan_chunk(p, body, summary.as_deref(), &none);
        texts.push(edgerag_core::text::embedding_text(&content));
        let links = plan::link_text(
            uses.get(p.node_id.as_str()).map(Vec::as_slice).unwrap_or(&[]),
            used_by.get(p.node_id.as_str()).map(Vec::as_slice).unwrap_or(&[]),
        );
        chunks_out.push((plan::plan_chunk(p, body, summary.as_deref(), &links), links));
    }
    let embedder = crate::embed::embedder_from_env(&ctx.env)?;
    let cache = crate::embed::embedding_cache_from_env(&ctx.env)?;
    let (vectors, _) = embed_cached(&*embedder, &cache, &texts).await?;
    timings.lap("embedMs");
    if vectors.len() != texts.len() {
        return Err(StageError::retryable(
            "EMBED_WRONG_COUNT",
            format!("{} vectors for {} texts", vectors.len(), texts.len()),
        ));
    }
    let index = crate::vector::vector_index_from_env(&ctx.env)?;
    let records: Vec<VectorRecord> = chunks_out
        .iter()
        .zip(&vectors)
        .map(|((c, _), v)| VectorRecord::of_chunk(c, v.clone(), &[]))
        .collect();
    for group in records.chunks(VECTOR_BATCH) {
        index.upsert(ns, group).await?;
    }
    timings.lap("vectorsMs");

    let now = crate::time::now_iso();
    let mut statements = crate::store::keyword::ensure_statements(&ctx.db, ns)?;
    for (group_plans, group_chunks) in plans.chunks(WRITE_BATCH).zip(chunks_out.chunks(WRITE_BATCH)) {
        let rows: Vec<ChunkRow> = group_plans
            .iter()
            .zip(group_chunks)
            .zip(&summaries)
            .map(|((p, (c, links)), summary)| {
                let mut row = ChunkRow::new(c);
                row.metadata = plan_metadata(c, p, links, summary.is_some(), generator).to_string();
                row
            })
            .collect();
        statements.extend(chunks::upsert_chunks_statements(&ctx.db, ns, &now, &rows)?);
    }
    statements.push(ctx.db.stmt(
        "UPDATE namespaces SET chunk_count = (SELECT COUNT(*) FROM chunks WHERE namespace = ?1), \
                   updated_at = ?2 WHERE id = ?1",
        &crate::store::args![ns, &now],
    )?);
    counts.written = plans.len() as u64;
    Ok(statements)
}

/// The chunk's metadata plus the plan: its id, source and kind, relations, the "uses / used by"
/// text, and the pipeline it ran (stages, params, which stage was skipped).
fn plan_metadata(
    c: &edgerag_core::Chunk,
    p: &ChunkPlan,
    links: &plan::LinkText,
    summarized: bool,
    generator: bool,
) -> serde_json::Value {
    let mut meta = serde_json::to_value(&c.metadata).unwrap_or_else(|_| serde_json::json!({}));
    let skipped: Vec<&str> =
        if p.source == PlanSource::Code && !summarized { vec!["summarize"] } else { vec![] };
    let skip_reason = (!skipped.is_empty()).then_some(if generator {
        "generator failed"
    } else {
        "no generator configured"
    });
    if let Some(m) = meta.as_object_mut() {
        m.insert("planId".into(), p.id.clone().into());
        m.insert("symbolId".into(), p.node_id.clone().into());
        m.insert("source".into(), p.source.as_str().into());
        m.insert("kind".into(), p.kind.clone().into());
        m.insert("title".into(), p.title.clone().into());
        m.insert("sectionPath".into(), serde_json::json!(p.section_path));
        m.insert("relations".into(), serde_json::json!(p.relations));
        if let Some(u) = &links.uses_md {
            m.insert("usesMd".into(), u.clone().into());
        }
        if let Some(u) = &links.used_by_md {
            m.insert("usedByMd".into(), u.clone().into());
        }
        m.insert(
            "pipeline".into(),
            serde_json::json!({
                "stages": p.stages,
                "skipped": skipped,
                "skipReason": skip_reason,
                "service": { "strategy": p.strategy, "priority": p.priority },
            }),
        );
    }
    meta
}

/// `summarize` for the code plans: `Some(summary)` per plan that got one. Without a generator
/// every code plan's stage is skipped; a failed call skips only that plan (the chunk is still
/// written, with its snippet).
/// The flag says whether a generator is configured.
async fn summarize(
    ctx: &Ctx,
    plans: &[ChunkPlan],
    bodies: &[String],
    counts: &mut PageCounts,
) -> (Vec<Option<String>>, bool) {
    let mut out: Vec<Option<String>> = vec![None; plans.len()];
    let code: Vec<usize> = (0..plans.len()).filter(|i| plans[*i].source == PlanSource::Code).collect();
    let generator = match crate::model_clients::generator_from_env(&ctx.env) {
        Ok(Some(g)) => g,
        Ok(None) => {
            counts.summarize_skipped += code.len() as u64;
            return (out, false);
        }
        Err(e) => {
            crate::log::warn("plan_generator_unavailable", &[("detail", &e)]);
            counts.summarize_skipped += code.len() as u64;
            return (out, false);
        }
    };
    for group in code.chunks(SUMMARIZE_CONCURRENCY) {
        let calls = group.iter().map(|&i| {
            let p = &plans[i];
            let snippet: String = bodies[i].lines().take(SUMMARIZE_MAX_LINES).collect::<Vec<_>>().join("\n");
            let request = GenerateRequest {
                system: "You summarize source code for a code search index. Answer with one or two plain \
                         sentences saying what the code is and does; no preamble."
                    .into(),
                prompt: format!("{} `{}` in {}:\n\n{}", p.lang, p.title, p.path, snippet),
                max_tokens: 120,
                temperature: 0.0,
            };
            let generator = &generator;
            async move { generator.generate(&request).await }
        });
        let results = futures_util::future::join_all(calls).await;
        for (&i, result) in group.iter().zip(results) {
            match result {
                Ok(text) if !text.trim().is_empty() => {
                    out[i] = Some(text.trim().to_string());
                    counts.summarized += 1;
                }
                Ok(_) => counts.summarize_skipped += 1,
                Err(e) => {
                    crate::log::warn(
                        "plan_summarize_failed",
                        &[("plan", &plans[i].id), ("detail", &e.to_string())],
                    );
                    counts.summarize_skipped += 1;
                }
            }
        }
    }
    (out, true)
}
