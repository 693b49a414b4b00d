//! Raw wasm32 exports. The host (node) copies UTF-8 into buffers from `ewc_alloc`, calls
//! `ewc_chunk`, then reads `ewc_output_len` bytes at `ewc_output_ptr`.
// A C ABI over linear memory needs raw pointers; this module is the only place that does it.
#![allow(unsafe_code)]

use std::cell::RefCell;

thread_local! {
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Allocates `len` bytes the host fills; ownership passes back with `ewc_chunk`/`ewc_free`.
#[no_mangle]
pub extern "C" fn ewc_alloc(len: usize) -> *mut u8 {
    let mut buf = Vec::<u8>::with_capacity(len.max(1));
    let ptr = buf.as_mut_ptr();
    std::mem::forget(buf);
    ptr
}

/// Frees a buffer from `ewc_alloc`.
///
/// # Safety
/// `ptr` must come from `ewc_alloc(cap)` and not have been freed.
#[no_mangle]
pub unsafe extern "C" fn ewc_free(ptr: *mut u8, cap: usize) {
    drop(Vec::from_raw_parts(ptr, 0, cap.max(1)));
}

fn read(ptr: *mut u8, len: usize) -> String {
    // SAFETY: the host wrote `len` initialized bytes into a buffer from `ewc_alloc(len)`.
    let bytes = unsafe { Vec::from_raw_parts(ptr, len, len.max(1)) };
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `mode` 0: chunks as JSON (returns the output length); 1: chunk count only (returns it); 2:
/// chunks and graph, counted (returns chunks + graph nodes).
/// Takes ownership of the three input buffers.
#[no_mangle]
pub extern "C" fn ewc_chunk(
    path_ptr: *mut u8,
    path_len: usize,
    text_ptr: *mut u8,
    text_len: usize,
    config_ptr: *mut u8,
    config_len: usize,
    mode: u32,
) -> usize {
    let path = read(path_ptr, path_len);
    let text = read(text_ptr, text_len);
    let config = read(config_ptr, config_len);
    match mode {
        1 => return crate::chunk_count(&path, &text, &config),
        2 => return crate::chunk_graph_count(&path, &text, &config),
        _ => {}
    }
    let json = crate::chunk_to_json(&path, &text, &config);
    OUTPUT.with(|o| {
        let mut o = o.borrow_mut();
        o.clear();
        o.extend_from_slice(json.as_bytes());
        o.len()
    })
}

#[no_mangle]
pub extern "C" fn ewc_output_ptr() -> *const u8 {
    OUTPUT.with(|o| o.borrow().as_ptr())
}
