//! The language registry: per language, everything the chunker, the code graph and the keyword
//! scanner read about it, in one entry. The chunker's [`grammar`](crate::chunk::code), the graph's
//! rules and [`keywords`](crate::keywords) look their language up here.
//!
//! Adding a language (template):
//! 1. grammar crate: add it to `crates/core/Cargo.toml` as an optional dependency with a
//!    `lang-<name>` feature (`["tree-sitter", "dep:<crate>"]`, and list the feature in
//!    `all-languages`); check it builds for wasm32 (`docs/tree-sitter-wasm.md`);
//! 2. [`Language`]: the variant (and its place in `Language::ALL`), its name and its file
//!    extensions in `lang/mod.rs`;
//! 3. chunking: a family file `chunk/code/lang/<family>.rs` (for a new family, a line in
//!    [`family_modules!`] below, behind its languages' features) with a `static <NAME>: Grammar`
//!    whose `classify` maps node kinds to a `Role`: comments / doc comments / sibling attributes
//!    → `Prefix`; definitions → `Def` via `named` (or a hand-built `Def` when the name is not in
//!    a `name` field); wrappers such as `export …` → the wrapped declaration's role; pure
//!    containers → `Transparent`; anything else → `Code`. Print a tree with `tree-sitter parse`
//!    or `Node::to_sexp` to find the kinds;
//! 4. graph rules: a family file `graph/lang/<family>.rs` (the same family name: the line in
//!    [`family_modules!`] declares both) with a `static <NAME>: GraphLang` (the graph reads the
//!    chunker's parse):
//!    - `classify`: definition nodes → a `Decl` (kind, name, the node holding the body, an owner
//!      type when declared outside it, base types); use `decl` for the common case;
//!    - `decl_kinds` / `import_kinds`: every kind `classify` / `imports` accepts (the walk
//!      dispatches on kind ids; debug builds check that nothing else is accepted);
//!    - `call_kinds`: the call / `new` expression kinds (the callee is found generically: the
//!      `function` / `constructor` / `type` field, else `name` + `object`/`receiver`/`scope`,
//!      else the first named child);
//!    - `imports`: turn an import statement into `Import`s (return `true` when it was one);
//!    - `package`: the package / namespace clause, if the language has one;
//!    - `types`: where type names are written (`TypeRefs`, `REFERENCES` edges);
//!    - `self_names`, `implicit_members` (whether a bare `foo()` inside a method may be a member),
//!      `wrappers` (nodes such as `export …` whose span a definition takes), `modules` (how
//!      import strings map to files, see `ModuleStyle`), `opaque` (kinds never worth walking
//!      into, such as literals: a speed-up only);
//! 5. keywords: the language's keywords in `keywords/lists/<lang>.txt` (one lowercase word a
//!    line, in byte order; a test checks);
//! 6. the entry: one arm in [`entry`] below naming the grammar and the graph rules (each behind
//!    the language's feature, with [`when!`]) and the keyword profile (the list, quotes, comment
//!    openers);
//! 7. fixtures: a snapshot fixture under `tests/fixtures/<lang>/` (named as [`Language`] names
//!    it) and a graph fixture project under `tests/fixtures/graph/<lang>/` with its
//!    `expected.json`.
use super::Language;
#[cfg(feature = "tree-sitter")]
use crate::chunk::code::grammar::Grammar;
#[cfg(feature = "tree-sitter")]
use crate::chunk::code::lang as chunk;
#[cfg(feature = "tree-sitter")]
use crate::graph::lang::{self as graph, GraphLang};

/// The family files, each behind the features of its languages: `chunk/code/lang/mod.rs` and
/// `graph/lang/mod.rs` both declare theirs with this (a new family is one line here and one file
/// in each folder).
#[cfg(feature = "tree-sitter")]
macro_rules! family_modules {
    () => {
        #[cfg(any(feature = "lang-c", feature = "lang-cpp"))]
        pub(crate) mod c_family;
        #[cfg(feature = "lang-csharp")]
        pub(crate) mod csharp;
        #[cfg(any(feature = "lang-typescript", feature = "lang-javascript"))]
        pub(crate) mod ecmascript;
        #[cfg(feature = "lang-go")]
        pub(crate) mod go;
        #[cfg(feature = "lang-java")]
        pub(crate) mod java;
        #[cfg(feature = "lang-kotlin")]
        pub(crate) mod kotlin;
        #[cfg(feature = "lang-php")]
        pub(crate) mod php;
        #[cfg(feature = "lang-python")]
        pub(crate) mod python;
        #[cfg(feature = "lang-ruby")]
        pub(crate) mod ruby;
        #[cfg(feature = "lang-rust")]
        pub(crate) mod rust;
    };
}
#[cfg(feature = "tree-sitter")]
pub(crate) use family_modules;

/// Everything the crate reads about one language.
pub(crate) struct Entry {
    /// The chunking grammar, when the language's feature is enabled.
    #[cfg(feature = "tree-sitter")]
    pub grammar: Option<&'static Grammar>,
    /// The code graph's rules, when the language's feature is enabled.
    #[cfg(feature = "tree-sitter")]
    pub graph: Option<&'static GraphLang>,
    pub keywords: Keywords,
}

/// How the language looks to the keyword scanner.
pub(crate) struct Keywords {
    /// The keyword list file: one lowercase word a line, in byte order (empty: none).
    pub list: &'static str,
    /// Bytes that open (and close) a string literal.
    pub quotes: &'static [u8],
    /// Line comment openers.
    pub line_comment: &'static [&'static str],
    /// Whether `/* … */` comments exist.
    pub block_comment: bool,
}

/// `Some(value)` when `feature` is enabled, else `None` (the value is not compiled then).
#[cfg(feature = "tree-sitter")]
macro_rules! when {
    ($feature:literal, $value:expr) => {{
        #[cfg(feature = $feature)]
        let value = Some($value);
        #[cfg(not(feature = $feature))]
        let value = None;
        value
    }};
}

/// One entry: `grammar` and `graph` only exist with tree-sitter.
macro_rules! entry {
    (
        grammar: $grammar:expr,
        graph: $graph:expr,
        keywords: ($list:expr, $quotes:expr, $line:expr, $block:expr $(,)?) $(,)?
    ) => {
        Entry {
            #[cfg(feature = "tree-sitter")]
            grammar: $grammar,
            #[cfg(feature = "tree-sitter")]
            graph: $graph,
            keywords: Keywords { list: $list, quotes: $quotes, line_comment: $line, block_comment: $block },
        }
    };
}

/// A language without a grammar: only its keyword profile.
macro_rules! text_only {
    ($list:expr, $quotes:expr, $line:expr, $block:expr $(,)?) => {
        entry!(grammar: None, graph: None, keywords: ($list, $quotes, $line, $block))
    };
}

/// The registry entry of `language`.
pub(crate) fn entry(language: Language) -> Entry {
    use Language as L;
    const JS: &str = include_str!("../keywords/lists/javascript.txt");
    match language {
        L::Typescript => entry! {
            grammar: when!("lang-typescript", &chunk::ecmascript::TYPESCRIPT),
            graph: when!("lang-typescript", &graph::ecmascript::ECMASCRIPT),
            keywords: (JS, b"'\"`", &["//"], true),
        },
        L::Tsx => entry! {
            grammar: when!("lang-typescript", &chunk::ecmascript::TSX),
            graph: when!("lang-typescript", &graph::ecmascript::ECMASCRIPT),
            keywords: (JS, b"'\"`", &["//"], true),
        },
        L::Javascript => entry! {
            grammar: when!("lang-javascript", &chunk::ecmascript::JAVASCRIPT),
            graph: when!("lang-javascript", &graph::ecmascript::ECMASCRIPT),
            keywords: (JS, b"'\"`", &["//"], true),
        },
        L::Python => entry! {
            grammar: when!("lang-python", &chunk::python::PYTHON),
            graph: when!("lang-python", &graph::python::PYTHON),
            keywords: (include_str!("../keywords/lists/python.txt"), b"'\"", &["#"], false),
        },
        L::Rust => entry! {
            grammar: when!("lang-rust", &chunk::rust::RUST),
            graph: when!("lang-rust", &graph::rust::RUST),
            keywords: (include_str!("../keywords/lists/rust.txt"), b"\"", &["//"], true),
        },
        L::Go => entry! {
            grammar: when!("lang-go", &chunk::go::GO),
            graph: when!("lang-go", &graph::go::GO),
            keywords: (include_str!("../keywords/lists/go.txt"), b"\"`", &["//"], true),
        },
        L::Java => entry! {
            grammar: when!("lang-java", &chunk::java::JAVA),
            graph: when!("lang-java", &graph::java::JAVA),
            keywords: (include_str!("../keywords/lists/java.txt"), b"\"", &["//"], true),
        },
        L::C => entry! {
            grammar: when!("lang-c", &chunk::c_family::C),
            graph: when!("lang-c", &graph::c_family::C_FAMILY),
            keywords: (include_str!("../keywords/lists/c.txt"), b"\"", &["//"], true),
        },
        L::Cpp => entry! {
            grammar: when!("lang-cpp", &chunk::c_family::CPP),
            graph: when!("lang-cpp", &graph::c_family::C_FAMILY),
            keywords: (include_str!("../keywords/lists/cpp.txt"), b"\"", &["//"], true),
        },
        L::Csharp => entry! {
            grammar: when!("lang-csharp", &chunk::csharp::CSHARP),
            graph: when!("lang-csharp", &graph::csharp::CSHARP),
            keywords: (include_str!("../keywords/lists/csharp.txt"), b"\"", &["//"], true),
        },
        L::Ruby => entry! {
            grammar: when!("lang-ruby", &chunk::ruby::RUBY),
            graph: when!("lang-ruby", &graph::ruby::RUBY),
            keywords: (include_str!("../keywords/lists/ruby.txt"), b"'\"", &["#"], false),
        },
        L::Php => entry! {
            grammar: when!("lang-php", &chunk::php::PHP),
            graph: when!("lang-php", &graph::php::PHP),
            keywords: (include_str!("../keywords/lists/php.txt"), b"'\"", &["//", "#"], true),
        },
        L::Kotlin => entry! {
            grammar: when!("lang-kotlin", &chunk::kotlin::KOTLIN),
            graph: when!("lang-kotlin", &graph::kotlin::KOTLIN),
            keywords: (include_str!("../keywords/lists/kotlin.txt"), b"\"", &["//"], true),
        },
        L::Swift => text_only!(include_str!("../keywords/lists/swift.txt"), b"\"", &["//"], true),
        L::Scala => text_only!(include_str!("../keywords/lists/scala.txt"), b"\"", &["//"], true),
        L::Shell => text_only!(include_str!("../keywords/lists/shell.txt"), b"'\"", &["#"], false),
        L::Sql => text_only!(include_str!("../keywords/lists/sql.txt"), b"'\"", &["--"], true),
        L::Json => text_only!("", b"\"", &[], false),
        L::Yaml | L::Toml => text_only!("", b"'\"", &["#"], false),
        L::Css | L::Scss => text_only!("", b"'\"", &[], true),
        L::Xml | L::Html => text_only!("", b"'\"", &[], false),
        L::Markdown | L::Text => text_only!("", b"\"`", &[], false),
    }
}
