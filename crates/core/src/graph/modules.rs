//! Which files an import names. Each file is indexed under keys derived from its path or package
//! clause; an import is turned into the keys it may mean, most specific first.
use super::outside::is_standard_import;
use super::types::{FileGraph, Import};
use crate::lang::Language;

/// How a language's import strings find files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModuleStyle {
    /// Dotted module paths from the file path; `.`-relative imports.
    Python,
    /// `./x` / `../x` relative to the importing file (extension-less, `index` files too).
    EcmaScript,
    /// Import paths name directories (a package = a directory).
    Go,
    /// `crate::a::b`, `super::`, `self::` from the file's module path under `src/`.
    Rust,
    /// `import a.b.C`: the package clause names the module.
    Package,
    /// Paths relative to the importing file (`require_relative`, `#include "x.h"`).
    Relative,
}

pub(crate) fn style(language: Language) -> ModuleStyle {
    match language {
        Language::Python => ModuleStyle::Python,
        Language::Typescript | Language::Tsx | Language::Javascript => ModuleStyle::EcmaScript,
        Language::Go => ModuleStyle::Go,
        Language::Rust => ModuleStyle::Rust,
        Language::Java | Language::Kotlin | Language::Csharp | Language::Php => ModuleStyle::Package,
        _ => ModuleStyle::Relative,
    }
}

/// Whether a bare `foo()` inside a method may call a member of the enclosing type.
pub(crate) fn implicit_members(language: Language) -> bool {
    matches!(language, Language::Java | Language::Kotlin | Language::Csharp | Language::Cpp | Language::Ruby)
}

fn strip_ext(path: &str) -> &str {
    let file_start = path.rfind('/').map_or(0, |i| i + 1);
    match path[file_start..].rfind('.') {
        Some(dot) if dot > 0 => &path[..file_start + dot],
        _ => path,
    }
}

fn dir_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// `a/./b/../c` → `a/c`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    parts.join("/")
}

/// The dotted module path a file's symbols live in, for languages where the path decides it
/// (`app/models/user.py` → `app.models.user`, `src/db/mod.rs` → `db`, `src/a.ts` → `src.a`).
pub(crate) fn module_path(path: &str, style: ModuleStyle) -> Option<String> {
    let stem = strip_ext(path);
    let dotted = match style {
        ModuleStyle::Python => stem.strip_suffix("/__init__").unwrap_or(stem).replace('/', "."),
        ModuleStyle::EcmaScript => stem.replace('/', "."),
        ModuleStyle::Rust => {
            let under_src = stem.rfind("src/").map_or(stem, |i| &stem[i + 4..]);
            let m = under_src.strip_suffix("/mod").unwrap_or(under_src);
            if matches!(m, "lib" | "main" | "mod") || stem.ends_with("/src") {
                return None;
            }
            m.replace('/', ".")
        }
        _ => return None,
    };
    (!dotted.is_empty() && dotted != "__init__").then_some(dotted)
}

/// Keys the file is found under.
pub(crate) fn keys(file: &FileGraph) -> Vec<String> {
    let path = file.path.as_str();
    match style(file.language) {
        ModuleStyle::Python => {
            let Some(m) = module_path(path, ModuleStyle::Python) else { return vec!["py:".into()] };
            let mut out = vec![format!("py:{m}")];
            let mut rest = m.as_str();
            while let Some((_, tail)) = rest.split_once('.') {
                out.push(format!("py:{tail}"));
                rest = tail;
            }
            out
        }
        ModuleStyle::EcmaScript => {
            let stem = strip_ext(path);
            let mut out = vec![format!("es:{stem}")];
            if let Some(dir) = stem.strip_suffix("/index") {
                out.push(format!("es:{dir}"));
            }
            out
        }
        ModuleStyle::Go => {
            let dir = dir_of(path);
            let mut out = vec![format!("go:{dir}")];
            let mut rest = dir;
            while let Some((_, tail)) = rest.split_once('/') {
                out.push(format!("go:{tail}"));
                rest = tail;
            }
            out
        }
        ModuleStyle::Rust => vec![format!("rs:{}", module_path(path, ModuleStyle::Rust).unwrap_or_default())],
        ModuleStyle::Package => file.package.iter().map(|p| format!("pkg:{p}")).collect(),
        ModuleStyle::Relative => {
            let stem = strip_ext(path);
            let base = stem.rsplit('/').next().unwrap_or(stem);
            vec![format!("file:{stem}"), format!("base:{base}")]
        }
    }
}

/// The key of the package / directory a file shares with its siblings (Go directories, Java /
/// Kotlin / C# / PHP packages), whose top-level names are visible without imports.
pub(crate) fn package_key(file: &FileGraph) -> Option<String> {
    match style(file.language) {
        ModuleStyle::Go => Some(format!("go:{}", dir_of(&file.path))),
        ModuleStyle::Package => file.package.as_ref().map(|p| format!("pkg:{p}")),
        _ => None,
    }
}

/// Where an import may point: a file key, and the symbol inside it (`None`: the import binds the
/// module itself).
pub(crate) struct Target {
    pub key: String,
    pub symbol: Option<String>,
}

/// The keys `import` (made in `file`) may mean, most specific first (none for a standard-library
/// package).
pub(crate) fn targets(import: &Import, file: &FileGraph) -> Vec<Target> {
    let module = import.module.as_str();
    let sym = import.name.clone();
    let both = |prefix: &str, m: String, sep: &str| -> Vec<Target> {
        let mut out = Vec::new();
        if let Some(s) = &sym {
            let joined = if m.is_empty() { s.clone() } else { format!("{m}{sep}{s}") };
            out.push(Target { key: format!("{prefix}{joined}"), symbol: None });
        }
        out.push(Target { key: format!("{prefix}{m}"), symbol: sym.clone() });
        out
    };
    match style(file.language) {
        ModuleStyle::Python => {
            let dots = module.chars().take_while(|c| *c == '.').count();
            let full = if dots > 0 {
                let own = module_path(&file.path, ModuleStyle::Python).unwrap_or_default();
                let mut parts: Vec<&str> = own.split('.').filter(|p| !p.is_empty()).collect();
                if !file.path.ends_with("__init__.py") {
                    parts.pop();
                }
                for _ in 1..dots {
                    parts.pop();
                }
                let rest = &module[dots..];
                if !rest.is_empty() {
                    parts.push(rest);
                }
                parts.join(".")
            } else {
                module.to_string()
            };
            both("py:", full, ".")
        }
        ModuleStyle::EcmaScript => {
            let resolved = if module.starts_with('.') {
                normalize(&format!("{}/{}", dir_of(&file.path), module))
            } else {
                module.to_string()
            };
            let stem = strip_ext(&resolved);
            let stem = if [".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx"].iter().any(|e| resolved.ends_with(e))
            {
                stem.to_string()
            } else {
                resolved.clone()
            };
            vec![Target { key: format!("es:{stem}"), symbol: sym }]
        }
        // The standard library's packages are never the project's directories, whatever their
        // names (`errors` beside a project's `internal/errors`).
        ModuleStyle::Go if is_standard_import(file.language, module) => Vec::new(),
        ModuleStyle::Go => {
            let mut out = vec![Target { key: format!("go:{module}"), symbol: None }];
            let mut rest = module;
            while let Some((_, tail)) = rest.split_once('/') {
                out.push(Target { key: format!("go:{tail}"), symbol: None });
                rest = tail;
            }
            out
        }
        ModuleStyle::Rust => {
            let own = module_path(&file.path, ModuleStyle::Rust).unwrap_or_default();
            let own_parts: Vec<&str> = own.split('.').filter(|p| !p.is_empty()).collect();
            let mut parts: Vec<String> = Vec::new();
            for (i, seg) in module.split("::").filter(|s| !s.is_empty()).enumerate() {
                match (i, seg) {
                    (0, "crate") => {}
                    (0, "self") => parts.extend(own_parts.iter().map(|s| s.to_string())),
                    (_, "super") => {
                        if i == 0 {
                            parts.extend(own_parts.iter().map(|s| s.to_string()));
                        }
                        parts.pop();
                    }
                    _ => parts.push(seg.to_string()),
                }
            }
            both("rs:", parts.join("."), ".")
        }
        ModuleStyle::Package => {
            let m = module.replace('\\', ".");
            if import.wildcard {
                vec![Target { key: format!("pkg:{m}"), symbol: None }]
            } else {
                let mut out = vec![Target { key: format!("pkg:{m}"), symbol: sym.clone() }];
                if let Some(s) = &sym {
                    out.push(Target { key: format!("pkg:{m}.{s}"), symbol: None });
                }
                out
            }
        }
        ModuleStyle::Relative => {
            let joined = normalize(&format!("{}/{}", dir_of(&file.path), module));
            let stem = strip_ext(&joined).to_string();
            let base = strip_ext(module).rsplit('/').next().unwrap_or(module).to_string();
            vec![
                Target { key: format!("file:{stem}"), symbol: None },
                Target { key: format!("base:{base}"), symbol: None },
            ]
        }
    }
}
