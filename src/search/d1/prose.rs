//! The prose families of search hits over D1: a hit whose chunk metadata names a `parentId` is a
//! child of a document chunked into parents and children (`document_parents`); its parent and
//! every sibling are read so the pipeline can return the parent (or a window of it) once.
//!
//! Two round trips per database: the hits' parent ids (primary-key lookups), then for each
//! (namespace, path) its parents and their children (the `chunk_by_path` index, then the
//! metadata). A hit whose parent row is missing is an error, so the pipeline falls back to flat
//! results with a warning instead of returning half a family.
use std::collections::{BTreeMap, BTreeSet};

use edgerag_core::chunk::parent_child::{ChildChunk, ParentChunk};
use edgerag_search::ports::{ChunkKey, ProseFamily};
use edgerag_search::PortError;
use serde::Deserialize;

use super::{port, D1Search};
use crate::store::{placeholders, Arg, MAX_PARAMS};

#[derive(Deserialize)]
struct HitParent {
    namespace: String,
    path: String,
    parent_id: String,
}

#[derive(Deserialize)]
struct ParentRow {
    id: String,
    ord: i64,
    chapter: i64,
    heading_path: String,
    text: String,
    start_char: i64,
    end_char: i64,
    start_line: i64,
    end_line: i64,
    child_count: i64,
}

#[derive(Deserialize)]
struct ChildRow {
    id: String,
    text_hash: String,
    start_line: i64,
    end_line: i64,
    parent_id: String,
    ord: i64,
    start_char: i64,
    end_char: i64,
}

/// Parent ids per statement (the rest of the parameters: namespace, path).
const PARENTS_PER_STATEMENT: usize = MAX_PARAMS - 2;

fn parse<T: serde::de::DeserializeOwned>(rows: Vec<serde_json::Value>) -> Result<Vec<T>, PortError> {
    rows.into_iter()
        .map(serde_json::from_value)
        .collect::<Result<Vec<T>, _>>()
        .map_err(|e| PortError::new("chunk-store", e.to_string()))
}

fn byte_at(text: &str, chars: usize) -> usize {
    text.char_indices().nth(chars).map_or(text.len(), |(b, _)| b)
}

impl D1Search {
    pub(super) async fn prose_families_d1(&self, keys: &[ChunkKey]) -> Result<Vec<ProseFamily>, PortError> {
        let mut out = Vec::new();
        for (db, keys) in self.by_database(keys, |k| k.namespace.as_str(), "chunk-store").await? {
            let mut by_ns: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for k in keys {
                by_ns.entry(k.namespace.as_str()).or_default().push(k.id.as_str());
            }
            let mut statements = Vec::new();
            for (ns, ids) in &by_ns {
                for group in ids.chunks(MAX_PARAMS - 1) {
                    let mut params: Vec<Arg> = vec![Arg::Text(ns)];
                    params.extend(group.iter().map(|id| Arg::Text(id)));
                    let sql = format!(
                        "SELECT DISTINCT namespace, path, json_extract(metadata, '$.parentId') AS parent_id \
                         FROM chunks WHERE namespace = ? AND id IN ({}) \
                         AND json_extract(metadata, '$.parentId') IS NOT NULL",
                        placeholders(group.len())
                    );
                    statements.push(db.stmt(&sql, &params).map_err(port("chunk-store"))?);
                }
            }
            let hits: Vec<Vec<HitParent>> = db.batch_rows(statements).await.map_err(port("chunk-store"))?;
            let mut wanted: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
            for h in hits.into_iter().flatten() {
                wanted.entry((h.namespace, h.path)).or_default().insert(h.parent_id);
            }
            if wanted.is_empty() {
                continue;
            }
            let mut statements = Vec::new();
            let mut groups: Vec<(&str, &str)> = Vec::new();
            for ((ns, path), ids) in &wanted {
                let ids: Vec<&String> = ids.iter().collect();
                for group in ids.chunks(PARENTS_PER_STATEMENT) {
                    let mut params: Vec<Arg> = vec![Arg::Text(ns), Arg::Text(path)];
                    params.extend(group.iter().map(|id| Arg::Text(id)));
                    let list = placeholders(group.len());
                    statements.push(
                        db.stmt(
                            &format!(
                                "SELECT id, ord, chapter, heading_path, text, start_char, end_char, start_line, \
                                 end_line, child_count FROM document_parents \
                                 WHERE namespace = ? AND path = ? AND id IN ({list})"
                            ),
                            &params,
                        )
                        .map_err(port("chunk-store"))?,
                    );
                    statements.push(
                        db.stmt(
                            &format!(
                                "SELECT id, text_hash, start_line, end_line, \
                                   json_extract(metadata, '$.parentId') AS parent_id, \
                                   json_extract(metadata, '$.order') AS ord, \
                                   json_extract(metadata, '$.startChar') AS start_char, \
                                   json_extract(metadata, '$.endChar') AS end_char \
                                 FROM chunks WHERE namespace = ? AND path = ? \
                                 AND json_extract(metadata, '$.parentId') IN ({list})"
                            ),
                            &params,
                        )
                        .map_err(port("chunk-store"))?,
                    );
                    groups.push((ns, path));
                }
            }
            let rows: Vec<Vec<serde_json::Value>> =
                db.batch_rows(statements).await.map_err(port("chunk-store"))?;
            let mut rows = rows.into_iter();
            for (ns, path) in groups {
                let parents: Vec<ParentRow> = parse(rows.next().unwrap_or_default())?;
                let children: Vec<ChildRow> = parse(rows.next().unwrap_or_default())?;
                let wanted_ids = &wanted[&(ns.to_string(), path.to_string())];
                if let Some(missing) = wanted_ids.iter().find(|id| !parents.iter().any(|p| &p.id == *id)) {
                    return Err(PortError::new(
                        "chunk-store",
                        format!("parent {missing} of a matched chunk of {path} is missing"),
                    ));
                }
                for p in parents {
                    let mut kids: Vec<ChildChunk> = children
                        .iter()
                        .filter(|c| c.parent_id == p.id)
                        .map(|c| {
                            let (s, e) = (c.start_char.max(0) as usize, c.end_char.max(0) as usize);
                            // The child's text is its span of the parent, exactly (the chunk row
                            // may hold it trimmed).
                            let text = p.text[byte_at(&p.text, s)..byte_at(&p.text, e.max(s))].to_string();
                            ChildChunk {
                                id: c.id.clone(),
                                parent_id: c.parent_id.clone(),
                                order: c.ord.max(0) as u32,
                                text,
                                content_hash: c.text_hash.clone(),
                                start_char: s,
                                end_char: e,
                                start_line: c.start_line.max(0) as u32,
                                end_line: c.end_line.max(0) as u32,
                            }
                        })
                        .collect();
                    kids.sort_by_key(|c| c.order);
                    let start_char = p.start_char.max(0) as usize;
                    let end_char = p.end_char.max(0) as usize;
                    let parent = ParentChunk {
                        id: p.id,
                        order: p.ord.max(0) as u32,
                        chapter: p.chapter.max(0) as u32,
                        heading_path: serde_json::from_str(&p.heading_path).unwrap_or_default(),
                        content_hash: edgerag_core::ids::text_hash(&p.text),
                        // Byte spans in the document are not needed to return the parent.
                        start_byte: 0,
                        end_byte: p.text.len(),
                        text: p.text,
                        start_char,
                        end_char,
                        start_line: p.start_line.max(0) as u32,
                        end_line: p.end_line.max(0) as u32,
                        child_count: p.child_count.max(0) as u32,
                    };
                    out.push(ProseFamily {
                        namespace: ns.to_string(),
                        path: path.to_string(),
                        parent,
                        children: kids,
                    });
                }
            }
        }
        Ok(out)
    }
}
