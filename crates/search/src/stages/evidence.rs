//! What a long question points at. An issue report or a pasted error is many times longer than a
//! search question, and its strongest evidence is not in its first words: the files it names (a
//! path, a traceback frame, a link to a line), the functions those frames run, the names it writes
//! as code. They are read here from the whole question as it was sent — lines intact, before the
//! sanitizer collapses and cuts it — so that a search can use them however long the question is.
//!
//! A question is *long* when it holds more keyword terms than one keyword search takes
//! ([`crate::query::MAX_TERMS`]): that is where its first words stop standing for it. Only long
//! questions are read differently ([`Evidence::keyword_text`], [`Evidence::lead`]); a short one
//! is searched exactly as it is written.
use std::sync::LazyLock;

use edgerag_core::Language;
use regex::Regex;
use serde::Serialize;

#[cfg(test)]
use crate::query::keyword_terms;
use crate::query::{keyword_terms_up_to, TermOptions, MAX_TERMS};

/// Most files a question's evidence keeps (first named first).
pub const MAX_FILES: usize = 16;
/// Most code names it keeps.
pub const MAX_NAMES: usize = 48;
/// Most characters of a question read for evidence (a long issue with its traceback fits).
pub const MAX_EVIDENCE_CHARS: usize = 64 * 1024;
/// Path segments a named file is matched by: its file name and up to two folders above it.
const SUFFIX_SEGMENTS: usize = 3;

/// What a question names (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// More keyword terms than one keyword search takes.
    pub long: bool,
    /// The question's first line (an issue's title), whitespace collapsed.
    pub lead: String,
    /// Files the question names, as repository path suffixes (`seaborn/_core/scales.py` from
    /// `…/site-packages/seaborn/_core/scales.py:351`), first named first.
    pub files: Vec<String>,
    /// Names the question writes as code: the functions of its traceback frames, the names it
    /// quotes in backticks, identifiers in code shape (`_setup`, `ContinuousBase`).
    pub names: Vec<String>,
}

static PATH: LazyLock<Regex> = LazyLock::new(|| {
    // A path or a file name with an extension: folders of word characters, dots, dashes, `~`;
    // `/` or `\` between them; an optional drive letter.
    Regex::new(r"(?:[A-Za-z]:)?[\w.~@+\-/\\]*[\w\-]\.[A-Za-z][A-Za-z0-9+]{0,9}\b").expect("valid regex")
});
/// Right after a frame's path: `", line 3, in name`, `:3: in name`, `:3, in Class.name`.
static FRAME_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^"?,?\s*(?:line\s+\d+|:\d+(?::\d+)?)[:,]?\s+in\s+([A-Za-z_][\w.]*)"#).expect("valid regex")
});
static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`\n]{1,80})`").expect("valid regex"));
static WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z_][\w]*(?:[.:#]+[A-Za-z_]\w*)*").expect("valid regex"));

impl Evidence {
    /// Read a question (as sent, before any cut).
    pub fn read(question: &str, options: TermOptions) -> Evidence {
        let text: String = question.chars().take(MAX_EVIDENCE_CHARS).collect();
        let lead = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        let long = term_count(&text, options) > MAX_TERMS;
        let mut files: Vec<String> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let push_name = |name: &str, names: &mut Vec<String>| {
            if names.len() < MAX_NAMES && name.chars().count() > 1 && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        };
        for found in PATH.find_iter(&text) {
            let Some(file) = repository_suffix(found.as_str(), &text[..found.start()]) else { continue };
            if files.len() < MAX_FILES && !files.contains(&file) {
                files.push(file);
            }
            // A traceback frame: `File "p.py", line 3, in name`, `p.py:3: in name`,
            // `p.py:3, in Class.name(…)`.
            if let Some(m) = FRAME_NAME.captures(&text[found.end()..]) {
                push_name(m.get(1).map_or("", |g| g.as_str()).trim_end_matches('.'), &mut names);
            }
        }
        for m in BACKTICKED.captures_iter(&text) {
            let inner = m.get(1).map_or("", |g| g.as_str()).trim();
            let inner = inner.trim_end_matches("()");
            if is_name(inner) {
                push_name(inner, &mut names);
            }
        }
        for m in WORD.find_iter(&text) {
            let word = m.as_str().trim_end_matches(['.', ':', '#']);
            // Part of a path (`_core` of `seaborn/_core/scales.py`) or a file name: the files
            // above already hold it.
            let in_path =
                text[..m.start()].ends_with(['/', '\\']) || Language::detect(word) != Language::Text;
            if crate::expand::code_shaped(word) && !in_path {
                push_name(word, &mut names);
            }
        }
        Evidence { long, lead, files, names }
    }

    /// The text a long question's keyword terms are taken from, in priority order: its first line,
    /// then the names it writes as code, then the names of the files it points at, then the rest of
    /// it (`query`, as sanitized). The terms keep first occurrences up to
    /// [`MAX_TERMS`], so the evidence comes before words that only fill out the report.
    pub fn keyword_text(&self, query: &str) -> String {
        let stems = self.files.iter().filter_map(|f| {
            let file = f.rsplit('/').next()?;
            Some(file.rsplit_once('.').map_or(file, |(stem, _)| stem))
        });
        let mut parts: Vec<&str> = vec![self.lead.as_str()];
        parts.extend(self.names.iter().map(String::as_str));
        parts.extend(stems);
        parts.push(query);
        parts.join(" ")
    }

    /// Path globs (read as [`crate::filters`] reads them) that match exactly the files named.
    pub fn file_globs(&self) -> Vec<String> {
        self.files.iter().flat_map(|f| [f.clone(), format!("*/{f}")]).collect()
    }

    /// Whether `path` (repository-relative) is one of the files named.
    pub fn names_file(&self, path: &str) -> bool {
        self.files
            .iter()
            .any(|f| path == f || path.strip_suffix(f.as_str()).is_some_and(|p| p.ends_with('/')))
    }
}

/// How many distinct keyword terms `text` has, counted up to one past [`MAX_TERMS`].
fn term_count(text: &str, options: TermOptions) -> usize {
    keyword_terms_up_to(text, options, MAX_TERMS + 1).len()
}

/// A single name: letters, digits, `_`, optionally qualified by `.` (`Axes.set_xscale`).
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|p| {
            p.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
}

/// The repository path suffix a path as written in a question stands for, or `None` when it is
/// not a source file's path (a URL to elsewhere, a version number, an attribute access).
/// `before` is the question's text up to the path (a URL's scheme ends it).
fn repository_suffix(written: &str, before: &str) -> Option<String> {
    let path = written.replace('\\', "/");
    if Language::detect(&path) == Language::Text {
        return None;
    }
    // A URL: only a link to a file of a repository (`…/blob/<ref>/path`) names one.
    let url_start = before
        .rfind(|c: char| c.is_whitespace() || matches!(c, '(' | '<' | '"' | '\'' | '['))
        .map_or(0, |i| i + 1);
    let whole = format!("{}{path}", &before[url_start..]);
    let mut segments: Vec<&str> = if whole.contains("://") || whole.starts_with("www.") {
        let (_, after) = whole.split_once("/blob/").or_else(|| whole.split_once("/tree/"))?;
        // Skip the ref.
        let rest = after.split_once('/')?.1.to_string();
        return suffix(&rest.split('/').filter(|s| !s.is_empty()).collect::<Vec<_>>());
    } else {
        path.split('/').filter(|s| !s.is_empty() && *s != ".").collect()
    };
    // An installed package's files: the repository path starts after site-packages.
    if let Some(at) = segments.iter().rposition(|s| *s == "site-packages" || *s == "dist-packages") {
        segments.drain(..=at);
    }
    // A diff's `a/` or `b/`.
    if segments.len() > 1 && matches!(segments[0], "a" | "b") {
        segments.remove(0);
    }
    // A file name alone that is an attribute access (`self.py`) is not told apart here: a stem
    // must not itself be dotted.
    let file = *segments.last()?;
    if segments.len() == 1 && file.matches('.').count() > 1 {
        return None;
    }
    if segments.iter().any(|s| s.starts_with('<') || *s == "..") {
        return None;
    }
    suffix(&segments)
}

fn suffix(segments: &[&str]) -> Option<String> {
    let n = segments.len();
    if n == 0 {
        return None;
    }
    Some(segments[n.saturating_sub(SUFFIX_SEGMENTS)..].join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(q: &str) -> Evidence {
        Evidence::read(q, TermOptions::default())
    }

    #[test]
    fn a_python_traceback_names_its_frames_files_and_functions() {
        let e = read(
            "Color mapping fails with boolean data\n\nTraceback (most recent call last):\n  \
             File \"/home/me/venv/lib/python3.10/site-packages/seaborn/_core/plot.py\", line 1252, in _setup_scales\n    \
             self._scales[var] = scale._setup(var_df[var], prop)\n  \
             File \"/home/me/venv/lib/python3.10/site-packages/seaborn/_core/scales.py\", line 351, in _setup\n",
        );
        assert_eq!(e.files, ["seaborn/_core/plot.py", "seaborn/_core/scales.py"]);
        assert_eq!(&e.names[..2], ["_setup_scales", "_setup"]);
        assert_eq!(e.lead, "Color mapping fails with boolean data");
    }

    #[test]
    fn ipython_and_pytest_frames_and_line_suffixes() {
        let e =
            read("File ~/code/seaborn/seaborn/_core/scales.py:351, in ContinuousBase._setup(self, data)\n");
        assert_eq!(e.files, ["seaborn/_core/scales.py"]);
        assert_eq!(e.names[0], "ContinuousBase._setup");
        let e = read("src/_pytest/python.py:1234: in pytest_pycollect_makeitem\n");
        assert_eq!(e.files, ["src/_pytest/python.py"]);
        assert_eq!(e.names[0], "pytest_pycollect_makeitem");
        let e =
            read("in a/sphinx/ext/autodoc/__init__.py in the loader, and lib/matplotlib/axes/_base.py#L120");
        assert!(e.names.is_empty(), "prose is not a frame: {:?}", e.names);
        assert_eq!(e.files, ["ext/autodoc/__init__.py", "matplotlib/axes/_base.py"]);
    }

    #[test]
    fn links_to_a_repository_file_name_it_and_other_urls_do_not() {
        let e = read("https://github.com/psf/requests/blob/main/requests/sessions.py#L120 and https://docs.python.org/3/library/os.html");
        assert_eq!(e.files, ["requests/sessions.py"]);
    }

    #[test]
    fn words_with_dots_are_not_files() {
        let e = read("e.g. numpy.ndarray, self.foo, version 1.2.3, os.path.join and Session.request");
        assert_eq!(e.files, Vec::<String>::new());
        let e = read("the `to_csv` method of `pd.DataFrame` and `__init__`; <stdin> line 1");
        assert_eq!(&e.names[..3], ["to_csv", "pd.DataFrame", "__init__"]);
    }

    #[test]
    fn windows_paths_and_bare_file_names() {
        let e = read(r"C:\Users\me\proj\src\app\models.py raised; also utils.py");
        assert_eq!(e.files, ["src/app/models.py", "utils.py"]);
    }

    #[test]
    fn only_questions_with_more_terms_than_a_search_takes_are_long() {
        assert!(!read("where do we retry with backoff?").long);
        let long: String = (0..60).map(|i| format!("word{i} ")).collect();
        assert!(read(&long).long);
        // Repeated words are one term each.
        assert!(!read(&"retry backoff ".repeat(100)).long);
    }

    #[test]
    fn a_long_question_is_searched_by_its_title_and_evidence_first() {
        let body: String = (0..60).map(|i| format!("filler{i} ")).collect();
        let q =
            format!("Scale setup crashes\n{body}\nFile \"x/seaborn/_core/scales.py\", line 3, in _setup\n");
        let e = read(&q);
        assert!(e.long);
        let terms = keyword_terms(&e.keyword_text(&q), TermOptions::default());
        let texts: Vec<&str> = terms.iter().map(|t| t.text.as_str()).collect();
        assert!(
            texts.starts_with(&["scale", "setup", "crashes"]) || texts[0].starts_with("scal"),
            "{texts:?}"
        );
        assert!(texts.contains(&"_setup") || texts.contains(&"setup"), "{texts:?}");
        assert!(texts.contains(&"scal"), "{texts:?}");
        assert!(!texts.contains(&"py"), "{texts:?}");
        assert!(!texts.contains(&"filler59"), "{texts:?}");
    }

    #[test]
    fn named_files_match_by_whole_segments() {
        let e = read("seaborn/_core/scales.py failed");
        assert!(e.names_file("seaborn/_core/scales.py"));
        assert!(e.names_file("src/seaborn/_core/scales.py"));
        assert!(!e.names_file("myseaborn/_core/scales.py"));
        assert_eq!(e.file_globs(), ["seaborn/_core/scales.py", "*/seaborn/_core/scales.py"]);
    }
}
