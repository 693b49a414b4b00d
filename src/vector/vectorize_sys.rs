//! Raw `wasm-bindgen` externs for a Vectorize index binding (workers-rs has none). Kept apart from
//! the safe wrapper ([`super::vectorize`]), like `worker-sys` vs `worker`. Every method returns a
//! Promise; a synchronous throw (bad arguments) is caught as `Err`.
use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `VectorizeIndex` (the V2 binding): `env.VECTORIZE`.
    #[derive(Debug, Clone)]
    pub type VectorizeIndexSys;

    /// `upsert(vectors: VectorizeVector[]): Promise<VectorizeAsyncMutation>` (≤ 1000 vectors).
    #[wasm_bindgen(method, catch)]
    pub fn upsert(this: &VectorizeIndexSys, vectors: &Array) -> Result<Promise, JsValue>;

    /// `query(vector: number[] | Float32Array, options): Promise<VectorizeMatches>`.
    #[wasm_bindgen(method, catch)]
    pub fn query(this: &VectorizeIndexSys, vector: &JsValue, options: &JsValue) -> Result<Promise, JsValue>;

    /// `getByIds(ids: string[]): Promise<VectorizeVector[]>`.
    #[wasm_bindgen(method, catch, js_name = getByIds)]
    pub fn get_by_ids(this: &VectorizeIndexSys, ids: &Array) -> Result<Promise, JsValue>;

    /// `deleteByIds(ids: string[]): Promise<VectorizeAsyncMutation>`.
    #[wasm_bindgen(method, catch, js_name = deleteByIds)]
    pub fn delete_by_ids(this: &VectorizeIndexSys, ids: &Array) -> Result<Promise, JsValue>;

    /// `describe(): Promise<VectorizeIndexInfo>` (`{ vectorCount, dimensions, … }`).
    #[wasm_bindgen(method, catch)]
    pub fn describe(this: &VectorizeIndexSys) -> Result<Promise, JsValue>;
}
