//! Per-node chunk plans: one retrievable chunk per graph node, built from what the graph knows
//! about the symbol rather than from the file's layout.
//!
//! The `per-node` strategy makes, for every node, either
//! - a **doc plan** (`{nodeId}:doc:explanation`) when the node has a signature or a doc comment:
//!   stages `render-doc → embed → link-edges`, or
//! - a **code plan** (`{nodeId}:code:snippet`) otherwise: stages
//!   `extract-snippet → summarize → embed → link-edges`.
//!
//! Everything here is pure (the worker reads the nodes and edges, runs the model stages and
//! writes the chunks): the plan itself, its priority, its section path, the rendered doc text, the
//! human-readable "uses / used by" text and the final chunk.
use serde::{Deserialize, Serialize};

use super::types::{Edge, EdgeKind, Node, NodeKind};
use crate::chunk::{Chunk, ChunkConfig, ChunkMetadata, ChunkType, CHUNK_SCHEMA_VERSION};
use crate::{ids, keywords};

/// The only strategy: one plan per node.
pub const STRATEGY_PER_NODE: &str = "per-node";
/// Every strategy a run accepts.
pub const STRATEGIES: &[&str] = &[STRATEGY_PER_NODE];
/// Node page size bounds (`batchSize`): below the minimum a page costs more queries than it saves;
/// above the maximum one page's plans would not fit one write batch.
pub const MIN_PAGE_SIZE: u32 = 50;
pub const DEFAULT_PAGE_SIZE: u32 = 200;
pub const MAX_PAGE_SIZE: u32 = 1000;
/// Plans written per batch at most.
pub const WRITE_BATCH: usize = 1000;
/// Plan chunks are numbered from here within their file, so that a file's code chunks (numbered
/// from 0) and its plan chunks never count as each other's neighbours.
pub const PLAN_CHUNK_INDEX_BASE: u32 = 1 << 30;
/// Names listed per direction in the "uses / used by" text.
pub const MAX_LINKS: usize = 10;

/// Where a plan's content comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanSource {
    /// The node's signature and doc comment.
    Doc,
    /// The node's source text.
    Code,
}

impl PlanSource {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanSource::Doc => "doc",
            PlanSource::Code => "code",
        }
    }

    /// `explanation` for a doc plan, `snippet` for a code plan.
    pub fn kind(self) -> &'static str {
        match self {
            PlanSource::Doc => "explanation",
            PlanSource::Code => "snippet",
        }
    }

    pub fn stages(self) -> &'static [&'static str] {
        match self {
            PlanSource::Doc => &["render-doc", "embed", "link-edges"],
            PlanSource::Code => &["extract-snippet", "summarize", "embed", "link-edges"],
        }
    }
}

/// A hint that the node relates to another one (only `CALLS` today).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Relation {
    pub kind: String,
    /// `None` for an external callee, known by `dst_name` only.
    pub dst_node_id: Option<String>,
    pub dst_name: String,
    pub confidence: f32,
}

/// What to make of one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChunkPlan {
    /// `{nodeId}:{source}:{kind}`.
    pub id: String,
    pub node_id: String,
    pub source: PlanSource,
    pub kind: String,
    pub path: String,
    /// The code's language (the rendered doc is about that code).
    pub lang: String,
    pub start_line: u32,
    pub end_line: u32,
    /// The node's fully qualified name.
    pub title: String,
    pub section_path: Vec<String>,
    pub relations: Vec<Relation>,
    pub stages: Vec<String>,
    pub strategy: String,
    pub priority: i32,
}

/// Processing order: handlers and methods first, then classes, then the rest.
pub fn priority_for(kind: NodeKind) -> i32 {
    match kind {
        NodeKind::Endpoint | NodeKind::Method => 10,
        NodeKind::Class => 5,
        _ => 0,
    }
}

/// Whether the node is documented well enough to render instead of quoting its code.
pub fn has_doc(node: &Node) -> bool {
    let present = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.trim().is_empty());
    present(&node.signature) || present(&node.doc)
}

/// The package's parts and the node's name: `["com", "acme", "billing", "Invoice"]`. Packages are
/// split at `.`, `::` and `/` so every language's package notation gives parts.
pub fn section_path(node: &Node) -> Vec<String> {
    let mut out: Vec<String> = node
        .package
        .as_deref()
        .unwrap_or("")
        .split("::")
        .flat_map(|p| p.split(['.', '/']))
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    if !node.name.is_empty() {
        out.push(node.name.clone());
    }
    out
}

/// The node's plan. `edges` may hold any edges: only the node's own outgoing `CALLS` become
/// relations (with the confidence resolution gave them), in call-site order.
pub fn build_plan(node: &Node, edges: &[Edge]) -> ChunkPlan {
    let source = if has_doc(node) { PlanSource::Doc } else { PlanSource::Code };
    let mut calls: Vec<&Edge> =
        edges.iter().filter(|e| e.kind == EdgeKind::Calls && e.src == node.id).collect();
    calls.sort_by(|a, b| a.line.cmp(&b.line).then_with(|| a.dst_name.cmp(&b.dst_name)));
    ChunkPlan {
        id: format!("{}:{}:{}", node.id, source.as_str(), source.kind()),
        node_id: node.id.to_string(),
        source,
        kind: source.kind().to_string(),
        path: node.path.to_string(),
        lang: node.language.as_str().to_string(),
        start_line: node.start_line,
        end_line: node.end_line.max(node.start_line),
        title: node.fqn.clone(),
        section_path: section_path(node),
        relations: calls
            .into_iter()
            .map(|e| Relation {
                kind: EdgeKind::Calls.as_str().to_string(),
                dst_node_id: e.dst.as_deref().map(str::to_string),
                dst_name: e.dst_name.clone(),
                confidence: e.confidence,
            })
            .collect(),
        stages: source.stages().iter().map(|s| s.to_string()).collect(),
        strategy: STRATEGY_PER_NODE.to_string(),
        priority: priority_for(node.kind),
    }
}

/// Which of `requested` name node kinds (any case), and which are unknown (to warn about).
/// Duplicates collapse; the result is in [`NodeKind::ALL`] order.
pub fn parse_kinds(requested: &[String]) -> (Vec<NodeKind>, Vec<String>) {
    let mut unknown = Vec::new();
    let mut kinds = Vec::new();
    for raw in requested {
        match NodeKind::parse(raw) {
            Some(k) => kinds.push(k),
            None => unknown.push(raw.clone()),
        }
    }
    let kinds = NodeKind::ALL.into_iter().filter(|k| kinds.contains(k)).collect();
    (kinds, unknown)
}

/// A run's parameters once checked: defaults applied, the page size clamped into
/// `MIN_PAGE_SIZE..=MAX_PAGE_SIZE`, unknown kinds dropped; every adjustment is a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    pub strategy: String,
    pub page_size: u32,
    pub limit_nodes: Option<u64>,
    /// `None`: every kind.
    pub kinds: Option<Vec<NodeKind>>,
    pub warnings: Vec<String>,
}

/// A run request that cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunOptionsError {
    #[error("unknown strategy {0:?}; the strategies are: per-node")]
    UnknownStrategy(String),
    #[error("limitNodes must be at least 1")]
    InvalidLimit,
}

impl RunOptionsError {
    pub fn code(&self) -> &'static str {
        match self {
            RunOptionsError::UnknownStrategy(_) => "UNKNOWN_STRATEGY",
            RunOptionsError::InvalidLimit => "INVALID_LIMIT",
        }
    }
}

/// Check a run request. The strategy defaults to `per-node`; `batch_size` to
/// [`DEFAULT_PAGE_SIZE`], raised to [`MIN_PAGE_SIZE`] / lowered to [`MAX_PAGE_SIZE`] with a warning;
/// unknown kinds are ignored with a warning, and when no requested kind is known the run covers
/// every kind (an empty filter would plan nothing, which nobody asks for).
pub fn run_options(
    strategy: Option<&str>,
    batch_size: Option<u32>,
    limit_nodes: Option<u64>,
    include_kinds: Option<&[String]>,
) -> Result<RunOptions, RunOptionsError> {
    let strategy = strategy.map(str::trim).unwrap_or(STRATEGY_PER_NODE);
    if !STRATEGIES.iter().any(|s| s.eq_ignore_ascii_case(strategy)) {
        return Err(RunOptionsError::UnknownStrategy(strategy.to_string()));
    }
    if limit_nodes == Some(0) {
        return Err(RunOptionsError::InvalidLimit);
    }
    let mut warnings = Vec::new();
    let requested = batch_size.unwrap_or(DEFAULT_PAGE_SIZE);
    let page_size = requested.clamp(MIN_PAGE_SIZE, MAX_PAGE_SIZE);
    if page_size != requested {
        warnings.push(format!(
            "batchSize {requested} is outside {MIN_PAGE_SIZE}..={MAX_PAGE_SIZE}; using {page_size}"
        ));
    }
    let kinds = match include_kinds {
        None => None,
        Some(raw) => {
            let (kinds, unknown) = parse_kinds(raw);
            if !unknown.is_empty() {
                warnings.push(format!("includeKinds: ignored unknown kinds {unknown:?}"));
            }
            if kinds.is_empty() {
                if !raw.is_empty() {
                    warnings.push("includeKinds names no known kind; planning every kind".to_string());
                }
                None
            } else {
                Some(kinds)
            }
        }
    };
    Ok(RunOptions { strategy: STRATEGY_PER_NODE.to_string(), page_size, limit_nodes, kinds, warnings })
}

/// Lines `start..=end` of a file rebuilt from pieces `(first line, text)` of it that may overlap
/// or cut lines: each line is taken from the piece holding the most of it; a line no piece covers
/// is blank.
pub fn lines_from_pieces(pieces: &[(u32, &str)], start: u32, end: u32) -> String {
    let mut lines: std::collections::BTreeMap<u32, &str> = std::collections::BTreeMap::new();
    for (first, text) in pieces {
        for (i, line) in text.split('\n').enumerate() {
            let n = first + i as u32;
            if n < start || n > end {
                continue;
            }
            let slot = lines.entry(n).or_insert(line);
            if line.len() > slot.len() {
                *slot = line;
            }
        }
    }
    (start..=end.max(start)).map(|n| lines.get(&n).copied().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// `render-doc`: the symbol's documentation as Markdown — its kind and fqn, the signature as code,
/// the doc comment, and the route of an HTTP handler.
pub fn render_doc(node: &Node) -> String {
    let mut out = format!("# {} `{}`\n", kind_word(node.kind), node.fqn);
    if let (Some(method), Some(route)) = (&node.http_method, &node.route) {
        out.push_str(&format!("\nHTTP `{method} {route}`\n"));
    }
    if let Some(sig) = node.signature.as_deref().filter(|s| !s.trim().is_empty()) {
        out.push_str(&format!("\n```{}\n{}\n```\n", node.language.as_str(), sig.trim()));
    }
    if let Some(doc) = node.doc.as_deref().filter(|s| !s.trim().is_empty()) {
        out.push('\n');
        out.push_str(doc.trim());
        out.push('\n');
    }
    out.push_str(&format!("\nDefined in `{}` lines {}–{}.\n", node.path, node.start_line, node.end_line));
    out
}

fn kind_word(kind: NodeKind) -> String {
    let s = kind.as_str().to_ascii_lowercase();
    let mut c = s.chars();
    c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
}

/// `extract-snippet`: lines `start..=end` (1-based, inclusive) of `file`.
pub fn extract_snippet(file: &str, start: u32, end: u32) -> String {
    let start = start.max(1);
    let end = end.max(start);
    file.split('\n')
        .skip((start - 1) as usize)
        .take((end - start + 1) as usize)
        .collect::<Vec<_>>()
        .join("\n")
}

/// One symbol on the other side of an edge, as a person reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Link {
    /// The fqn when the symbol is in the graph, else the name as written at the site.
    pub name: String,
    pub confidence: f32,
    /// `true` when the target is not in the repository (a library or builtin).
    pub external: bool,
}

/// `link-edges`' output: Markdown lists of what the symbol uses and what uses it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkText {
    pub uses_md: Option<String>,
    pub used_by_md: Option<String>,
}

/// At most [`MAX_LINKS`] names per direction, most confident first, each once; "and N more"
/// closes a longer list.
pub fn link_text(uses: &[Link], used_by: &[Link]) -> LinkText {
    LinkText { uses_md: link_list(uses), used_by_md: link_list(used_by) }
}

fn link_list(links: &[Link]) -> Option<String> {
    let mut sorted: Vec<&Link> = links.iter().collect();
    sorted.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then_with(|| a.external.cmp(&b.external))
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut seen = std::collections::BTreeSet::new();
    sorted.retain(|l| seen.insert(l.name.as_str()));
    if sorted.is_empty() {
        return None;
    }
    let mut out: Vec<String> = sorted
        .iter()
        .take(MAX_LINKS)
        .map(|l| if l.external { format!("- `{}` (external)", l.name) } else { format!("- `{}`", l.name) })
        .collect();
    if sorted.len() > MAX_LINKS {
        out.push(format!("- and {} more", sorted.len() - MAX_LINKS));
    }
    Some(out.join("\n"))
}

/// The chunk id of a plan: BLAKE3 of the plan id (64 hex characters, the vector index's id limit;
/// the plan id itself is longer).
pub fn plan_chunk_id(plan_id: &str) -> String {
    blake3::hash(plan_id.as_bytes()).to_hex().to_string()
}

/// The searchable chunk of a plan once its stages ran: the rendered doc (doc plan) or the snippet
/// and its summary (code plan), then the "uses / used by" lists.
pub fn plan_chunk(plan: &ChunkPlan, body: &str, summary: Option<&str>, links: &LinkText) -> Chunk {
    let mut text = String::new();
    if plan.source == PlanSource::Code {
        text.push_str(&format!("# `{}`\n\n", plan.title));
        if let Some(s) = summary.filter(|s| !s.trim().is_empty()) {
            text.push_str(s.trim());
            text.push_str("\n\n");
        }
        text.push_str(&format!("```{}\n{}\n```\n", plan.lang, body.trim_end()));
    } else {
        text.push_str(body.trim_end());
        text.push('\n');
    }
    if let Some(uses) = &links.uses_md {
        text.push_str(&format!("\nUses:\n{uses}\n"));
    }
    if let Some(used_by) = &links.used_by_md {
        text.push_str(&format!("\nUsed by:\n{used_by}\n"));
    }
    let language = crate::lang::Language::from_name(&plan.lang).unwrap_or(crate::lang::Language::Text);
    Chunk {
        id: plan_chunk_id(&plan.id),
        text_hash: ids::text_hash(&text),
        path: plan.path.clone(),
        language,
        chunk_type: ChunkType::SymbolPlan,
        start_line: plan.start_line,
        end_line: plan.end_line,
        start_byte: 0,
        end_byte: 0,
        chunk_index: PLAN_CHUNK_INDEX_BASE.saturating_add(plan.start_line),
        token_count: ChunkConfig::default().count_tokens(&text) as u32,
        keywords: keywords::extract(&text, language),
        metadata: ChunkMetadata {
            heading_path: plan.section_path.clone(),
            symbol_name: plan.section_path.last().cloned(),
            span_hash: plan_chunk_id(&plan.id)[..16].to_string(),
            summary: summary.map(str::to_owned),
            ..Default::default()
        },
        updated_at: None,
        version: CHUNK_SCHEMA_VERSION,
        text,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use proptest::prelude::*;

    use super::*;
    use crate::graph::Resolution;
    use crate::lang::Language;

    fn node(kind: NodeKind, name: &str, signature: Option<&str>, doc: Option<&str>) -> Node {
        Node {
            id: crate::graph::node_id("src/billing.py", kind, name, 0),
            kind,
            name: name.into(),
            fqn: format!("acme.billing.{name}"),
            package: Some("acme.billing".into()),
            signature: signature.map(Into::into),
            doc: doc.map(Into::into),
            path: "src/billing.py".into(),
            language: Language::Python,
            start_line: 3,
            end_line: 5,
            parent: None,
            route: None,
            http_method: None,
            declared_type: None,
        }
    }

    fn call(src: &str, dst: Option<&str>, name: &str, line: u32, confidence: f32) -> Edge {
        Edge {
            kind: EdgeKind::Calls,
            src: src.into(),
            dst: dst.map(Into::into),
            dst_name: name.into(),
            confidence,
            resolution: if dst.is_some() { Resolution::Import } else { Resolution::External },
            path: "src/billing.py".into(),
            line,
            hint: None,
        }
    }

    #[test]
    fn a_node_with_a_signature_or_doc_gets_a_doc_plan_and_one_without_gets_a_code_plan() {
        let documented = node(NodeKind::Function, "total", Some("def total(items)"), None);
        let plan = build_plan(&documented, &[]);
        assert_eq!(plan.id, format!("{}:doc:explanation", documented.id));
        assert_eq!(plan.stages, ["render-doc", "embed", "link-edges"]);
        let doc_only = node(NodeKind::Function, "total", None, Some("Sums the items."));
        assert_eq!(build_plan(&doc_only, &[]).source, PlanSource::Doc);
        let bare = node(NodeKind::Field, "rate", Some("   "), None);
        let plan = build_plan(&bare, &[]);
        assert_eq!(plan.id, format!("{}:code:snippet", bare.id));
        assert_eq!(plan.stages, ["extract-snippet", "summarize", "embed", "link-edges"]);
    }

    #[test]
    fn priority_puts_handlers_and_methods_first_then_classes() {
        assert_eq!(priority_for(NodeKind::Endpoint), 10);
        assert_eq!(priority_for(NodeKind::Method), 10);
        assert_eq!(priority_for(NodeKind::Class), 5);
        for k in [NodeKind::Function, NodeKind::Field, NodeKind::Module, NodeKind::Interface] {
            assert_eq!(priority_for(k), 0, "{k:?}");
        }
    }

    #[test]
    fn section_path_is_the_package_parts_then_the_name_in_any_notation() {
        let mut n = node(NodeKind::Class, "Invoice", None, None);
        assert_eq!(section_path(&n), ["acme", "billing", "Invoice"]);
        n.package = Some("crate::db/pool".into());
        assert_eq!(section_path(&n), ["crate", "db", "pool", "Invoice"]);
        n.package = None;
        assert_eq!(section_path(&n), ["Invoice"]);
    }

    #[test]
    fn relations_are_the_nodes_own_calls_with_their_confidence_in_call_order() {
        let n = node(NodeKind::Method, "pay", None, None);
        let edges = vec![
            call(&n.id, None, "print", 9, 0.0),
            call(&n.id, Some("abc"), "charge", 4, 0.85),
            call("someone-else", Some("x"), "other", 1, 1.0),
            Edge { kind: EdgeKind::References, ..call(&n.id, Some("t"), "Card", 2, 0.9) },
        ];
        let plan = build_plan(&n, &edges);
        let got: Vec<(&str, Option<&str>, f32)> = plan
            .relations
            .iter()
            .map(|r| (r.dst_name.as_str(), r.dst_node_id.as_deref(), r.confidence))
            .collect();
        assert_eq!(got, [("charge", Some("abc"), 0.85), ("print", None, 0.0)]);
        assert!(plan.relations.iter().all(|r| r.kind == "CALLS"));
    }

    #[test]
    fn include_kinds_are_case_insensitive_and_unknown_ones_are_reported() {
        let raw: Vec<String> =
            ["method", "CLASS", "Method", "gizmo", ""].iter().map(|s| s.to_string()).collect();
        let (kinds, unknown) = parse_kinds(&raw);
        assert_eq!(kinds, [NodeKind::Class, NodeKind::Method]);
        assert_eq!(unknown, ["gizmo", ""]);
    }

    #[test]
    fn render_doc_shows_kind_fqn_route_signature_and_doc() {
        let mut n =
            node(NodeKind::Endpoint, "create_user", Some("def create_user(req)"), Some("Creates a user."));
        n.route = Some("/users".into());
        n.http_method = Some("POST".into());
        let doc = render_doc(&n);
        assert!(doc.starts_with("# Endpoint `acme.billing.create_user`\n"), "{doc}");
        assert!(doc.contains("HTTP `POST /users`"));
        assert!(doc.contains("```python\ndef create_user(req)\n```"));
        assert!(doc.contains("\nCreates a user.\n"));
        assert!(doc.contains("`src/billing.py` lines 3–5"));
    }

    #[test]
    fn extract_snippet_takes_the_inclusive_line_range() {
        let file = "a\nb\nc\nd";
        assert_eq!(extract_snippet(file, 2, 3), "b\nc");
        assert_eq!(extract_snippet(file, 4, 9), "d");
        assert_eq!(extract_snippet(file, 1, 1), "a");
        assert_eq!(extract_snippet(file, 7, 8), "");
    }

    #[test]
    fn link_text_lists_confident_names_first_once_each_and_counts_the_rest() {
        let l = |name: &str, c: f32, external: bool| Link { name: name.into(), confidence: c, external };
        let text =
            link_text(&[l("print", 0.0, true), l("a.charge", 0.9, false), l("a.charge", 0.5, false)], &[]);
        assert_eq!(text.uses_md.as_deref(), Some("- `a.charge`\n- `print` (external)"));
        assert_eq!(text.used_by_md, None);
        let many: Vec<Link> = (0..13).map(|i| l(&format!("f{i:02}"), 1.0, false)).collect();
        let text = link_text(&[], &many);
        let used_by = text.used_by_md.unwrap();
        assert_eq!(used_by.lines().count(), MAX_LINKS + 1);
        assert!(used_by.ends_with("- and 3 more"));
    }

    #[test]
    fn a_plan_chunk_has_its_own_type_id_and_index_range() {
        let n = node(NodeKind::Function, "total", None, None);
        let plan = build_plan(&n, &[]);
        let links =
            link_text(&[Link { name: "acme.tax.rate".into(), confidence: 0.85, external: false }], &[]);
        let c = plan_chunk(&plan, "def total(items):\n    return sum(items)\n", Some("Adds prices."), &links);
        assert_eq!(c.chunk_type, ChunkType::SymbolPlan);
        assert_eq!(c.id, plan_chunk_id(&plan.id));
        assert_eq!(c.id.len(), 64);
        assert!(c.chunk_index >= PLAN_CHUNK_INDEX_BASE);
        assert_eq!(c.metadata.heading_path, ["acme", "billing", "total"]);
        assert_eq!(c.metadata.symbol_name.as_deref(), Some("total"));
        assert!(c.text.contains("Adds prices.\n\n```python\ndef total(items):"), "{}", c.text);
        assert!(c.text.ends_with("Uses:\n- `acme.tax.rate`\n"), "{}", c.text);
        assert_eq!(c.text_hash, ids::text_hash(&c.text));
    }

    #[test]
    fn run_options_default_clamp_and_warn() {
        let o = run_options(None, None, None, None).unwrap();
        assert_eq!(
            (o.strategy.as_str(), o.page_size, o.kinds.clone()),
            ("per-node", DEFAULT_PAGE_SIZE, None)
        );
        assert!(o.warnings.is_empty());
        let o = run_options(Some("per-node"), Some(10), Some(5), None).unwrap();
        assert_eq!(o.page_size, MIN_PAGE_SIZE);
        assert_eq!(o.limit_nodes, Some(5));
        assert!(o.warnings[0].contains("batchSize 10"), "{:?}", o.warnings);
        assert_eq!(run_options(None, Some(5000), None, None).unwrap().page_size, MAX_PAGE_SIZE);
        let kinds: Vec<String> = vec!["method".into(), "gizmo".into()];
        let o = run_options(None, Some(50), None, Some(&kinds)).unwrap();
        assert_eq!(o.kinds, Some(vec![NodeKind::Method]));
        assert!(o.warnings.iter().any(|w| w.contains("gizmo")));
        let o = run_options(None, None, None, Some(&["gizmo".to_string()])).unwrap();
        assert_eq!(o.kinds, None);
        assert_eq!(o.warnings.len(), 2);
        let e = run_options(Some("per-file"), None, None, None).unwrap_err();
        assert_eq!(e.code(), "UNKNOWN_STRATEGY");
        assert_eq!(run_options(None, None, Some(0), None).unwrap_err().code(), "INVALID_LIMIT");
    }

    #[test]
    fn lines_from_pieces_takes_each_line_once_from_the_fullest_piece() {
        let pieces = [(1, "a\nb"), (2, "bb\nc"), (5, "e")];
        assert_eq!(lines_from_pieces(&pieces, 1, 5), "a\nbb\nc\n\ne");
        assert_eq!(lines_from_pieces(&pieces, 3, 3), "c");
    }

    fn any_kind() -> impl Strategy<Value = NodeKind> {
        proptest::sample::select(NodeKind::ALL.to_vec())
    }

    proptest! {
        #[test]
        fn every_node_gets_exactly_one_deterministic_plan(
            kind in any_kind(),
            name in "[a-zA-Z_][a-zA-Z0-9_]{0,12}",
            package in proptest::option::of("[a-z]{1,5}(\\.[a-z]{1,5}){0,3}"),
            signature in proptest::option::of(".{0,20}"),
            doc in proptest::option::of(".{0,20}"),
        ) {
            let mut n = node(kind, &name, signature.as_deref(), doc.as_deref());
            n.package = package.as_deref().map(Into::into);
            let plan = build_plan(&n, &[]);
            prop_assert_eq!(&plan, &build_plan(&n, &[]));
            prop_assert!(plan.id.starts_with(&*n.id));
            prop_assert_eq!(plan.source == PlanSource::Doc, has_doc(&n));
            prop_assert_eq!(plan.priority, priority_for(kind));
            prop_assert_eq!(plan.section_path.last(), Some(&name));
            let parts = package.map_or(0, |p| p.split('.').count());
            prop_assert_eq!(plan.section_path.len(), parts + 1);
            let chunk = plan_chunk(&plan, "x", None, &LinkText::default());
            prop_assert_eq!(chunk.id.clone(), plan_chunk(&plan, "y", None, &LinkText::default()).id);
        }
    }
}
