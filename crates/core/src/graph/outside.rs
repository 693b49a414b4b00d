//! What a call's qualifier names when the project does not define it: a library type
//! (`Vec::new`, `String.valueOf`), a built-in global (`console.log`, `str.join`) or a standard
//! package (Go `errors.New`). Such a call is a library call: resolution never guesses a project
//! method for it by its name alone.
use crate::lang::Language;

/// Whether a call's qualifier, with `head` its first part and `written` the callee as written
/// (`Vec::new`, `$repo.save`), names a type, module or namespace rather than a value. Only the
/// spelling decides: Rust and C++ reach types and modules through `::` paths (values through `.`
/// and `->`), PHP variables start with `$` (anything else is a class: `Carbon::now()`), and in
/// Java, Kotlin, C#, Ruby and Python a capitalised name is a type or a constant (one letter is a
/// type parameter or a local: `X.cdf()`). Go qualifiers are imported packages (found through the
/// imports) or values; JavaScript names types and values alike, so only its [`is_global`] names
/// count there.
pub(crate) fn names_type(language: Language, written: &str, head: &str) -> bool {
    match language {
        Language::Rust | Language::Cpp => written.contains("::"),
        Language::Php => !written.starts_with('$'),
        Language::Java | Language::Kotlin | Language::Csharp | Language::Ruby | Language::Python => {
            head.starts_with(|c: char| c.is_uppercase()) && head.chars().nth(1).is_some()
        }
        _ => false,
    }
}

/// Whether `head` is a global the language or its runtime defines (`console`, `Math`, `JSON`,
/// `str`, Rust's `std`): a call through it is a library call unless the project defines that name
/// itself.
pub(crate) fn is_global(language: Language, head: &str) -> bool {
    match language {
        Language::Rust => matches!(head, "std" | "core" | "alloc"),
        Language::Typescript | Language::Tsx | Language::Javascript => ECMASCRIPT_GLOBALS.contains(&head),
        Language::Python => PYTHON_BUILTINS.contains(&head),
        _ => false,
    }
}

/// Whether `module`, imported as written in `language`, is part of the standard library, whose
/// packages are never the project's files (Go: `errors`, `net/http`, `encoding/json`).
pub(crate) fn is_standard_import(language: Language, module: &str) -> bool {
    match language {
        // Module paths outside the standard library start with a domain (`github.com/…`) or the
        // module's own name; the standard library's start with one of these.
        Language::Go => {
            let root = module.split('/').next().unwrap_or(module);
            GO_STANDARD_ROOTS.contains(&root)
        }
        _ => false,
    }
}

/// The standard built-in objects of ECMAScript and the globals of browsers and Node.
const ECMASCRIPT_GLOBALS: &[&str] = &[
    "Array",
    "ArrayBuffer",
    "Atomics",
    "BigInt",
    "Boolean",
    "Buffer",
    "DataView",
    "Date",
    "Error",
    "Intl",
    "JSON",
    "Map",
    "Math",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "Reflect",
    "RegExp",
    "Set",
    "String",
    "Symbol",
    "URL",
    "URLSearchParams",
    "WeakMap",
    "WeakSet",
    "console",
    "crypto",
    "document",
    "globalThis",
    "history",
    "localStorage",
    "location",
    "navigator",
    "performance",
    "process",
    "sessionStorage",
    "window",
];

/// Python's built-in types, spelled in lower case (`str.join`, `dict.fromkeys`).
const PYTHON_BUILTINS: &[&str] = &[
    "bool",
    "bytearray",
    "bytes",
    "complex",
    "dict",
    "float",
    "frozenset",
    "int",
    "list",
    "memoryview",
    "object",
    "range",
    "set",
    "slice",
    "str",
    "tuple",
    "type",
];

/// The first element of every import path of Go's standard library.
const GO_STANDARD_ROOTS: &[&str] = &[
    "archive",
    "bufio",
    "bytes",
    "cmp",
    "compress",
    "container",
    "context",
    "crypto",
    "database",
    "debug",
    "embed",
    "encoding",
    "errors",
    "expvar",
    "flag",
    "fmt",
    "go",
    "hash",
    "html",
    "image",
    "index",
    "io",
    "iter",
    "log",
    "maps",
    "math",
    "mime",
    "net",
    "os",
    "path",
    "plugin",
    "reflect",
    "regexp",
    "runtime",
    "slices",
    "sort",
    "strconv",
    "strings",
    "structs",
    "sync",
    "syscall",
    "testing",
    "text",
    "time",
    "unicode",
    "unique",
    "unsafe",
    "weak",
];
