//! A Rust panic reaches JS as a thrown `Error` with code `INTERNAL_PANIC`, not as an opaque trap.
//! Its own test binary: after a panic the instance is spent (see the crate docs).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used)]

use wasm_bindgen::{closure::Closure, JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn a_panic_becomes_a_thrown_internal_panic_error() {
    edgerag_preview::install_panic_hook();
    // Call a panicking Rust closure from JS and catch what JS sees.
    let boom = Closure::<dyn Fn()>::new(|| {
        let limit: Option<usize> = std::hint::black_box(None);
        limit.expect("limit must be set");
    });
    let catcher = js_sys::Function::new_with_args("f", "try { f(); return null } catch (e) { return e }");
    let thrown = catcher.call1(&JsValue::NULL, boom.as_ref().unchecked_ref()).unwrap();
    assert!(thrown.is_instance_of::<js_sys::Error>(), "{thrown:?}");
    let code = js_sys::Reflect::get(&thrown, &"code".into()).unwrap();
    assert_eq!(code.as_string().as_deref(), Some("INTERNAL_PANIC"));
    let message = String::from(thrown.unchecked_into::<js_sys::Error>().message());
    assert!(message.contains("limit must be set"), "{message}");
}
