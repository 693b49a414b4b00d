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

thread_local! {
    static RESOLUTION: RefCell<Option<crate::resolution::Resolution>> = const { RefCell::new(None) };
}

/// The resolution's steps (see [`crate::resolution`]): `step` 0 starts over, 1 adds a stored
/// graph's definitions (0: with room for `first` nodes), 2 resolves row `first` of the next page,
/// 3 ends the page, 4 ranks, 5 seals, 6 counts the votes, 7 reads graph `first` again for its base types. Takes ownership of the buffer (`len` 0: none).
#[no_mangle]
pub extern "C" fn ewc_resolve(step: u32, ptr: *mut u8, len: usize, first: usize) -> usize {
    let text = if len == 0 { String::new() } else { read(ptr, len) };
    RESOLUTION.with(|r| {
        let mut r = r.borrow_mut();
        match step {
            0 => {
                *r = Some(crate::resolution::Resolution::with_capacity(first));
                0
            }
            1 => r.as_mut().map_or(0, |r| r.add(&text)),
            2 => {
                if let Some(r) = r.as_mut() {
                    r.row(first, &text);
                }
                0
            }
            3 => r.as_mut().map_or(0, crate::resolution::Resolution::page),
            5 => r.as_mut().map_or(0, crate::resolution::Resolution::seal),
            6 => r.as_ref().map_or(0, crate::resolution::Resolution::votes),
            7 => r.as_mut().map_or(0, |r| r.bases(first, &text)),
            _ => r.take().map_or(0, crate::resolution::Resolution::rank),
        }
    })
}

/// The system allocator, counting: live bytes and their peak (beside `memory.buffer.byteLength`,
/// which also counts what the allocator holds free).
struct Counting;

static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static PEAK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; only counters are added.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use std::sync::atomic::Ordering::Relaxed;
        let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(live, Relaxed);
        std::alloc::System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        LIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        std::alloc::System.dealloc(ptr, layout);
    }

    // The system's own (which may grow a block in place), as the worker's allocator does.
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use std::sync::atomic::Ordering::Relaxed;
        if new_size >= layout.size() {
            let live = LIVE.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
            PEAK.fetch_max(live, Relaxed);
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Relaxed);
        }
        std::alloc::System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Live heap bytes (`which` 0) or their peak since the last call with `which` 2 (1).
#[no_mangle]
pub extern "C" fn ewc_heap(which: u32) -> usize {
    use std::sync::atomic::Ordering::Relaxed;
    match which {
        0 => LIVE.load(Relaxed),
        1 => PEAK.load(Relaxed),
        _ => PEAK.swap(LIVE.load(Relaxed), Relaxed),
    }
}

thread_local! {
    static MESSAGE: RefCell<crate::chunk_stage::Message> = RefCell::new(Default::default());
}

/// The chunk stage's message (see [`crate::chunk_stage`]): `step` 0 adds a file (`path_len`
/// bytes of path, then its content), 1 runs the message in groups of `path_len` bytes of JSON
/// (returns its chunks), 2 reads the most JSON a group held, 3 + `i` part `i` of its statements'
/// text ([`crate::chunk_stage::Message::parts`]).
/// Takes ownership of the buffer (`len` 0: none).
#[no_mangle]
pub extern "C" fn ewc_chunk_stage(step: u32, ptr: *mut u8, len: usize, path_len: usize) -> usize {
    let mut text = if len == 0 { String::new() } else { read(ptr, len) };
    MESSAGE.with(|m| {
        let mut m = m.borrow_mut();
        match step {
            0 => {
                let content = text.split_off(path_len.min(text.len()));
                m.add(text, content);
                0
            }
            1 => m.run(path_len),
            2 => m.held,
            i => m.parts.get(i as usize - 3).copied().unwrap_or(0),
        }
    })
}
