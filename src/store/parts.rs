//! Large values stored in parts: a snapshot (the bytes of a namespace's in-memory copy) cut into
//! base64 text parts under the D1 value budget, one row per part, tagged with the generation it
//! was taken at and how many parts it has. The vector and keyword snapshots share this.
//!
//! **Reading**: the text of a part is decoded by the runtime straight into the bytes being
//! assembled (`Uint8Array.prototype.setFromBase64` over a view of the wasm memory), so a part
//! never becomes a Rust `String`: handing a JS string to wasm copies it character by character
//! in JS first, and that copy was most of a snapshot's read time (a 21.5 MB snapshot: 550 ms of
//! the 750 ms spent in its statements in the deploy build). A runtime without `setFromBase64`
//! takes the string and decodes it in wasm.
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{d1_error, Db, StoreError, StoreResult};

/// Raw bytes per stored part: its base64 text (933,336 characters) stays under the 1 MB value
/// budget of `src/limits.json`.
pub const PART_BYTES: usize = 700_000;

/// The header of a part's row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartHeader {
    pub part: usize,
    pub parts: usize,
    pub generation: f64,
}

/// The rows of one statement as the runtime returned them (no conversion to Rust values): each
/// with `part`, `parts`, `generation` (numbers) and `data` (base64 text).
pub struct PartRows(js_sys::Array);

#[wasm_bindgen]
extern "C" {
    /// A `Uint8Array` as the target of `setFromBase64` given a JS string (js-sys's takes a Rust
    /// string, which would copy the text into JS again).
    #[wasm_bindgen(js_name = Uint8Array, extends = js_sys::Uint8Array)]
    type Base64Target;

    /// `Uint8Array.prototype.setFromBase64` (returns `{read, written}`; throws on text that is
    /// not base64, or when the runtime has no such method).
    #[wasm_bindgen(method, catch, js_name = setFromBase64)]
    fn set_from_base64(this: &Base64Target, text: &js_sys::JsString) -> Result<JsValue, JsValue>;
}

fn field(row: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(row, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

impl PartRows {
    pub fn len(&self) -> usize {
        self.0.length() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`'s header; `None` when a field is missing or not a whole number.
    pub fn header(&self, i: usize) -> Option<PartHeader> {
        let row = self.0.get(i as u32);
        let whole = |name| field(&row, name).as_f64().filter(|v| *v >= 0.0 && v.fract() == 0.0);
        Some(PartHeader {
            part: whole("part")? as usize,
            parts: whole("parts")? as usize,
            generation: field(&row, "generation").as_f64()?,
        })
    }

    /// Appends row `i`'s data, decoded, to `out`; `false` when it is not base64 text.
    pub fn append_data(&self, i: usize, out: &mut Vec<u8>) -> bool {
        let data = field(&self.0.get(i as u32), "data");
        let Some(text) = data.dyn_ref::<js_sys::JsString>() else { return false };
        let chars = text.length() as usize;
        // Room for what the text can decode to: the runtime then decodes all of it or fails.
        let most = chars / 4 * 3 + 3;
        out.reserve(most);
        let before = out.len();
        match decode_into_spare(text, out, most) {
            Some(written) => {
                debug_assert_eq!(out.len(), before + written);
                true
            }
            // No `setFromBase64` here (or it refused the text): decode in wasm.
            None => edgerag_core::vector::quantized::append_snapshot_part(&String::from(text), out),
        }
    }
}

/// Decodes `text` into `out`'s spare capacity (at least `most` bytes) and extends `out` by what
/// was written; `None` (nothing changed) when the runtime cannot, or the text is not all read.
#[allow(unsafe_code)]
fn decode_into_spare(text: &js_sys::JsString, out: &mut Vec<u8>, most: usize) -> Option<usize> {
    if !cfg!(target_arch = "wasm32") {
        return None;
    }
    let spare = out.spare_capacity_mut();
    if spare.len() < most {
        return None;
    }
    // SAFETY: the view covers `most` bytes of `out`'s spare capacity, which `reserve` made; nothing
    // allocates in wasm while it is alive (the call below is the runtime's own decoder), so the
    // wasm memory does not move under it. It is dropped before `out` is touched again.
    let view = unsafe { js_sys::Uint8Array::view_mut_raw(spare.as_mut_ptr().cast::<u8>(), most) };
    let result = view.unchecked_ref::<Base64Target>().set_from_base64(text).ok()?;
    drop(view);
    let read = field(&result, "read").as_f64()? as usize;
    let written = field(&result, "written").as_f64()? as usize;
    if read != text.length() as usize || written > most {
        return None;
    }
    // SAFETY: the runtime wrote `written` bytes (≤ `most`, within the spare capacity) from the
    // old length on.
    unsafe { out.set_len(out.len() + written) };
    Some(written)
}

impl Db {
    /// Runs a statement and returns its rows as the runtime gave them ([`PartRows`]).
    pub async fn part_rows(&self, statement: worker::D1PreparedStatement) -> StoreResult<PartRows> {
        let promise = statement.inner().all().map_err(d1_error)?;
        let result = wasm_bindgen_futures::JsFuture::from(promise).await.map_err(d1_error)?;
        let rows = field(&result, "results");
        rows.dyn_into::<js_sys::Array>()
            .map(PartRows)
            .map_err(|_| StoreError("D1: a result without rows".into()))
    }
}

/// What [`read`] found.
pub enum Read {
    /// The whole value, taken at `generation`, in `parts` parts; `wait_ms` of it waiting for D1.
    Found { generation: f64, bytes: Vec<u8>, parts: usize, statements: usize, wait_ms: f64 },
    /// No part 0, refused by the caller's check, a part missing, or rewritten while it was read.
    Unusable,
}

/// Reads a value stored in parts, `per_read` parts a statement; `select(from, to)` is the
/// statement of parts `from..to` in order (with `part`, `parts`, `generation`, `data`).
/// `accept(&header)` sees part 0's header first and may refuse the value (too old, too large)
/// before more is read. A part that is not base64 is an error. Pauses before the first statement
/// and every [`crate::background::SLICE_MS`] of work after it ([`crate::background::Slices`]).
pub async fn read(
    db: &Db,
    per_read: usize,
    select: impl Fn(usize, usize) -> StoreResult<worker::D1PreparedStatement>,
    accept: impl Fn(&PartHeader) -> bool,
) -> StoreResult<Read> {
    let mut bytes: Vec<u8> = Vec::new();
    let (mut parts, mut at) = (1usize, None::<f64>);
    let (mut next, mut statements, mut wait_ms) = (0usize, 0usize, 0.0);
    // Responses go out between statements: a read started right after a response (the keyword
    // copy's, in the background) would otherwise hold that response back until it ends.
    let mut slices = crate::background::Slices::new();
    while next < parts {
        slices.pause_if_due().await;
        let end = next + per_read.max(1);
        let asked = crate::time::now_ms();
        let rows = db.part_rows(select(next, end)?).await?;
        wait_ms += crate::time::now_ms() - asked;
        statements += 1;
        for i in 0..rows.len() {
            let Some(header) = rows.header(i) else { return Ok(Read::Unusable) };
            if next == 0 {
                if header.part != 0 || !accept(&header) {
                    return Ok(Read::Unusable);
                }
                parts = header.parts.max(1);
                at = Some(header.generation);
                bytes.reserve_exact(parts.saturating_mul(PART_BYTES));
            }
            if header.part != next || header.parts != parts || Some(header.generation) != at {
                return Ok(Read::Unusable); // rewritten between two reads, or a part missing
            }
            if !rows.append_data(i, &mut bytes) {
                return Err(StoreError(format!("part {next} is not base64")));
            }
            next += 1;
        }
        if next < end.min(parts) {
            return Ok(Read::Unusable); // a part missing
        }
    }
    Ok(match at {
        Some(generation) => Read::Found { generation, bytes, parts, statements, wait_ms },
        None => Read::Unusable,
    })
}

/// One part's text (base64).
pub fn part_text(part: &[u8]) -> String {
    edgerag_core::vector::quantized::snapshot_part_text(part)
}

/// `bytes` cut into parts of [`PART_BYTES`] (one empty part for no bytes), each with its number.
pub fn cut(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    if bytes.is_empty() {
        return vec![(0, bytes)];
    }
    bytes.chunks(PART_BYTES).enumerate().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_bytes_in_order_under_the_value_budget() {
        let bytes: Vec<u8> = (0..(2 * PART_BYTES + 5)).map(|i| (i % 251) as u8).collect();
        let parts = cut(&bytes);
        assert_eq!(parts.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(parts.iter().flat_map(|(_, p)| p.iter().copied()).collect::<Vec<_>>(), bytes);
        assert!(part_text(parts[0].1).len() < 1_000_000);
        assert_eq!(cut(&[]), vec![(0, &[][..])]);
    }
}
