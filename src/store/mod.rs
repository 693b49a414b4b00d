//! Typed access to D1. Every statement binds at most 100 parameters (the D1 limit); multi-statement
//! writes go through [`Db::batch`], which D1 runs as one transaction.
//!
//! Code never opens a D1 binding itself: it asks [`Stores`] (built once per request or queue
//! batch) for the database of a namespace ([`Stores::for_namespace`], [`Stores::assign`] when
//! creating one), of a job ([`Stores::job_database`]), the catalog ([`Stores::catalog`]) or all of
//! them for a fan-out ([`Stores::databases`]).
pub mod chunks;
pub mod documents;
pub mod github;
pub mod graph;
pub mod jobs;
pub mod keys;
pub mod keyword;
pub mod namespaces;
pub mod oauth;
pub mod parts;
pub mod plans;
pub mod ranks;
mod router;
pub mod runs;
pub mod settings;
pub mod staging;

pub use router::{pick_database, Stores};

use serde::de::DeserializeOwned;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, D1Result};

/// D1's limit on bound parameters per statement.
pub const MAX_PARAMS: usize = 100;

/// A list as one JSON array text (a column value, or a parameter read back with `json_each`). A
/// value that cannot be written as JSON is an error, never an empty list.
pub fn json_array<T: serde::Serialize>(items: &[T]) -> StoreResult<String> {
    serde_json::to_string(items).map_err(|e| StoreError(format!("JSON list: {e}")))
}

/// Bytes of rows bound to one statement as a JSON array (read back with `json_each`). Many rows
/// (a file's graph, a message's chunks) go out in a few such statements instead of one per ~10 rows: D1
/// counts every statement of a batch against its 1,000 queries per invocation, and a large file
/// has thousands of nodes and edges. Well under D1's 2 MB limit for a bound string.
pub const JSON_BATCH_BYTES: usize = 512 * 1024;

pub use edgerag_core::json::json_batches;

/// `DELETE FROM {table} WHERE namespace = ?1 AND path IN (…)` for every path of `paths`: one
/// statement per [`JSON_BATCH_BYTES`] of paths (a JSON array read back with `json_each`), so a
/// message deleting many files costs a few statements, not a few per file.
pub fn delete_paths_statements(
    db: &Db,
    table: &str,
    namespace: &str,
    paths: &[&str],
) -> StoreResult<Vec<D1PreparedStatement>> {
    let sql =
        format!("DELETE FROM {table} WHERE namespace = ?1 AND path IN (SELECT value FROM json_each(?2))");
    json_batches(paths, JSON_BATCH_BYTES)
        .iter()
        .map(|batch| db.stmt(&sql, &args![namespace, batch.as_str()]))
        .collect()
}

/// `SELECT ?1, json_extract(value, '$[0]'), … FROM json_each(?2)` for `columns` columns: the rows
/// of a [`json_batches`] array bound as `?2`, each with the shared `?1` (the namespace) in front.
pub fn from_json(columns: usize) -> String {
    from_json_then(columns, "")
}

/// [`from_json`] with more SQL values after the row's (`", 1"`: a constant column).
pub fn from_json_then(columns: usize, trailing: &str) -> String {
    let values: Vec<String> = (0..columns).map(|i| format!("json_extract(value, '$[{i}]')")).collect();
    format!("SELECT ?1, {}{trailing} FROM json_each(?2)", values.join(", "))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("D1: {0}")]
pub struct StoreError(pub String);

impl From<worker::Error> for StoreError {
    fn from(e: worker::Error) -> Self {
        StoreError(e.to_string())
    }
}

impl From<StoreError> for crate::error::ApiError {
    fn from(e: StoreError) -> Self {
        crate::error::ApiError::internal("database", e)
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// A value bound to a statement parameter.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    Null,
    Text(&'a str),
    Int(i64),
    Real(f64),
    /// Stored as a BLOB (bound as an `ArrayBuffer`).
    Blob(&'a [u8]),
}

impl Arg<'_> {
    /// Bytes of a text or BLOB value (0 for numbers and NULL).
    fn bytes(&self) -> usize {
        match self {
            Arg::Text(s) => s.len(),
            Arg::Blob(b) => b.len(),
            _ => 0,
        }
    }

    fn js(&self) -> JsValue {
        match self {
            Arg::Null => JsValue::null(),
            Arg::Text(s) => JsValue::from_str(s),
            Arg::Int(i) => JsValue::from_f64(*i as f64),
            Arg::Real(f) => JsValue::from_f64(*f),
            Arg::Blob(b) => js_sys::Uint8Array::from(*b).buffer().into(),
        }
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(s: &'a str) -> Self {
        Arg::Text(s)
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(s: &'a String) -> Self {
        Arg::Text(s)
    }
}

impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(s: Option<&'a str>) -> Self {
        s.map_or(Arg::Null, Arg::Text)
    }
}

impl<'a> From<&'a Option<String>> for Arg<'a> {
    fn from(s: &'a Option<String>) -> Self {
        s.as_deref().map_or(Arg::Null, Arg::Text)
    }
}

macro_rules! int_arg {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg<'_> {
            fn from(i: $t) -> Self {
                Arg::Int(i as i64)
            }
        }
    )*};
}
int_arg!(i64, i32, u64, u32, usize, bool);

impl From<Option<i64>> for Arg<'_> {
    fn from(i: Option<i64>) -> Self {
        i.map_or(Arg::Null, Arg::Int)
    }
}

impl From<f64> for Arg<'_> {
    fn from(f: f64) -> Self {
        Arg::Real(f)
    }
}

/// `args![a, b, c]` → `[Arg; 3]` (`.into()` for a `Vec<Arg>`). Imported by path
/// (`use crate::store::args;`), like any other item of the store.
macro_rules! args {
    ($($x:expr),* $(,)?) => { [$($crate::store::Arg::from($x)),*] };
}
pub(crate) use args;

/// `?, ?, ?` placeholders for an `IN (...)` list.
pub fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// `?3,?4,?5` — numbered placeholders from `from`, for statements that also use numbered ones.
pub fn numbered_placeholders(from: usize, count: usize) -> String {
    (from..from + count).map(|i| format!("?{i}")).collect::<Vec<_>>().join(",")
}

/// One D1 database (cheap to clone). Get it from [`Stores`]. A scoped one charges its
/// statements to one invocation of the limits ledger ([`Db::scoped`]).
#[derive(Clone)]
pub struct Db(std::rc::Rc<D1Database>, Option<crate::ledger::Scope>);

impl Db {
    pub fn new(db: D1Database) -> Db {
        Db(std::rc::Rc::new(db), None)
    }

    /// The same database, its statements charged to `scope`'s invocation alone.
    pub fn scoped(&self, scope: &crate::ledger::Scope) -> Db {
        Db(self.0.clone(), Some(scope.clone()))
    }

    /// The workers-rs handle, for statements [`Db`] has no helper for.
    pub fn raw(&self) -> &D1Database {
        &self.0
    }

    pub fn stmt(&self, sql: &str, args: &[Arg<'_>]) -> StoreResult<D1PreparedStatement> {
        debug_assert!(args.len() <= MAX_PARAMS, "{} params: {sql}", args.len());
        crate::ledger::d1_statement(
            self.1.as_ref(),
            sql.len(),
            args.len(),
            args.iter().map(Arg::bytes).max().unwrap_or(0),
        );
        let values: Vec<JsValue> = args.iter().map(Arg::js).collect();
        Ok(self.0.prepare(sql).bind(&values)?)
    }

    pub async fn all<T: DeserializeOwned>(&self, sql: &str, args: &[Arg<'_>]) -> StoreResult<Vec<T>> {
        Ok(self.stmt(sql, args)?.all().await?.results::<T>()?)
    }

    /// The rows of one statement, left in JS: [`JsRows::next`] converts one row at a time, so a
    /// page of large rows is never all in wasm memory at once (which never shrinks) — only the
    /// row being read.
    pub async fn rows(&self, sql: &str, args: &[Arg<'_>]) -> StoreResult<JsRows> {
        let statement = self.stmt(sql, args)?;
        let promise = statement.inner().all().map_err(d1_error)?;
        let result = wasm_bindgen_futures::JsFuture::from(promise).await.map_err(d1_error)?;
        let rows = js_sys::Reflect::get(&result, &JsValue::from_str("results")).map_err(d1_error)?;
        let rows = if rows.is_array() { js_sys::Array::from(&rows) } else { js_sys::Array::new() };
        Ok(JsRows { rows, next: 0 })
    }

    pub async fn first<T: DeserializeOwned>(&self, sql: &str, args: &[Arg<'_>]) -> StoreResult<Option<T>> {
        Ok(self.stmt(sql, args)?.first::<T>(None).await?)
    }

    /// Run one statement; returns the number of rows it changed.
    pub async fn run(&self, sql: &str, args: &[Arg<'_>]) -> StoreResult<usize> {
        let statement = self.stmt(sql, args)?;
        let promise = statement.inner().run().map_err(d1_error)?;
        let result = wasm_bindgen_futures::JsFuture::from(promise).await.map_err(d1_error)?;
        Ok(changes_of(&result))
    }

    /// Run statements as one transaction; returns each statement's changed-row count.
    pub async fn batch(&self, statements: Vec<D1PreparedStatement>) -> StoreResult<Vec<usize>> {
        if statements.is_empty() {
            return Ok(Vec::new());
        }
        use wasm_bindgen::JsCast;
        let db: &JsValue = self.raw().as_ref();
        let list: js_sys::Array = statements.iter().map(|s| JsValue::from(s.inner().clone())).collect();
        let batch = js_sys::Reflect::get(db, &JsValue::from_str("batch"))
            .and_then(|f| f.dyn_into::<js_sys::Function>())
            .map_err(d1_error)?;
        let promise = batch.call1(db, &list).map_err(d1_error)?;
        let results =
            wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(promise)).await.map_err(d1_error)?;
        Ok(js_sys::Array::from(&results).iter().map(|r| changes_of(&r)).collect())
    }

    /// Run statements as one transaction in one round trip and return each statement's result,
    /// for batches whose statements read rows of different shapes (see [`rows`]).
    pub async fn batch_results(&self, statements: Vec<D1PreparedStatement>) -> StoreResult<Vec<D1Result>> {
        if statements.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.0.batch(statements).await?)
    }

    /// Like [`Db::batch`] but returns the rows of each statement (for `RETURNING` / `SELECT`).
    pub async fn batch_rows<T: DeserializeOwned>(
        &self,
        statements: Vec<D1PreparedStatement>,
    ) -> StoreResult<Vec<Vec<T>>> {
        if statements.is_empty() {
            return Ok(Vec::new());
        }
        let results = self.0.batch(statements).await?;
        results.iter().map(|r| Ok(r.results::<T>()?)).collect()
    }
}

/// A statement's rows in JS ([`Db::rows`]).
pub struct JsRows {
    rows: js_sys::Array,
    next: u32,
}

impl JsRows {
    pub fn len(&self) -> usize {
        self.rows.length() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.rows.length() == 0
    }

    /// The next row (the JS array lets go of it).
    pub fn next_row(&mut self) -> Option<JsRow> {
        if self.next >= self.rows.length() {
            return None;
        }
        let row = self.rows.get(self.next);
        self.rows.set(self.next, JsValue::UNDEFINED);
        self.next += 1;
        Some(JsRow(row))
    }

    /// The text columns `columns` of the next row (`None` for a column that is not text).
    pub fn next_text<const N: usize>(&mut self, columns: [&str; N]) -> Option<[Option<String>; N]> {
        self.next_row().map(|row| columns.map(|c| row.text(c)))
    }
}

/// One row of [`JsRows`], its columns read one by one.
pub struct JsRow(JsValue);

impl JsRow {
    fn get(&self, column: &str) -> Option<JsValue> {
        js_sys::Reflect::get(&self.0, &JsValue::from_str(column)).ok()
    }

    /// A text column (`None` when it is not text).
    pub fn text(&self, column: &str) -> Option<String> {
        self.get(column).and_then(|v| v.as_string())
    }

    /// A number column (`None` when it is not a number).
    pub fn number(&self, column: &str) -> Option<f64> {
        self.get(column).and_then(|v| v.as_f64())
    }
}

/// `meta.changes` of a D1 result, read by itself: workers-rs reads the whole `meta` object into
/// `usize` fields, and on wasm32 its `size_after` (the database's size in bytes) no longer fits
/// once the database passes 4 GiB — every write then failed (`invalid value: integer …, expected
/// usize`), which the large-repository benchmark found at 4.3 GB.
fn changes_of(result: &JsValue) -> usize {
    js_sys::Reflect::get(result, &JsValue::from_str("meta"))
        .ok()
        .filter(|m| m.is_object())
        .and_then(|m| js_sys::Reflect::get(&m, &JsValue::from_str("changes")).ok())
        .and_then(|c| c.as_f64())
        .map_or(0, |c| c as usize)
}

/// A D1 call's rejection as a [`StoreError`]: its message and, when it has one, its cause's.
fn d1_error(e: JsValue) -> StoreError {
    use wasm_bindgen::JsCast;
    let Some(error) = e.dyn_ref::<js_sys::Error>() else {
        return StoreError(format!("D1: {}", e.as_string().unwrap_or_else(|| format!("{e:?}"))));
    };
    let message = String::from(error.message());
    let cause = error.cause().dyn_ref::<js_sys::Error>().map(|c| String::from(c.message()));
    match cause {
        Some(cause) if cause != message => StoreError(format!("D1: {message}: {cause}")),
        _ => StoreError(format!("D1: {message}")),
    }
}

/// The rows of one result of [`Db::batch_results`] (none when the batch had no such statement).
pub fn rows<T: DeserializeOwned>(result: Option<&D1Result>) -> StoreResult<Vec<T>> {
    match result {
        Some(r) => Ok(r.results::<T>()?),
        None => Ok(Vec::new()),
    }
}

/// `SELECT COUNT(*) AS n` rows.
#[derive(serde::Deserialize)]
pub struct Count {
    pub n: i64,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_parameter_cap_is_d1_s_published_limit() {
        let limit = crate::ledger::limits().into_iter().find(|l| l.id == "d1Params").map(|l| l.paid);
        assert_eq!(limit, Some(super::MAX_PARAMS as f64));
    }
}
