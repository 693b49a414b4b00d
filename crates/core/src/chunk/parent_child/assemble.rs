//! Bookkeeping: parent and child records from unit spans — ids, char offsets, lines.
use std::ops::Range;

use super::cliffs::{children, prefix_sums};
use super::parents::{ParentSpan, Structure};
use super::{ChildChunk, ParentChildConfig, ParentChildDocument, ParentChunk};
use crate::chunk::config::count_chars;

/// Where the units live: `body` is the document after any byte order mark (`bom` bytes).
pub(crate) struct Layout<'a> {
    pub path: &'a str,
    pub body: &'a str,
    pub bom: usize,
    pub units: &'a [Range<usize>],
    pub sizes: &'a [usize],
    pub structure: &'a Structure,
}

pub(crate) fn build(
    layout: &Layout<'_>,
    spans: &[ParentSpan],
    sims: &[f32],
    config: &ParentChildConfig,
) -> ParentChildDocument {
    let Layout { path, body, bom, units, sizes, structure } = *layout;
    let bom_chars = usize::from(bom > 0);
    let char_prefix = prefix_sums(sizes);
    let newline_prefix = {
        let counts: Vec<usize> = units.iter().map(|u| newlines(&body.as_bytes()[u.clone()])).collect();
        prefix_sums(&counts)
    };
    // 1-based line of the first byte of unit `u`, and of the last byte of unit `u`.
    let first_line = |u: usize| 1 + newline_prefix[u] as u32;
    let last_line = |u: usize| {
        let ends_with_newline = body.as_bytes()[units[u].end - 1] == b'\n';
        1 + (newline_prefix[u + 1] - usize::from(ends_with_newline)) as u32
    };

    let mut doc = ParentChildDocument::default();
    let mut seen: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for (order, span) in spans.iter().enumerate() {
        let (s, e) = (span.units.start, span.units.end);
        let start = units[s].start;
        let end = units[e - 1].end;
        let text = &body[start..end];
        let content_hash = crate::ids::text_hash(text);
        let occurrence = seen.entry(content_hash.clone()).or_default();
        let id = record_id(&["parent", path, &content_hash], *occurrence);
        *occurrence += 1;

        let kids = children(&sizes[s..e], &sims[s..e - 1], config);
        for (child_order, r) in kids.iter().enumerate() {
            let (cs, ce) = (s + r.start, s + r.end);
            let child_text = &body[units[cs].start..units[ce - 1].end];
            let child_hash = crate::ids::text_hash(child_text);
            doc.children.push(ChildChunk {
                id: record_id(&["child", &id, &child_hash], child_order as u32),
                parent_id: id.clone(),
                order: child_order as u32,
                start_char: char_prefix[cs] - char_prefix[s],
                end_char: char_prefix[ce] - char_prefix[s],
                start_line: first_line(cs),
                end_line: last_line(ce - 1),
                content_hash: child_hash,
                text: child_text.to_string(),
            });
        }
        doc.parents.push(ParentChunk {
            id,
            order: order as u32,
            chapter: span.chapter,
            heading_path: structure.paths[span.path].clone(),
            start_byte: bom + start,
            end_byte: bom + end,
            start_char: bom_chars + char_prefix[s],
            end_char: bom_chars + char_prefix[e],
            start_line: first_line(s),
            end_line: last_line(e - 1),
            content_hash,
            child_count: kids.len() as u32,
            text: text.to_string(),
        });
    }
    debug_assert_eq!(
        doc.parents.iter().map(|p| count_chars(p.text.as_bytes())).sum::<usize>(),
        char_prefix[units.len()]
    );
    doc
}

fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// BLAKE3 over length-prefixed fields and a counter (64 hex chars, the Vectorize id limit).
fn record_id(fields: &[&str], n: u32) -> String {
    let mut h = blake3::Hasher::new();
    for f in fields {
        h.update(&(f.len() as u64).to_le_bytes());
        h.update(f.as_bytes());
    }
    h.update(&n.to_le_bytes());
    h.finalize().to_hex().to_string()
}
