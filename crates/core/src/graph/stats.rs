//! Counts over a graph: nodes and edges per kind, and how calls were resolved.
use std::collections::BTreeMap;

use serde::Serialize;

use super::types::{EdgeKind, FileGraph, Resolution};

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphStats {
    pub files: usize,
    pub nodes: BTreeMap<&'static str, usize>,
    pub edges: BTreeMap<&'static str, usize>,
    pub calls: usize,
    pub resolved_calls: usize,
    /// `resolved_calls / calls` (0 when there are no calls).
    pub resolved_call_share: f64,
    /// Calls per [`Resolution`] (kebab-case names).
    pub calls_by_resolution: BTreeMap<String, usize>,
    /// `REFERENCES` edges (type uses), and how many point at a symbol of the project.
    pub references: usize,
    pub resolved_references: usize,
    /// `resolved_references / references` (0 when there are none).
    pub resolved_reference_share: f64,
}

impl GraphStats {
    pub fn of(files: &[FileGraph]) -> GraphStats {
        let mut stats = GraphStats { files: files.len(), ..GraphStats::default() };
        for file in files {
            for node in &file.nodes {
                *stats.nodes.entry(node.kind.as_str()).or_default() += 1;
            }
            for edge in &file.edges {
                *stats.edges.entry(edge.kind.as_str()).or_default() += 1;
                if edge.kind == EdgeKind::References {
                    stats.references += 1;
                    stats.resolved_references += usize::from(edge.dst.is_some());
                }
                if edge.kind == EdgeKind::Calls {
                    stats.calls += 1;
                    if edge.dst.is_some() {
                        stats.resolved_calls += 1;
                    }
                    let name = serde_json::to_value(edge.resolution)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_else(|| format!("{:?}", Resolution::External));
                    *stats.calls_by_resolution.entry(name).or_default() += 1;
                }
            }
        }
        if stats.calls > 0 {
            stats.resolved_call_share = stats.resolved_calls as f64 / stats.calls as f64;
        }
        if stats.references > 0 {
            stats.resolved_reference_share = stats.resolved_references as f64 / stats.references as f64;
        }
        stats
    }
}
