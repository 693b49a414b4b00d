//! The process allocator: mimalloc for Rust allocations and for tree-sitter's C core (parse
//! trees are built and freed node by node, which glibc malloc serves slowly). The allocator only
//! changes speed, never output.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (the sys crate does not name it).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Route tree-sitter's allocations to mimalloc, and keep freed memory instead of returning it to
/// the OS after 10 ms (a chunk run is short and reuses it at once; returning it cost a tenth of the
/// run in page faults). Called first thing in `main`, before any parser or tree exists.
#[allow(unsafe_code)]
pub fn install() {
    use libmimalloc_sys::{mi_calloc, mi_free, mi_malloc, mi_option_set, mi_realloc};
    // SAFETY: sets a plain integer option; mimalloc reads options at any time.
    unsafe { mi_option_set(PURGE_DELAY, -1) };
    let allocator =
        tree_sitter::Allocator { malloc: mi_malloc, calloc: mi_calloc, realloc: mi_realloc, free: mi_free };
    // SAFETY: no tree-sitter object exists yet (this runs before argument parsing), nothing else
    // calls tree-sitter concurrently (no thread has been started), and mimalloc's four functions
    // have the C allocator contract tree-sitter expects.
    unsafe { tree_sitter::set_allocator(Some(allocator)) };
}
