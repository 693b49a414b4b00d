//! A counting global allocator for the benches: live heap bytes and their peak, to report the
//! peak heap of one operation. A bench installs it with
//! `#[path = "support/peak_alloc.rs"] mod peak_alloc;` and
//! `#[global_allocator] static ALLOC: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;`.
#![allow(unsafe_code)] // a GlobalAlloc is unsafe by definition; it only forwards to System
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct PeakAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Bytes ever allocated (a realloc that grows counts its growth).
static TOTAL: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for PeakAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            TOTAL.fetch_add(layout.size(), Ordering::Relaxed);
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                TOTAL.fetch_add(grow, Ordering::Relaxed);
                let live = LIVE.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

/// Starts a measurement: resets the peak to what is live now and returns that baseline.
pub fn start() -> usize {
    let live = live();
    PEAK.store(live, Ordering::Relaxed);
    live
}

/// Peak heap bytes above `baseline` (from [`start`]) since the measurement started.
pub fn peak_since(baseline: usize) -> usize {
    PEAK.load(Ordering::Relaxed).saturating_sub(baseline)
}

/// Bytes allocated so far (frees not subtracted): what an operation allocates, whatever it frees
/// meanwhile, is the difference of two readings.
#[allow(dead_code)] // not every bench or test that includes this file reads it
pub fn allocated() -> usize {
    TOTAL.load(Ordering::Relaxed)
}

/// Heap bytes live now.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Routes tree-sitter's C allocations (parse trees, the parse stack) through the counter too, as
/// on wasm32, where tree-sitter allocates from the Rust allocator; natively it calls libc and the
/// counter would miss the tree. Call it before any other tree-sitter call of the process (the
/// first call installs, later ones do nothing).
#[cfg(feature = "tree-sitter")]
#[allow(dead_code)] // not every bench or test that includes this file parses
pub fn count_tree_sitter() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let allocator = tree_sitter::Allocator {
            malloc: c::malloc,
            calloc: c::calloc,
            realloc: c::realloc,
            free: c::free,
        };
        // SAFETY: the four functions form one allocator family returning 8-byte aligned blocks
        // (as libc's malloc does for tree-sitter's types); `Once` runs this once, before the
        // caller's first tree-sitter call.
        unsafe { tree_sitter::set_allocator(Some(allocator)) };
    });
}

/// C allocation functions over the Rust allocator: each block starts with its payload size (8
/// bytes), so `free` and `realloc` can rebuild its layout.
#[cfg(feature = "tree-sitter")]
mod c {
    use std::alloc::{alloc, alloc_zeroed, dealloc, realloc as grow, Layout};
    use std::ffi::c_void;

    const HEADER: usize = 8;

    fn layout(size: usize) -> Option<Layout> {
        Layout::from_size_align(size.checked_add(HEADER)?, HEADER).ok()
    }

    unsafe fn finish(block: *mut u8, size: usize) -> *mut c_void {
        if block.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: `block` holds at least `HEADER + size` bytes, 8-byte aligned.
        unsafe {
            block.cast::<usize>().write(size);
            block.add(HEADER).cast()
        }
    }

    unsafe fn block_of(payload: *mut c_void) -> (*mut u8, Layout) {
        // SAFETY: `payload` came from `finish`, 8 bytes after its block's size.
        unsafe {
            let block = payload.cast::<u8>().sub(HEADER);
            let size = block.cast::<usize>().read();
            (block, layout(size).expect("a layout that was allocated"))
        }
    }

    pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        match layout(size) {
            // SAFETY: the layout's size is at least `HEADER`, never zero.
            Some(l) => unsafe { finish(alloc(l), size) },
            None => std::ptr::null_mut(),
        }
    }

    pub unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
        match count.checked_mul(size).and_then(|n| Some((n, layout(n)?))) {
            // SAFETY: as in `malloc`.
            Some((n, l)) => unsafe { finish(alloc_zeroed(l), n) },
            None => std::ptr::null_mut(),
        }
    }

    pub unsafe extern "C" fn realloc(payload: *mut c_void, size: usize) -> *mut c_void {
        if payload.is_null() {
            // SAFETY: a plain allocation.
            return unsafe { malloc(size) };
        }
        let Some(new) = layout(size) else { return std::ptr::null_mut() };
        // SAFETY: `payload` is a live block of this family; the new size is non-zero.
        unsafe {
            let (block, old) = block_of(payload);
            finish(grow(block, old, new.size()), size)
        }
    }

    pub unsafe extern "C" fn free(payload: *mut c_void) {
        if payload.is_null() {
            return;
        }
        // SAFETY: `payload` is a live block of this family.
        unsafe {
            let (block, layout) = block_of(payload);
            dealloc(block, layout);
        }
    }
}
