//! The repository tools' behaviour suite: every tool (`repo.find_symbol`,
//! `repo.symbol_references`, `repo.read_file_range`, `repo.list_files`, `repo.outline`,
//! `repo.grep`, `repo.map`, `repo.impact`) run over a [`RepoStore`] holding one small repository,
//! each case checking what the tool answers. It runs natively over the in-memory store
//! ([`MemoryRepo`]) and in workerd over D1 (through the worker's test route
//! `POST /__test/repo-tools/suite`), so both stores must give the tools the same input.
//!
//! The suite writes one namespace (`repo:<prefix>/tools`) and deletes it at the end. Each case
//! reports pass or its first failed check; nothing panics.
use std::sync::Arc;

use edgerag_core::chunk::CHUNK_SCHEMA_VERSION;
use edgerag_core::graph::{node_id, Edge, EdgeKind, FileGraph, Node, NodeKind, Resolution};
use edgerag_core::{ids, Chunk, ChunkMetadata, ChunkType, Language};

use super::memory::{IndexedFile, IndexedRepo, MemoryRepo};
use super::store::{RepoStore, ToolError};
use super::{
    answer_tokens, grep, impact, list, map, navigation, outline, ChangedRange, GrepRequest, GrepResponse,
    ImpactRequest, LinesQuery, ListFilesQuery, MapRequest, OutlineKind, OutlineQuery, ReferencesQuery,
    SymbolQuery,
};
use crate::error::PortError;
use crate::testing::{CaseFailure, SuiteReport};
use edgerag_api::routes::ReferencesResponse;

/// The store under test plus the writes the suite needs to set it up (what indexing does).
#[async_trait::async_trait(?Send)]
pub trait RepoStores {
    /// Store `repo` as `namespace` as a finished job leaves it: file rows, chunks, the code graph
    /// (edges already resolved) and the ranks computed at the job's finish.
    async fn load(&self, namespace: &str, repo: &IndexedRepo) -> Result<(), PortError>;
    /// Delete the namespace and everything in it.
    async fn clear(&self, namespace: &str) -> Result<(), PortError>;
    fn store(&self) -> &dyn RepoStore;
}

type CaseResult = Result<(), String>;

macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        let ok: bool = $cond;
        if !ok {
            return Err(format!($($msg)+));
        }
    };
}

/// Number of cases [`run_suite`] runs.
pub const CASES: usize = 8;

/// Files of the `lib/` chain: `helper_i` calls `helper_{i+1}`.
const CHAIN: usize = 24;

fn file_graph(path: &str, nodes: Vec<Node>, edges: Vec<Edge>) -> FileGraph {
    FileGraph {
        path: path.into(),
        language: Language::detect(path),
        package: None,
        nodes,
        edges,
        imports: Vec::new(),
    }
}

struct Def<'a> {
    kind: NodeKind,
    name: &'a str,
    lines: (u32, u32),
    signature: Option<&'a str>,
    doc: Option<&'a str>,
}

fn def<'a>(kind: NodeKind, name: &'a str, lines: (u32, u32), signature: &'a str) -> Def<'a> {
    Def { kind, name, lines, signature: Some(signature), doc: None }
}

fn node(path: &str, d: &Def<'_>, parent: Option<&Node>) -> Node {
    let fqn = match parent {
        Some(p) => format!("{}.{}", p.fqn, d.name),
        None => d.name.to_string(),
    };
    Node {
        id: node_id(path, d.kind, &fqn, 0),
        kind: d.kind,
        name: d.name.into(),
        fqn,
        package: None,
        signature: d.signature.map(String::from),
        doc: d.doc.map(String::from),
        path: path.into(),
        language: Language::detect(path),
        start_line: d.lines.0,
        end_line: d.lines.1,
        parent: parent.map(|p| p.id.clone()),
        route: None,
        http_method: None,
        declared_type: None,
    }
}

fn module(path: &str, lines: u32) -> Node {
    let name = path.trim_end_matches(".py").replace('/', ".");
    let d = Def { kind: NodeKind::Module, name: &name, lines: (1, lines), signature: None, doc: None };
    node(path, &d, None)
}

/// A call of a name outside the index (`dst` unresolved).
fn external_call(src: &Node, name: &str, line: u32) -> Edge {
    Edge {
        kind: EdgeKind::Calls,
        src: src.id.clone(),
        dst: None,
        dst_name: name.into(),
        confidence: Resolution::External.confidence(),
        resolution: Resolution::External,
        path: Arc::clone(&src.path),
        line,
        hint: None,
    }
}

fn call(src: &Node, dst: &Node, line: u32) -> Edge {
    Edge {
        kind: EdgeKind::Calls,
        src: src.id.clone(),
        dst: Some(dst.id.clone()),
        dst_name: dst.name.clone(),
        confidence: Resolution::Import.confidence(),
        resolution: Resolution::Import,
        path: Arc::clone(&src.path),
        line,
        hint: None,
    }
}

/// One chunk of `path` holding lines `from..` of `text`.
fn chunk(path: &str, text: &str, from: u32, to: u32, index: u32) -> Chunk {
    let body: String =
        text.lines().skip(from as usize - 1).take((to - from + 1) as usize).collect::<Vec<_>>().join("\n");
    Chunk {
        id: ids::chunk_id(&body, path, from, to),
        text_hash: ids::text_hash(&body),
        path: path.to_string(),
        language: Language::detect(path),
        chunk_type: ChunkType::TextBlock,
        token_count: body.chars().count().div_ceil(4) as u32,
        start_byte: index as usize * 10_000,
        end_byte: index as usize * 10_000 + body.len(),
        text: body,
        start_line: from,
        end_line: to,
        chunk_index: index,
        keywords: Vec::new(),
        metadata: ChunkMetadata { span_hash: ids::span_hash(path, from, to), ..Default::default() },
        updated_at: None,
        version: CHUNK_SCHEMA_VERSION,
    }
}

/// `text` as one file: one chunk, or two overlapping ones cut at `split`.
fn file(path: &str, text: &str, split: Option<u32>) -> IndexedFile {
    let lines = text.lines().count() as u32;
    let chunks = match split {
        Some(at) => vec![chunk(path, text, 1, at, 0), chunk(path, text, at, lines, 1)],
        None => vec![chunk(path, text, 1, lines, 0)],
    };
    IndexedFile {
        path: path.into(),
        language: Language::detect(path).as_str().into(),
        size: text.len() as u64,
        chunks,
    }
}

const UTIL: &str = "import re\n\nSLUG_RE = re.compile(r\"[^a-z0-9]+\")\n\ndef slugify(text):\n    \"\"\"Make a slug.\n    Lowercase.\"\"\"\n    return SLUG_RE.sub(\"-\", text.lower())\n\ndef validate(name):\n    return bool(name)\n";
const MODELS: &str = "from app.util import slugify, validate\n\nclass User:\n    def __init__(self, name):\n        self.name = slugify(name)\n\n    def rename(self, name):\n        validate(name)\n        self.name = slugify(name)\n";
const ROUTES: &str = "from app.models import User\n\n@app.post(\"/users\")\ndef create_user(name):\n    return User(name).name\n";
const TEST_UTIL: &str =
    "from app.util import slugify\n\ndef test_slugify():\n    assert slugify(\"A B\") == \"a-b\"\n";
const TEST_ROUTES: &str =
    "from app.routes import create_user\n\ndef test_create_user():\n    assert create_user(\"x\")\n";
const README: &str = "# Shop\n\nSlugify user names with slugify().\nSee app/util.py.\n";

fn chain_text(i: usize) -> String {
    if i + 1 < CHAIN {
        format!("def helper_{i:02}(x):\n    return helper_{:02}(x) + 1\n", i + 1)
    } else {
        format!("def helper_{i:02}(x):\n    return x\n")
    }
}

/// The suite's repository: a small Python app (a helper module, a model calling it, an HTTP
/// endpoint, tests), a README, and a chain of modules each calling the next.
pub fn fixture() -> IndexedRepo {
    let (util_p, models_p, routes_p, tu_p, tr_p) =
        ("app/util.py", "app/models.py", "app/routes.py", "tests/test_util.py", "tests/test_routes.py");
    let util = module(util_p, 11);
    let slug_re = node(
        util_p,
        &def(NodeKind::Constant, "SLUG_RE", (3, 3), "SLUG_RE = re.compile(r\"[^a-z0-9]+\")"),
        Some(&util),
    );
    let slugify = node(
        util_p,
        &Def {
            doc: Some("\nMake a slug.\nLowercase."),
            ..def(NodeKind::Function, "slugify", (5, 8), "def slugify(text)")
        },
        Some(&util),
    );
    let validate =
        node(util_p, &def(NodeKind::Function, "validate", (10, 11), "def validate(name)"), Some(&util));
    let models = module(models_p, 9);
    let user = node(models_p, &def(NodeKind::Class, "User", (3, 9), "class User"), Some(&models));
    let init =
        node(models_p, &def(NodeKind::Method, "__init__", (4, 5), "def __init__(self, name)"), Some(&user));
    let rename =
        node(models_p, &def(NodeKind::Method, "rename", (7, 9), "def rename(self, name)"), Some(&user));
    let routes = module(routes_p, 5);
    let mut create_user = node(
        routes_p,
        &def(NodeKind::Endpoint, "create_user", (3, 5), "def create_user(name)"),
        Some(&routes),
    );
    create_user.route = Some("/users".into());
    create_user.http_method = Some("POST".into());
    let tu = module(tu_p, 4);
    let test_slugify =
        node(tu_p, &def(NodeKind::Function, "test_slugify", (3, 4), "def test_slugify()"), Some(&tu));
    let tr = module(tr_p, 4);
    let test_create =
        node(tr_p, &def(NodeKind::Function, "test_create_user", (3, 4), "def test_create_user()"), Some(&tr));
    let mut graph = vec![
        file_graph(
            util_p,
            vec![util.clone(), slug_re, slugify.clone(), validate.clone()],
            vec![external_call(&slugify, "lower", 8)],
        ),
        file_graph(
            models_p,
            vec![models, user, init.clone(), rename.clone()],
            vec![call(&init, &slugify, 5), call(&rename, &validate, 8), call(&rename, &slugify, 9)],
        ),
        file_graph(routes_p, vec![routes, create_user.clone()], vec![call(&create_user, &init, 5)]),
        file_graph(tu_p, vec![tu, test_slugify.clone()], vec![call(&test_slugify, &slugify, 4)]),
        file_graph(tr_p, vec![tr, test_create.clone()], vec![call(&test_create, &create_user, 4)]),
    ];
    let mut files = vec![
        file(util_p, UTIL, Some(8)),
        file(models_p, MODELS, None),
        file(routes_p, ROUTES, None),
        file(tu_p, TEST_UTIL, None),
        file(tr_p, TEST_ROUTES, None),
        file("README.md", README, None),
    ];
    let helpers: Vec<(String, Node, Node)> = (0..CHAIN)
        .map(|i| {
            let path = format!("lib/mod_{i:02}.py");
            let m = module(&path, 2);
            let name = format!("helper_{i:02}");
            let signature = format!("def {name}(x)");
            let h = node(&path, &def(NodeKind::Function, &name, (1, 2), &signature), Some(&m));
            (path, m, h)
        })
        .collect();
    for (i, (path, m, h)) in helpers.iter().enumerate() {
        let edges = helpers.get(i + 1).map(|next| vec![call(h, &next.2, 2)]).unwrap_or_default();
        graph.push(file_graph(path, vec![m.clone(), h.clone()], edges));
        files.push(file(path, &chain_text(i), None));
    }
    IndexedRepo { files, graph }
}

fn failed(e: ToolError) -> String {
    format!("{} {}: {e}", e.status(), e.code())
}

/// The error a call must fail with: `(status, code)`.
fn refused<T: std::fmt::Debug>(got: Result<T, ToolError>, status: u16, code: &str) -> CaseResult {
    match got {
        Err(e) if e.status() == status && e.code() == code => Ok(()),
        other => Err(format!("expected {status} {code}, got {other:?}")),
    }
}

fn symbol_q(v: serde_json::Value) -> Result<SymbolQuery, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

async fn find_symbols(store: &dyn RepoStore, ns: &str) -> CaseResult {
    let find = |v| async move { navigation::find_symbols(store, ns, &symbol_q(v)?).await.map_err(failed) };
    let found = find(serde_json::json!({"name": "slugify"})).await?;
    let [s] = found.symbols.as_slice() else {
        return Err(format!("one slugify: {found:?}"));
    };
    check!(
        (s.kind.as_str(), s.fqn.as_str(), s.path.as_str(), s.language.as_str(), s.start_line, s.end_line)
            == ("FUNCTION", "app.util.slugify", "app/util.py", "python", 5, 8),
        "slugify's kind, fqn, path, language and lines: {s:?}"
    );
    check!(
        s.signature.as_deref() == Some("def slugify(text)")
            && s.doc.as_deref() == Some("\nMake a slug.\nLowercase.")
            && s.parent.is_some()
            && s.route.is_none(),
        "slugify's signature, whole doc and parent: {s:?}"
    );
    let by_fqn = find(serde_json::json!({"name": " app.models.User.rename "})).await?;
    check!(
        by_fqn.symbols.iter().map(|s| s.name.as_str()).collect::<Vec<_>>() == ["rename"],
        "by fully qualified name, trimmed: {by_fqn:?}"
    );
    let module = find(serde_json::json!({"name": "app.util"})).await?;
    check!(
        module.symbols.len() == 1
            && module.symbols[0].kind == "MODULE"
            && module.symbols[0].parent.is_none()
            && module.symbols[0].signature.is_none(),
        "a module is found too, without parent or signature: {module:?}"
    );
    let endpoint = find(serde_json::json!({"name": "create_user"})).await?;
    check!(
        endpoint.symbols.first().map(|s| (s.route.as_deref(), s.http_method.as_deref()))
            == Some((Some("/users"), Some("POST"))),
        "an endpoint's route and method: {endpoint:?}"
    );
    let method = find(serde_json::json!({"name": "rename", "kind": "method"})).await?;
    check!(method.symbols.len() == 1, "kind in any case: {method:?}");
    let function = find(serde_json::json!({"name": "rename", "kind": "FUNCTION"})).await?;
    check!(function.symbols.is_empty(), "another kind: {function:?}");
    for (path, n) in [("app/*.py", 1), ("app/util.py", 1), ("tests/*", 0), ("", 1)] {
        let got = find(serde_json::json!({"name": "slugify", "path": path})).await?;
        check!(got.symbols.len() == n, "path {path:?}: {got:?}");
    }
    let nothing = find(serde_json::json!({"name": "nope"})).await?;
    check!(nothing.symbols.is_empty(), "an unknown name: {nothing:?}");
    let helpers: Vec<String> = (0..3).map(|i| format!("lib.mod_{i:02}")).collect();
    let first = find(serde_json::json!({"name": helpers[1]})).await?;
    check!(
        first.symbols.iter().map(|s| s.path.as_str()).collect::<Vec<_>>() == ["lib/mod_01.py"],
        "each module by its name: {first:?}"
    );
    let by_id = navigation::symbol(store, ns, &s.id).await.map_err(failed)?;
    check!(&by_id == s, "one symbol by id is the same symbol: {by_id:?}");
    refused(navigation::symbol(store, ns, "nope").await, 404, "UNKNOWN_SYMBOL")?;
    for bad in [
        serde_json::json!({"name": "  "}),
        serde_json::json!({"name": "slugify", "limit": 0}),
        serde_json::json!({"name": "slugify", "limit": 201}),
        serde_json::json!({"name": "slugify", "path": "app/["}),
    ] {
        refused(navigation::find_symbols(store, ns, &symbol_q(bad.clone())?).await, 400, "INVALID_REQUEST")
            .map_err(|e| format!("{bad}: {e}"))?;
    }
    Ok(())
}

fn refs_q(v: serde_json::Value) -> Result<ReferencesQuery, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

/// Each reference as `depth path:line name` (the symbol's fqn, or the name as written).
fn refs(r: &ReferencesResponse) -> Vec<String> {
    r.references
        .iter()
        .map(|x| {
            let name = x.symbol.as_ref().map(|s| s.fqn.clone()).or(x.dst_name.clone()).unwrap_or_default();
            format!("{} {}:{} {name}", x.depth, x.path, x.line)
        })
        .collect()
}

async fn references(store: &dyn RepoStore, ns: &str) -> CaseResult {
    let id_of = |name: &'static str| async move {
        let found = navigation::find_symbols(store, ns, &symbol_q(serde_json::json!({"name": name}))?)
            .await
            .map_err(failed)?;
        found.symbols.into_iter().next().map(|s| s.id).ok_or(format!("{name} is found"))
    };
    let (slugify, rename, create_user) =
        (id_of("slugify").await?, id_of("rename").await?, id_of("create_user").await?);
    let get = |id: String, v| async move {
        navigation::references(store, ns, &id, &refs_q(v)?).await.map_err(failed)
    };
    let callers = get(slugify.clone(), serde_json::json!({})).await?;
    check!(
        callers.symbol.id == slugify
            && refs(&callers)
                == [
                    "1 app/models.py:5 app.models.User.__init__",
                    "1 app/models.py:9 app.models.User.rename",
                    "1 tests/test_util.py:4 tests.test_util.test_slugify"
                ],
        "callers by default, in path and line order: {:?}",
        refs(&callers)
    );
    let r = &callers.references[0];
    check!(
        r.kind == "CALLS"
            && r.dst_name.is_none()
            && r.confidence == f64::from(Resolution::Import.confidence()),
        "a resolved reference's kind, confidence, no name: {r:?}"
    );
    check!(callers.next_offset.is_none(), "one page: {callers:?}");
    let deep = get(slugify.clone(), serde_json::json!({"depth": 2})).await?;
    check!(
        refs(&deep)[3..] == ["2 app/routes.py:5 app.routes.create_user"],
        "depth 2 adds the callers' callers: {:?}",
        refs(&deep)
    );
    let page = get(slugify.clone(), serde_json::json!({"depth": 2, "limit": 3, "offset": 1})).await?;
    check!(refs(&page) == refs(&deep)[1..4] && page.next_offset.is_none(), "a page from an offset: {page:?}");
    let head = get(slugify.clone(), serde_json::json!({"depth": 2, "limit": 2})).await?;
    check!(head.references.len() == 2 && head.next_offset == Some(2), "the next page's offset: {head:?}");
    let callees = get(slugify.clone(), serde_json::json!({"direction": "callees"})).await?;
    check!(
        refs(&callees) == ["1 app/util.py:8 lower"]
            && callees.references[0].symbol.is_none()
            && callees.references[0].confidence == 0.0,
        "a callee outside the index, by name: {callees:?}"
    );
    let rename_callees = get(rename, serde_json::json!({"direction": "callees"})).await?;
    check!(
        refs(&rename_callees)
            == ["1 app/models.py:8 app.util.validate", "1 app/models.py:9 app.util.slugify"],
        "callees: {:?}",
        refs(&rename_callees)
    );
    let chain = get(create_user, serde_json::json!({"direction": "callees", "depth": 2})).await?;
    check!(
        refs(&chain) == ["1 app/routes.py:5 app.models.User.__init__", "2 app/models.py:5 app.util.slugify"],
        "callees' callees: {:?}",
        refs(&chain)
    );
    for direction in ["implementers", "importers", "referencers", "referenced"] {
        let none = get(slugify.clone(), serde_json::json!({"direction": direction})).await?;
        check!(none.references.is_empty(), "no {direction}: {none:?}");
    }
    refused(
        navigation::references(store, ns, "nope", &ReferencesQuery::default()).await,
        404,
        "UNKNOWN_SYMBOL",
    )?;
    for bad in
        [serde_json::json!({"depth": 3}), serde_json::json!({"depth": 0}), serde_json::json!({"limit": 501})]
    {
        refused(
            navigation::references(store, ns, &slugify, &refs_q(bad.clone())?).await,
            400,
            "INVALID_REQUEST",
        )
        .map_err(|e| format!("{bad}: {e}"))?;
    }
    Ok(())
}

async fn line_reads(store: &dyn RepoStore, ns: &str) -> CaseResult {
    let read = |path: &'static str, start: i64, end: i64| async move {
        navigation::read_lines(store, ns, path, &LinesQuery { start, end }).await
    };
    let whole = read("app/util.py", 1, 11).await.map_err(failed)?;
    check!(
        whole.text == UTIL.trim_end_matches('\n') && (whole.start, whole.end) == (1, 11),
        "the whole file across its two overlapping chunks: {whole:?}"
    );
    let middle = read("app/util.py", 7, 9).await.map_err(failed)?;
    let expected: Vec<&str> = UTIL.lines().skip(6).take(3).collect();
    check!(middle.text == expected.join("\n"), "lines 7..9: {middle:?}");
    let one = read("README.md", 3, 3).await.map_err(failed)?;
    check!(one.text == "Slugify user names with slugify().", "one line: {one:?}");
    match read("app/util.py", 1, 12).await {
        Err(e)
            if e.code() == "BAD_RANGE"
                && e.to_string() == "app/util.py has 11 lines; lines 1..12 are past its end" => {}
        other => return Err(format!("past the end: {other:?}")),
    }
    refused(read("app/util.py", 0, 3).await, 400, "BAD_RANGE")?;
    refused(read("app/util.py", 5, 4).await, 400, "BAD_RANGE")?;
    refused(read("app/util.py", 1, 5_001).await, 400, "BAD_RANGE")?;
    refused(read("app/nope.py", 1, 1).await, 404, "FILE_NOT_FOUND")
}

fn list_q(v: serde_json::Value) -> ListFilesQuery {
    serde_json::from_value(v).unwrap_or_default()
}

async fn list_files(store: &dyn RepoStore, ns: &str) -> CaseResult {
    let all = list::list_files(store, ns, &ListFilesQuery::default()).await.map_err(failed)?;
    check!(all.total == 6 + CHAIN as u32 && all.files.len() == all.total as usize, "every file: {all:?}");
    check!(!all.truncated && all.next_offset.is_none(), "one page: {all:?}");
    let paths: Vec<&str> = all.files.iter().map(|f| f.path.as_str()).collect();
    let mut sorted = paths.clone();
    sorted.sort();
    check!(paths == sorted && paths[0] == "README.md", "path order: {paths:?}");
    let util = all.files.iter().find(|f| f.path == "app/util.py").ok_or("app/util.py is listed")?;
    check!(
        (util.language.as_str(), util.size, util.lines) == ("python", UTIL.len() as u64, 11),
        "language, size and lines of app/util.py: {util:?}"
    );
    // Pages follow each other and together are the whole list.
    let mut paged = Vec::new();
    let mut offset = Some(0);
    while let Some(o) = offset {
        let page = list::list_files(store, ns, &list_q(serde_json::json!({"limit": 7, "offset": o})))
            .await
            .map_err(failed)?;
        check!(page.files.len() <= 7 && page.total == all.total, "a page of 7: {page:?}");
        paged.extend(page.files.into_iter().map(|f| f.path));
        offset = page.next_offset;
    }
    check!(paged == paths, "pages: {paged:?}");
    let app =
        list::list_files(store, ns, &list_q(serde_json::json!({"prefix": "/app/"}))).await.map_err(failed)?;
    let app_paths: Vec<&str> = app.files.iter().map(|f| f.path.as_str()).collect();
    check!(app_paths == ["app/models.py", "app/routes.py", "app/util.py"], "prefix app: {app_paths:?}");
    let none =
        list::list_files(store, ns, &list_q(serde_json::json!({"prefix": "ap"}))).await.map_err(failed)?;
    check!(none.total == 0, "a prefix is a folder, not a string prefix: {none:?}");
    let tests = list::list_files(store, ns, &list_q(serde_json::json!({"glob": "tests/*.py"})))
        .await
        .map_err(failed)?;
    check!(tests.total == 2, "glob tests/*.py: {tests:?}");
    let md = list::list_files(store, ns, &list_q(serde_json::json!({"language": "Markdown"})))
        .await
        .map_err(failed)?;
    check!(md.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>() == ["README.md"], "language: {md:?}");
    let cut =
        list::list_files(store, ns, &list_q(serde_json::json!({"maxTokens": 100}))).await.map_err(failed)?;
    check!(
        cut.truncated && !cut.files.is_empty() && answer_tokens(&cut) <= 100,
        "a page over maxTokens is cut: {cut:?}"
    );
    check!(cut.next_offset == Some(cut.files.len() as u32), "the cut page continues: {cut:?}");
    refused(
        list::list_files(store, ns, &list_q(serde_json::json!({"glob": "src/["}))).await,
        400,
        "INVALID_REQUEST",
    )?;
    refused(
        list::list_files(store, ns, &list_q(serde_json::json!({"limit": 0}))).await,
        400,
        "INVALID_REQUEST",
    )?;
    refused(
        list::list_files(store, ns, &list_q(serde_json::json!({"prefix": "../x"}))).await,
        400,
        "INVALID_REQUEST",
    )
}

fn outline_q(path: &str, offset: Option<u32>, max_tokens: Option<u32>) -> OutlineQuery {
    OutlineQuery { path: Some(path.into()), offset, max_tokens }
}

async fn outlines(store: &dyn RepoStore, ns: &str) -> CaseResult {
    let m = outline::outline(store, ns, &outline_q("app/models.py", None, None)).await.map_err(failed)?;
    check!(m.kind == OutlineKind::File && m.files.len() == 1 && !m.truncated, "a file outline: {m:?}");
    let top = &m.files[0].symbols;
    check!(top.len() == 1 && top[0].name == "User" && top[0].kind == "CLASS", "top level of models: {top:?}");
    let methods: Vec<&str> = top[0].children.iter().map(|s| s.name.as_str()).collect();
    check!(methods == ["__init__", "rename"], "the class's methods under it: {methods:?}");
    let u = outline::outline(store, ns, &outline_q("app/util.py", None, None)).await.map_err(failed)?;
    let names: Vec<&str> = u.files[0].symbols.iter().map(|s| s.name.as_str()).collect();
    check!(names == ["SLUG_RE", "slugify", "validate"], "util's symbols in line order: {names:?}");
    let s = &u.files[0].symbols[1];
    check!(
        (s.start_line, s.end_line, s.signature.as_deref(), s.doc.as_deref())
            == (5, 8, Some("def slugify(text)"), Some("Make a slug.")),
        "slugify's lines, signature and first doc line: {s:?}"
    );
    let folder = outline::outline(store, ns, &outline_q("app", None, None)).await.map_err(failed)?;
    check!(folder.kind == OutlineKind::Folder && folder.files.len() == 3, "a folder outline: {folder:?}");
    let models = &folder.files[0];
    check!(
        models.path == "app/models.py"
            && models.symbols.len() == 1
            && models.symbols[0].name == "User"
            && models.symbols[0].children.is_empty(),
        "a folder lists top-level symbols only: {models:?}"
    );
    // The whole repository, a page at a time within a small budget.
    let mut seen = Vec::new();
    let mut offset = None;
    loop {
        let page = outline::outline(store, ns, &outline_q("", offset, Some(150))).await.map_err(failed)?;
        check!(answer_tokens(&page) <= 150, "a page within maxTokens: {}", answer_tokens(&page));
        check!(!page.files.is_empty(), "every page makes progress");
        seen.extend(page.files.into_iter().map(|f| f.path));
        match page.next_offset {
            Some(o) => offset = Some(o),
            None => break,
        }
    }
    check!(seen.len() == 6 + CHAIN, "pages cover every file once: {seen:?}");
    refused(outline::outline(store, ns, &outline_q("nope/x.py", None, None)).await, 404, "PATH_NOT_FOUND")?;
    refused(outline::outline(store, ns, &outline_q("a/../b", None, None)).await, 400, "INVALID_REQUEST")
}

fn grep_q(v: serde_json::Value) -> Result<GrepRequest, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

fn lines(r: &GrepResponse) -> Vec<String> {
    r.matches.iter().map(|m| format!("{}:{}", m.path, m.line)).collect()
}

async fn greps(store: &dyn RepoStore, ns: &str) -> CaseResult {
    let g = |v| async move { grep::grep(store, ns, &grep_q(v)?).await.map_err(failed) };
    let lit = g(serde_json::json!({"pattern": "slugify("})).await?;
    check!(
        lines(&lit)
            == [
                "README.md:3",
                "app/models.py:5",
                "app/models.py:9",
                "app/util.py:5",
                "tests/test_util.py:3",
                "tests/test_util.py:4"
            ],
        "a literal, in path and line order: {:?}",
        lines(&lit)
    );
    check!(lit.used_index && lit.files_scanned == 4, "the index picked the 4 files to read: {lit:?}");
    check!(!lit.limit_reached && lit.next_cursor.is_none() && !lit.truncated, "one page: {lit:?}");
    check!(lit.matches[3].text == "def slugify(text):", "the line as indexed: {:?}", lit.matches[3]);
    let upper = g(serde_json::json!({"pattern": "SLUGIFY"})).await?;
    check!(upper.matches.is_empty(), "case-sensitive by default: {:?}", lines(&upper));
    let any_case = g(serde_json::json!({"pattern": "SLUGIFY", "caseSensitive": false})).await?;
    check!(any_case.matches.len() == 8, "case-insensitive: {:?}", lines(&any_case));
    let re = g(serde_json::json!({"pattern": r"def \w+_user\(", "regex": true})).await?;
    check!(
        lines(&re) == ["app/routes.py:4", "tests/test_routes.py:3"] && re.used_index,
        "a regex with a required literal: {:?}",
        lines(&re)
    );
    let no_literal = g(serde_json::json!({"pattern": r"\w+\(\)", "regex": true})).await?;
    check!(
        lines(&no_literal)
            == ["README.md:3", "app/util.py:8", "tests/test_routes.py:3", "tests/test_util.py:3"]
            && !no_literal.used_index,
        "a regex without a literal reads every file: {:?}",
        lines(&no_literal)
    );
    let ctx = g(serde_json::json!({"pattern": "def rename", "context": 1})).await?;
    let m = ctx.matches.first().ok_or("def rename is found")?;
    check!(
        m.line == 7 && m.before == [""] && m.after == ["        validate(name)"],
        "context lines around a match: {m:?}"
    );
    let across = g(serde_json::json!({"pattern": "text.lower()"})).await?;
    check!(
        lines(&across) == ["app/util.py:8"],
        "a line two chunks overlap is found once: {:?}",
        lines(&across)
    );
    let tests_only = g(serde_json::json!({"pattern": "slugify(", "paths": ["tests/*"]})).await?;
    check!(
        lines(&tests_only) == ["tests/test_util.py:3", "tests/test_util.py:4"],
        "paths: {:?}",
        lines(&tests_only)
    );
    let md = g(serde_json::json!({"pattern": "slugify(", "languages": ["markdown"]})).await?;
    check!(lines(&md) == ["README.md:3"], "languages: {:?}", lines(&md));
    // Pages of 20 through the 47 lines naming a helper: in order, each once.
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let page = g(serde_json::json!({"pattern": "helper_", "limit": 20, "cursor": cursor})).await?;
        check!(page.matches.len() <= 20, "a page holds at most its limit");
        all.extend(lines(&page));
        cursor = page.next_cursor.clone();
        check!(page.limit_reached == cursor.is_some(), "limitReached says a next page exists: {page:?}");
        if cursor.is_none() {
            break;
        }
    }
    check!(all.len() == 2 * CHAIN - 1, "every matching line once: {} {all:?}", all.len());
    check!(all.first().map(String::as_str) == Some("lib/mod_00.py:1"), "from the first: {all:?}");
    let mut dedup = all.clone();
    dedup.dedup();
    check!(dedup == all, "no line twice: {all:?}");
    let everywhere = g(serde_json::json!({"pattern": ".", "regex": true, "limit": 10})).await?;
    check!(
        everywhere.matches.len() == 10 && everywhere.limit_reached && everywhere.next_cursor.is_some(),
        "a pattern matching everywhere stops at its limit and says so: {everywhere:?}"
    );
    let small = g(serde_json::json!({"pattern": "helper_", "limit": 1000, "maxTokens": 100})).await?;
    check!(
        small.truncated
            && answer_tokens(&small) <= 100
            && small.next_cursor.is_some()
            && !small.matches.is_empty(),
        "an answer over maxTokens is cut and continues: {small:?}"
    );
    refused(
        grep::grep(store, ns, &grep_q(serde_json::json!({"pattern": "fn (", "regex": true}))?).await,
        400,
        "INVALID_PATTERN",
    )?;
    refused(
        grep::grep(store, ns, &grep_q(serde_json::json!({"pattern": "x", "context": 11}))?).await,
        400,
        "INVALID_REQUEST",
    )?;
    refused(
        grep::grep(store, ns, &grep_q(serde_json::json!({"pattern": "x", "cursor": "nope"}))?).await,
        400,
        "INVALID_REQUEST",
    )
}

fn map_q(v: serde_json::Value) -> Result<MapRequest, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

async fn maps(store: &dyn RepoStore, ns: &str) -> CaseResult {
    let run = |v| async move { map::map(store, ns, &map_q(v)?).await.map_err(failed) };
    let plain = run(serde_json::json!({})).await?;
    let total = 5 + CHAIN as u32;
    check!(
        plain.files_total == total
            && plain.files.len() == total as usize
            && !plain.personalized
            && !plain.truncated,
        "every file with a graph: {} of {}",
        plain.files.len(),
        plain.files_total
    );
    for w in plain.files.windows(2) {
        check!(
            w[0].rank > w[1].rank || (w[0].rank == w[1].rank && w[0].path < w[1].path),
            "rank order, ties by path: {} {} / {} {}",
            w[0].path,
            w[0].rank,
            w[1].path,
            w[1].rank
        );
    }
    let sum: f64 = plain.files.iter().map(|f| f.rank).sum();
    check!((sum - 1.0).abs() < 1e-3, "file ranks sum to 1: {sum}");
    let util = plain.files.iter().find(|f| f.path == "app/util.py").ok_or("app/util.py is mapped")?;
    let sigs: Vec<(&str, u32)> = util.symbols.iter().map(|s| (s.signature.as_str(), s.line)).collect();
    check!(
        sigs == [
            ("SLUG_RE = re.compile(r\"[^a-z0-9]+\")", 3),
            ("def slugify(text)", 5),
            ("def validate(name)", 10)
        ],
        "definitions as signatures, no modules: {sigs:?}"
    );
    let again = run(serde_json::json!({})).await?;
    check!(serde_json::to_value(&again).ok() == serde_json::to_value(&plain).ok(), "the same map twice");
    let mut previous = 0;
    for budget in [100u32, 150, 300, 600, 1_200] {
        let m = run(serde_json::json!({"maxTokens": budget})).await?;
        check!(
            answer_tokens(&m) <= budget as usize,
            "maxTokens {budget} is a hard limit: {}",
            answer_tokens(&m)
        );
        check!(m.files.len() >= previous, "a larger budget holds as many files");
        check!(m.truncated == (m.files.len() < total as usize), "truncated says files were left out");
        check!(m.files.iter().zip(&plain.files).all(|(a, b)| a.path == b.path), "a prefix of the full map");
        previous = m.files.len();
    }
    // Personalized: PageRank from the files asked about, over the files' graph.
    let about = run(serde_json::json!({"symbols": ["helper_10"]})).await?;
    let first: Vec<&str> = about.files.iter().take(3).map(|f| f.path.as_str()).collect();
    check!(
        about.personalized && first == ["lib/mod_10.py", "lib/mod_11.py", "lib/mod_12.py"],
        "the file defining the symbol, then what it uses: {first:?}"
    );
    let psum: f64 = about.files.iter().map(|f| f.rank).sum();
    check!((psum - 1.0).abs() < 1e-3, "personalized ranks sum to 1: {psum}");
    let before = about.files.iter().position(|f| f.path == "lib/mod_09.py").ok_or("mod_09 is mapped")?;
    let after = about.files.iter().position(|f| f.path == "lib/mod_20.py").ok_or("mod_20 is mapped")?;
    check!(after < before, "what the symbol reaches ranks above what reaches it: {after} vs {before}");
    let again = run(serde_json::json!({"symbols": ["helper_10"]})).await?;
    check!(serde_json::to_value(&again).ok() == serde_json::to_value(&about).ok(), "deterministic");
    let q = run(serde_json::json!({"query": "Where is slugify called?"})).await?;
    check!(
        q.personalized && q.files[0].path == "app/util.py",
        "a question's words seed the ranks: {:?}",
        q.files[0]
    );
    let tests = run(serde_json::json!({"paths": ["tests/*"]})).await?;
    // The tests and what they reach (util, routes, models) come before the files they do not.
    let reached: Vec<&str> = tests.files.iter().take(5).map(|f| f.path.as_str()).collect();
    let mut sorted = reached.clone();
    sorted.sort_unstable();
    check!(
        sorted
            == [
                "app/models.py",
                "app/routes.py",
                "app/util.py",
                "tests/test_routes.py",
                "tests/test_util.py"
            ],
        "paths seed the ranks: {reached:?}"
    );
    check!(tests.files[5..].iter().all(|f| f.rank == 0.0), "nothing else is reached: {:?}", tests.files[5]);
    let nothing = run(serde_json::json!({"query": "zz"})).await?;
    check!(!nothing.personalized, "nothing matched: the plain map");
    refused(
        map::map(store, ns, &map_q(serde_json::json!({"query": "x".repeat(2_001)}))?).await,
        400,
        "INVALID_REQUEST",
    )?;
    refused(map::map(store, ns, &map_q(serde_json::json!({"maxTokens": 99}))?).await, 400, "INVALID_REQUEST")
}

fn impact_q(
    changes: &[(&str, u32, u32)],
    depth: Option<u32>,
    limit: Option<u32>,
    offset: Option<u32>,
) -> ImpactRequest {
    ImpactRequest {
        changes: changes
            .iter()
            .map(|(p, s, e)| ChangedRange { path: p.to_string(), start_line: Some(*s), end_line: Some(*e) })
            .collect(),
        depth,
        limit,
        offset,
        ..Default::default()
    }
}

async fn impacts(store: &dyn RepoStore, ns: &str) -> CaseResult {
    let change = [("app/util.py", 5, 6)];
    let full = impact::impact(store, ns, &impact_q(&change, None, None, None)).await.map_err(failed)?;
    let changed: Vec<&str> = full.changed.iter().map(|s| s.fqn.as_str()).collect();
    check!(changed == ["app.util.slugify"], "the changed symbol: {changed:?}");
    let impacted: Vec<(u32, &str)> = full.impacted.iter().map(|i| (i.depth, i.symbol.fqn.as_str())).collect();
    let mut at_one: Vec<&str> = impacted.iter().filter(|i| i.0 == 1).map(|i| i.1).collect();
    at_one.sort_unstable();
    check!(
        at_one == ["app.models.User.__init__", "app.models.User.rename", "tests.test_util.test_slugify"],
        "depth 1: {impacted:?}"
    );
    check!(
        impacted[3..] == [(2, "app.routes.create_user"), (3, "tests.test_routes.test_create_user")],
        "depths 2 and 3, nearest first: {impacted:?}"
    );
    check!(full.total == 5 && full.next_offset.is_none(), "every impacted symbol: {full:?}");
    let far = &full.impacted[4];
    let via: Vec<(&str, &str)> = far.via.iter().map(|e| (e.from.as_str(), e.to.as_str())).collect();
    check!(
        via.len() == 3
            && via.contains(&("tests.test_routes.test_create_user", "app.routes.create_user"))
            && via.contains(&("app.routes.create_user", "app.models.User.__init__"))
            && via.contains(&("app.models.User.__init__", "app.util.slugify")),
        "the path of edges that reaches it: {via:?}"
    );
    check!(far.via.iter().all(|e| e.kind == "CALLS"), "edge kinds: {:?}", far.via);
    let endpoints: Vec<(&str, Option<&str>, Option<&str>)> = full
        .endpoints
        .iter()
        .map(|e| (e.fqn.as_str(), e.route.as_deref(), e.http_method.as_deref()))
        .collect();
    check!(
        endpoints == [("app.routes.create_user", Some("/users"), Some("POST"))],
        "endpoints: {endpoints:?}"
    );
    check!(full.tests == ["tests/test_routes.py", "tests/test_util.py"], "test files: {:?}", full.tests);
    let near = impact::impact(store, ns, &impact_q(&change, Some(1), None, None)).await.map_err(failed)?;
    check!(
        near.total == 3 && near.impacted.iter().all(|i| i.depth == 1) && near.endpoints.is_empty(),
        "depth 1 stops there: {near:?}"
    );
    check!(near.tests == ["tests/test_util.py"], "tests within depth 1: {:?}", near.tests);
    let page = impact::impact(store, ns, &impact_q(&change, None, Some(2), Some(2))).await.map_err(failed)?;
    check!(
        page.impacted.len() == 2
            && page.next_offset == Some(4)
            && page.impacted[0].symbol.id == full.impacted[2].symbol.id,
        "paged: {page:?}"
    );
    let diff =
        "--- a/app/util.py\n+++ b/app/util.py\n@@ -5,2 +5,2 @@\n-def slugify(t):\n+def slugify(text):\n";
    let by_diff = impact::impact(store, ns, &ImpactRequest { diff: Some(diff.into()), ..Default::default() })
        .await
        .map_err(failed)?;
    check!(
        serde_json::to_value(&by_diff).ok() == serde_json::to_value(&full).ok(),
        "a diff of the same lines answers the same"
    );
    let whole = impact::impact(
        store,
        ns,
        &ImpactRequest {
            changes: vec![ChangedRange { path: "lib/mod_23.py".into(), start_line: None, end_line: None }],
            depth: Some(3),
            ..Default::default()
        },
    )
    .await
    .map_err(failed)?;
    let chain: Vec<&str> = whole.impacted.iter().map(|i| i.symbol.fqn.as_str()).collect();
    check!(
        chain == ["lib.mod_22.helper_22", "lib.mod_21.helper_21", "lib.mod_20.helper_20"],
        "a whole file, three steps back: {chain:?}"
    );
    refused(
        impact::impact(store, ns, &impact_q(&change, Some(4), None, None)).await,
        400,
        "INVALID_REQUEST",
    )?;
    refused(impact::impact(store, ns, &ImpactRequest::default()).await, 400, "INVALID_REQUEST")?;
    refused(
        impact::impact(store, ns, &ImpactRequest { diff: Some("not a diff".into()), ..Default::default() })
            .await,
        400,
        "INVALID_DIFF",
    )?;
    refused(
        impact::impact(store, ns, &impact_q(&[("app/util.py", 9, 3)], None, None, None)).await,
        400,
        "INVALID_REQUEST",
    )
}

/// Runs every case over `stores` in namespace `repo:<prefix>/tools`, cleaning up after.
pub async fn run_suite(stores: &dyn RepoStores, prefix: &str) -> SuiteReport {
    let ns = format!("repo:{prefix}/tools");
    let mut report = SuiteReport::default();
    let _ = stores.clear(&ns).await;
    if let Err(e) = stores.load(&ns, &fixture()).await {
        report.failed.push(CaseFailure { case: "setup".into(), error: e.to_string() });
        let _ = stores.clear(&ns).await;
        return report;
    }
    let store = stores.store();
    let cases: [(&str, CaseResult); CASES] = [
        ("find_symbol_by_name_or_fqn_kind_and_path", find_symbols(store, &ns).await),
        ("symbol_references_both_ways_to_depth_two_paged", references(store, &ns).await),
        ("read_file_range_rebuilds_lines_from_overlapping_chunks", line_reads(store, &ns).await),
        ("list_files_pages_folders_globs_and_languages", list_files(store, &ns).await),
        ("outline_is_a_tree_for_a_file_and_top_levels_for_a_folder", outlines(store, &ns).await),
        ("grep_literal_regex_case_context_paths_limit_and_cursor", greps(store, &ns).await),
        ("map_ranks_fits_its_budget_is_deterministic_and_personalizes", maps(store, &ns).await),
        ("impact_follows_uses_back_to_depth_with_paths_endpoints_and_tests", impacts(store, &ns).await),
    ];
    for (case, result) in cases {
        match result {
            Ok(()) => report.passed.push(case.to_string()),
            Err(error) => report.failed.push(CaseFailure { case: case.to_string(), error }),
        }
    }
    if let Err(e) = stores.clear(&ns).await {
        report.failed.push(CaseFailure { case: "teardown".into(), error: e.to_string() });
    }
    report
}

/// The in-memory store as the suite's [`RepoStores`].
#[async_trait::async_trait(?Send)]
impl RepoStores for MemoryRepo {
    async fn load(&self, namespace: &str, repo: &IndexedRepo) -> Result<(), PortError> {
        MemoryRepo::load(self, namespace, repo);
        Ok(())
    }

    async fn clear(&self, namespace: &str) -> Result<(), PortError> {
        MemoryRepo::clear(self, namespace);
        Ok(())
    }

    fn store(&self) -> &dyn RepoStore {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::block_on;

    #[test]
    fn the_in_memory_store_passes_the_suite() {
        let report = block_on(run_suite(&MemoryRepo::new(), "suite"));
        assert!(report.failed.is_empty(), "{:#?}", report.failed);
        assert_eq!(report.passed.len(), CASES);
    }

    /// A store that loses the graph's edges must fail the cases that follow them.
    struct NoEdges(MemoryRepo);

    #[async_trait::async_trait(?Send)]
    impl RepoStores for NoEdges {
        async fn load(&self, namespace: &str, repo: &IndexedRepo) -> Result<(), PortError> {
            let mut repo = repo.clone();
            repo.graph.iter_mut().for_each(|f| f.edges.clear());
            self.0.load(namespace, &repo);
            Ok(())
        }

        async fn clear(&self, namespace: &str) -> Result<(), PortError> {
            self.0.clear(namespace);
            Ok(())
        }

        fn store(&self) -> &dyn RepoStore {
            &self.0
        }
    }

    #[test]
    fn a_store_that_loses_edges_fails_map_and_impact() {
        let report = block_on(run_suite(&NoEdges(MemoryRepo::new()), "careless"));
        let failed: Vec<&str> = report.failed.iter().map(|f| f.case.as_str()).collect();
        assert!(failed.iter().any(|c| c.starts_with("map_")), "{failed:?}");
        assert!(failed.iter().any(|c| c.starts_with("impact_")), "{failed:?}");
        assert!(report.passed.iter().any(|c| c.starts_with("list_files")));
    }
}
