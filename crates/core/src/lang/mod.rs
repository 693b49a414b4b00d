//! Language detection from the file path: the documented extension table, every grammar language
//! and common config / text formats. Unknown extensions are `text`. What the chunker, the code
//! graph and the keyword scanner read about each language is in `registry.rs`, with the template
//! for adding a language.
use serde::{Deserialize, Serialize};

pub(crate) mod registry;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Markdown,
    Typescript,
    Tsx,
    Javascript,
    Python,
    Rust,
    Go,
    Java,
    C,
    Cpp,
    Csharp,
    Ruby,
    Php,
    Kotlin,
    Swift,
    Scala,
    Shell,
    Json,
    Yaml,
    Toml,
    Xml,
    Html,
    Css,
    Scss,
    Sql,
    Text,
}

impl Language {
    pub const ALL: &'static [Language] = &[
        Language::Markdown,
        Language::Typescript,
        Language::Tsx,
        Language::Javascript,
        Language::Python,
        Language::Rust,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::Csharp,
        Language::Ruby,
        Language::Php,
        Language::Kotlin,
        Language::Swift,
        Language::Scala,
        Language::Shell,
        Language::Json,
        Language::Yaml,
        Language::Toml,
        Language::Xml,
        Language::Html,
        Language::Css,
        Language::Scss,
        Language::Sql,
        Language::Text,
    ];

    /// Detect from the path's extension (case-insensitive) or well-known file names.
    pub fn detect(path: &str) -> Language {
        let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let lower = file.to_ascii_lowercase();
        match lower.as_str() {
            "dockerfile" | "makefile" => return Language::Shell,
            "cargo.lock" => return Language::Toml,
            _ => {}
        }
        let ext = match lower.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => ext,
            _ => return Language::Text,
        };
        match ext {
            "md" | "mdx" | "markdown" => Language::Markdown,
            "ts" | "mts" | "cts" => Language::Typescript,
            "tsx" => Language::Tsx,
            "js" | "jsx" | "mjs" | "cjs" => Language::Javascript,
            "py" | "pyi" => Language::Python,
            "rs" => Language::Rust,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cpp" | "cc" | "cxx" | "c++" | "hpp" | "hh" | "hxx" => Language::Cpp,
            "cs" => Language::Csharp,
            "rb" | "rake" | "gemspec" => Language::Ruby,
            "php" => Language::Php,
            "kt" | "kts" => Language::Kotlin,
            "swift" => Language::Swift,
            "scala" | "sc" => Language::Scala,
            "sh" | "bash" | "zsh" => Language::Shell,
            "json" | "jsonc" | "json5" => Language::Json,
            "yaml" | "yml" => Language::Yaml,
            "toml" => Language::Toml,
            "xml" | "svg" | "xsd" | "plist" => Language::Xml,
            "html" | "htm" | "vue" | "svelte" => Language::Html,
            "css" => Language::Css,
            "scss" | "sass" | "less" => Language::Scss,
            "sql" => Language::Sql,
            _ => Language::Text,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Language::Markdown => "markdown",
            Language::Typescript => "typescript",
            Language::Tsx => "tsx",
            Language::Javascript => "javascript",
            Language::Python => "python",
            Language::Rust => "rust",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Csharp => "csharp",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::Kotlin => "kotlin",
            Language::Swift => "swift",
            Language::Scala => "scala",
            Language::Shell => "shell",
            Language::Json => "json",
            Language::Yaml => "yaml",
            Language::Toml => "toml",
            Language::Xml => "xml",
            Language::Html => "html",
            Language::Css => "css",
            Language::Scss => "scss",
            Language::Sql => "sql",
            Language::Text => "text",
        }
    }

    /// Parse a name or common alias (`ts`, `py`, `c#`, `golang`, ...), case-insensitive.
    pub fn from_name(name: &str) -> Option<Language> {
        let n = name.trim().to_ascii_lowercase();
        let alias = match n.as_str() {
            "ts" => Language::Typescript,
            "js" | "jsx" | "node" => Language::Javascript,
            "py" | "python3" => Language::Python,
            "rs" => Language::Rust,
            "golang" => Language::Go,
            "c++" | "cxx" => Language::Cpp,
            "c#" | "cs" | "c-sharp" => Language::Csharp,
            "rb" => Language::Ruby,
            "kt" => Language::Kotlin,
            "md" => Language::Markdown,
            "yml" => Language::Yaml,
            "sh" | "bash" => Language::Shell,
            "txt" | "plain" => Language::Text,
            other => return Language::ALL.iter().copied().find(|l| l.as_str() == other),
        };
        Some(alias)
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Language;

    #[test]
    fn detects_the_documented_extension_table() {
        for (path, lang) in [
            ("a.ts", Language::Typescript),
            ("a.tsx", Language::Tsx),
            ("a.js", Language::Javascript),
            ("a.jsx", Language::Javascript),
            ("README.md", Language::Markdown),
            ("x.mdx", Language::Markdown),
            ("a.py", Language::Python),
            ("A.java", Language::Java),
            ("a.cpp", Language::Cpp),
            ("a.c", Language::C),
            ("a.cs", Language::Csharp),
            ("a.php", Language::Php),
            ("a.rb", Language::Ruby),
            ("a.go", Language::Go),
            ("src/lib.rs", Language::Rust),
            ("a.json", Language::Json),
            ("a.yml", Language::Yaml),
            ("a.xml", Language::Xml),
            ("a.html", Language::Html),
            ("a.css", Language::Css),
            ("a.scss", Language::Scss),
            ("a.sql", Language::Sql),
            ("LICENSE", Language::Text),
            (".gitignore", Language::Text),
        ] {
            assert_eq!(Language::detect(path), lang, "{path}");
        }
    }

    #[test]
    fn names_round_trip() {
        for &l in Language::ALL {
            assert_eq!(Language::from_name(l.as_str()), Some(l));
        }
        assert_eq!(Language::from_name(" TS "), Some(Language::Typescript));
        assert_eq!(Language::from_name("klingon"), None);
    }
}
