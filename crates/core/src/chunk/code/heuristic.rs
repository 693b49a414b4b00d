//! Code chunking without a grammar: declaration patterns plus brace counting (or
//! indentation for Python / Ruby), then lines. Used for code languages whose tree-sitter feature
//! is disabled and for languages with no grammar here (Swift, Scala). Compiled without the
//! `tree-sitter` feature too.
//!
//! A declaration is a line that, after modifiers (`export`, `pub`, `async`, `public static`, …),
//! starts with a declaration keyword and a name (`function`, `class`, `interface`,
//! `enum`, `type`, `fn`, `struct`, `trait`, `def`, …), or — in C-like languages — looks
//! like a function signature (`int main(void) {`). It ends where its braces balance (or at a `;`
//! before any brace), or for Python / Ruby where the indentation returns. Comments and
//! attributes directly above go with it (up to `docstring_lines`, or the whole block when it
//! fits). A declaration too big for one chunk is split at the declarations inside it (with
//! `parent_symbol`), and whatever is left by lines.
use crate::chunk::lines::split_span;
use crate::chunk::{ChunkConfig, ChunkMetadata, ChunkType, Piece};
use crate::lang::Language;

/// How a language delimits blocks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Braces,
    /// Python: a block ends where the indentation returns.
    Indent,
    /// Ruby: like `Indent`, and the `end` at the declaration's indentation is included.
    IndentEnd,
}

fn style(language: Language) -> Option<Style> {
    match language {
        Language::Typescript
        | Language::Tsx
        | Language::Javascript
        | Language::Java
        | Language::C
        | Language::Cpp
        | Language::Csharp
        | Language::Go
        | Language::Rust
        | Language::Kotlin
        | Language::Swift
        | Language::Scala
        | Language::Php => Some(Style::Braces),
        Language::Python => Some(Style::Indent),
        Language::Ruby => Some(Style::IndentEnd),
        _ => None,
    }
}

/// Pieces for `text`, or `None` when `language` is not a code language this chunker knows.
pub(crate) fn chunk(text: &str, language: Language, config: &ChunkConfig) -> Option<Vec<Piece>> {
    let style = style(language)?;
    let mut starts = vec![0];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1).filter(|&i| i < text.len()));
    let mut out = Vec::new();
    if !text.is_empty() {
        let lines = Lines { starts: &starts, text_len: text.len() };
        Heuristic { text, lines, style, config }.region(0, starts.len() - 1, None, &mut out);
    }
    Some(out)
}

/// Pieces for rows `first..=last` of `text` (rows start at `starts`), typed as members of
/// `scope` when given: the syntax-aware chunker uses this for regions that did not parse.
/// `None` when `language` has no heuristics.
#[cfg(feature = "tree-sitter")]
pub(crate) fn chunk_rows(
    text: &str,
    starts: &[usize],
    language: Language,
    (first, last): (usize, usize),
    scope: Option<Scope>,
    config: &ChunkConfig,
) -> Option<Vec<Piece>> {
    let style = style(language)?;
    let lines = Lines { starts, text_len: text.len() };
    let mut out = Vec::new();
    if first <= last && last < starts.len() {
        Heuristic { text, lines, style, config }.region(first, last, scope.as_ref(), &mut out);
    }
    Some(out)
}

#[derive(Clone, Copy)]
struct Lines<'a> {
    starts: &'a [usize],
    text_len: usize,
}

impl Lines<'_> {
    fn start(&self, row: usize) -> usize {
        self.starts[row]
    }

    fn end(&self, row: usize) -> usize {
        self.starts.get(row + 1).copied().unwrap_or(self.text_len)
    }
}

/// A declaration found by the scanner, rows inclusive (`first` includes attached docs).
struct Decl {
    first: usize,
    decl_row: usize,
    last: usize,
    chunk_type: ChunkType,
    name: String,
}

/// The enclosing definition of a region.
pub(crate) struct Scope {
    pub chunk_type: ChunkType,
    pub name: String,
    pub parent: Option<String>,
}

struct Heuristic<'a> {
    text: &'a str,
    lines: Lines<'a>,
    style: Style,
    config: &'a ChunkConfig,
}

impl Heuristic<'_> {
    fn line(&self, row: usize) -> &str {
        let s = &self.text[self.lines.start(row)..self.lines.end(row)];
        s.strip_suffix('\n').map(|s| s.strip_suffix('\r').unwrap_or(s)).unwrap_or(s)
    }

    fn blank(&self, row: usize) -> bool {
        self.line(row).trim().is_empty()
    }

    /// Byte span of rows `first..=last`, trimmed of trailing whitespace; `None` when blank.
    fn span(&self, mut first: usize, last: usize) -> Option<(usize, usize)> {
        while first <= last && self.blank(first) {
            first += 1;
        }
        if first > last {
            return None;
        }
        let start = self.lines.start(first);
        let end = start + self.text[start..self.lines.end(last)].trim_end().len();
        Some((start, end))
    }

    fn fits(&self, first: usize, last: usize) -> bool {
        match self.span(first, last) {
            None => true,
            Some((start, end)) => {
                let rows = self.text[start..end].bytes().filter(|&b| b == b'\n').count() + 1;
                rows <= self.config.line_limit()
                    && self.config.count_tokens(&self.text[start..end]) <= self.config.token_limit()
            }
        }
    }

    /// Chunks rows `first..=last`: the declarations in it, and the code between them.
    fn region(&self, first: usize, last: usize, scope: Option<&Scope>, out: &mut Vec<Piece>) {
        let decls = self.scan(first, last);
        let mut group: Option<(usize, usize, usize)> = None; // first, last, definitions
        let mut pending: Option<&Decl> = None;
        let mut row = first;
        for decl in &decls {
            if row < decl.first {
                self.add_code(&mut group, &mut pending, row, decl.first - 1, scope, out);
            }
            let one_line = decl.decl_row == decl.last;
            if one_line && self.fits(decl.first, decl.last) {
                // One-line declarations merge with their neighbours like code.
                let merged = match group {
                    Some((g_first, _, defs)) if self.fits(g_first, decl.last) => {
                        group = Some((g_first, decl.last, defs + 1));
                        true
                    }
                    _ => false,
                };
                if !merged {
                    self.flush(group.take(), pending.take(), scope, out);
                    group = Some((decl.first, decl.last, 1));
                }
                if pending.is_none() {
                    pending = Some(decl);
                }
            } else {
                self.flush(group.take(), pending.take(), scope, out);
                self.declaration(decl, scope, out);
            }
            row = decl.last + 1;
        }
        if row <= last {
            self.add_code(&mut group, &mut pending, row, last, scope, out);
        }
        self.flush(group, pending, scope, out);
    }

    fn add_code(
        &self,
        group: &mut Option<(usize, usize, usize)>,
        pending: &mut Option<&Decl>,
        first: usize,
        last: usize,
        scope: Option<&Scope>,
        out: &mut Vec<Piece>,
    ) {
        if self.span(first, last).is_none() {
            return;
        }
        if let Some((g_first, _, defs)) = *group {
            if self.fits(g_first, last) {
                *group = Some((g_first, last, defs));
                return;
            }
        }
        self.flush(group.take(), pending.take(), scope, out);
        *group = Some((first, last, 0));
    }

    fn flush(
        &self,
        group: Option<(usize, usize, usize)>,
        decl: Option<&Decl>,
        scope: Option<&Scope>,
        out: &mut Vec<Piece>,
    ) {
        let Some((first, last, defs)) = group else { return };
        let Some((start, end)) = self.span(first, last) else { return };
        let (chunk_type, metadata) = match (defs, decl) {
            (1, Some(d)) => (self.typed(d.chunk_type, scope), self.meta(Some(d.name.clone()), scope)),
            (0, _) => scope_typing(scope),
            _ => (
                ChunkType::CodeBlock,
                ChunkMetadata { parent_symbol: scope.map(|s| s.name.clone()), ..ChunkMetadata::default() },
            ),
        };
        out.extend(split_span(self.text, start, end, chunk_type, &metadata, self.config));
    }

    fn typed(&self, chunk_type: ChunkType, scope: Option<&Scope>) -> ChunkType {
        match (chunk_type, scope.map(|s| s.chunk_type)) {
            (
                ChunkType::CodeFunction,
                Some(
                    ChunkType::CodeClass
                    | ChunkType::CodeStruct
                    | ChunkType::CodeInterface
                    | ChunkType::CodeTrait
                    | ChunkType::CodeImpl
                    | ChunkType::CodeEnum,
                ),
            ) => ChunkType::CodeMethod,
            (t, _) => t,
        }
    }

    fn meta(&self, name: Option<String>, scope: Option<&Scope>) -> ChunkMetadata {
        ChunkMetadata {
            symbol_name: name,
            parent_symbol: scope.map(|s| s.name.clone()),
            ..ChunkMetadata::default()
        }
    }

    /// One multi-line declaration: whole when it fits, else split at the declarations inside.
    fn declaration(&self, decl: &Decl, scope: Option<&Scope>, out: &mut Vec<Piece>) {
        let chunk_type = self.typed(decl.chunk_type, scope);
        if self.fits(decl.first, decl.last) && chunk_type != ChunkType::CodeModule {
            if let Some((start, end)) = self.span(decl.first, decl.last) {
                let metadata = self.meta(Some(decl.name.clone()), scope);
                out.push(Piece { start_byte: start, end_byte: end, chunk_type, metadata });
            }
            return;
        }
        let inner = Scope { chunk_type, name: decl.name.clone(), parent: scope.map(|s| s.name.clone()) };
        // Header rows (docs + signature) and the closing row are the declaration's own code.
        let body_first = decl.decl_row + 1;
        if body_first > decl.last {
            self.flush(Some((decl.first, decl.last, 0)), None, Some(&inner), out);
            return;
        }
        let mut pieces = Vec::new();
        self.region(body_first, decl.last, Some(&inner), &mut pieces);
        // The header goes in front of the first inner piece when that is plain code that fits.
        let header = (decl.first, decl.decl_row);
        match pieces.first_mut() {
            Some(p)
                if p.chunk_type == chunk_type
                    && p.metadata.symbol_name.as_deref() == Some(decl.name.as_str()) =>
            {
                let start = self.lines.start(header.0);
                if p.metadata.overlap_lines == 0 && self.fits_bytes(start, p.end_byte) {
                    p.start_byte = start;
                } else {
                    self.flush(Some((header.0, header.1, 0)), None, Some(&inner), out);
                }
            }
            _ => self.flush(Some((header.0, header.1, 0)), None, Some(&inner), out),
        }
        out.extend(pieces);
    }

    fn fits_bytes(&self, start: usize, end: usize) -> bool {
        let s = &self.text[start..end];
        s.bytes().filter(|&b| b == b'\n').count() < self.config.line_limit()
            && self.config.count_tokens(s) <= self.config.token_limit()
    }

    // ---- scanning ---------------------------------------------------------------------------

    /// Top-level declarations in rows `first..=last`, in order, not overlapping.
    fn scan(&self, first: usize, last: usize) -> Vec<Decl> {
        let mut decls: Vec<Decl> = Vec::new();
        let mut row = first;
        while row <= last {
            let line = self.line(row);
            let Some((chunk_type, name)) = declaration(line, self.style) else {
                row += 1;
                continue;
            };
            let end = match self.style {
                Style::Braces => self.brace_end(row, last),
                Style::Indent | Style::IndentEnd => self.indent_end(row, last),
            };
            let floor = decls.last().map_or(first, |d| d.last + 1);
            let doc_first = self.docs_above(row, floor, end);
            decls.push(Decl { first: doc_first, decl_row: row, last: end, chunk_type, name });
            row = end + 1;
        }
        decls
    }

    /// First row of the comments / attributes directly above `row` that go with it.
    fn docs_above(&self, row: usize, floor: usize, end: usize) -> usize {
        let mut top = row;
        while top > floor && is_doc_line(self.line(top - 1).trim_start(), self.style) {
            top -= 1;
        }
        let limit = self.config.docstring_lines;
        if row - top <= limit || self.fits(top, end) {
            top
        } else {
            row - limit
        }
    }

    /// Last row of a brace-delimited declaration starting at `row`.
    fn brace_end(&self, row: usize, last: usize) -> usize {
        let mut depth = 0usize;
        let mut opened = false;
        let mut in_block_comment = false;
        let mut string: Option<u8> = None;
        for r in row..=last {
            let bytes = self.line(r).as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                if in_block_comment {
                    if b == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        in_block_comment = false;
                        i += 1;
                    }
                } else if let Some(quote) = string {
                    if b == b'\\' {
                        i += 1;
                    } else if b == quote {
                        string = None;
                    }
                } else {
                    match b {
                        b'/' if bytes.get(i + 1) == Some(&b'/') => break,
                        b'/' if bytes.get(i + 1) == Some(&b'*') => {
                            in_block_comment = true;
                            i += 1;
                        }
                        b'"' | b'`' => string = Some(b),
                        // A char literal ('x', '\n'); a lone quote is a Rust lifetime.
                        b'\'' => {
                            if bytes.get(i + 2) == Some(&b'\'') {
                                i += 2;
                            } else if bytes.get(i + 1) == Some(&b'\\') && bytes.get(i + 3) == Some(&b'\'') {
                                i += 3;
                            }
                        }
                        b'{' => {
                            depth += 1;
                            opened = true;
                        }
                        b'}' => {
                            depth = depth.saturating_sub(1);
                            if opened && depth == 0 {
                                return r;
                            }
                        }
                        b';' if !opened && depth == 0 => return r,
                        _ => {}
                    }
                }
                i += 1;
            }
            // Strings other than template literals end with their line.
            if string != Some(b'`') {
                string = None;
            }
            if !opened {
                // A signature continues on the next line only while it is visibly unfinished.
                let trimmed = self.line(r).trim_end();
                let continues = trimmed.ends_with(['(', ',', '=', '|', '&', ':', '<', '>'])
                    || r < last && self.line(r + 1).trim_start().starts_with(['{', '.', ')', ':'])
                    || trimmed.is_empty();
                if !continues {
                    return r;
                }
            }
        }
        last
    }

    /// Last row of an indentation-delimited declaration starting at `row`.
    fn indent_end(&self, row: usize, last: usize) -> usize {
        let indent = indentation(self.line(row));
        let mut end = row;
        for r in row + 1..=last {
            let line = self.line(r);
            if line.trim().is_empty() {
                continue;
            }
            let i = indentation(line);
            if i <= indent {
                let rest = line.trim_start();
                if self.style == Style::IndentEnd
                    && i == indent
                    && (rest == "end" || rest.starts_with("end "))
                {
                    return r;
                }
                // Python: a dedented closing bracket still belongs to a multi-line signature.
                if self.style == Style::Indent && rest.starts_with([')', ']', '}']) {
                    end = r;
                    continue;
                }
                break;
            }
            end = r;
        }
        end
    }
}

fn scope_typing(scope: Option<&Scope>) -> (ChunkType, ChunkMetadata) {
    match scope {
        Some(s) => (
            s.chunk_type,
            ChunkMetadata {
                symbol_name: Some(s.name.clone()),
                parent_symbol: s.parent.clone(),
                ..ChunkMetadata::default()
            },
        ),
        None => (ChunkType::CodeBlock, ChunkMetadata::default()),
    }
}

fn indentation(line: &str) -> usize {
    line.bytes().take_while(|&b| b == b' ' || b == b'\t').map(|b| if b == b'\t' { 4 } else { 1 }).sum()
}

fn is_doc_line(line: &str, style: Style) -> bool {
    match style {
        Style::Braces => {
            line.starts_with("//")
                || line.starts_with("/*")
                || line.starts_with('*')
                || line.starts_with("#[")
                || line.starts_with('@')
                || (line.starts_with('[') && line.ends_with(']'))
        }
        Style::Indent | Style::IndentEnd => line.starts_with('#') || line.starts_with('@'),
    }
}

const MODIFIERS: &[&str] = &[
    "export",
    "default",
    "async",
    "abstract",
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "final",
    "sealed",
    "open",
    "data",
    "inline",
    "virtual",
    "override",
    "extern",
    "unsafe",
    "declare",
    "partial",
    "readonly",
    "suspend",
    "tailrec",
    "operator",
    "infix",
    "fileprivate",
    "mutating",
    "pub",
    "pub(crate)",
    "pub(super)",
    "pub(self)",
    "const",
    "native",
    "synchronized",
    "strictfp",
    "case",
    "implicit",
    "lazy",
    "final",
    "enum",
    "annotation",
    "value",
    "inner",
    "companion",
];

/// The declaration patterns: `[modifiers] keyword name` → type and name.
fn declaration(line: &str, style: Style) -> Option<(ChunkType, String)> {
    let mut rest = line.trim_start();
    let mut words = 0;
    // `enum class X` (Kotlin) / `case class X` (Scala): a modifier before another keyword.
    loop {
        let (word, after) = split_word(rest);
        if word.is_empty() {
            return None;
        }
        if let Some(found) = keyword(word, after, style) {
            return Some(found);
        }
        if MODIFIERS.contains(&word) && words < 6 {
            rest = after.trim_start();
            words += 1;
            continue;
        }
        return if style == Style::Braces { c_like_function(line) } else { None };
    }
}

fn keyword(word: &str, after: &str, style: Style) -> Option<(ChunkType, String)> {
    let chunk_type = match word {
        "function" | "function*" | "fn" | "func" | "fun" => ChunkType::CodeFunction,
        "def" if style != Style::Braces => ChunkType::CodeFunction,
        "class" | "object" | "record" => ChunkType::CodeClass,
        "interface" | "protocol" => ChunkType::CodeInterface,
        "enum" => ChunkType::CodeEnum,
        "type" | "typealias" => ChunkType::CodeType,
        "struct" | "union" => ChunkType::CodeStruct,
        "trait" => ChunkType::CodeTrait,
        "impl" | "extension" => ChunkType::CodeImpl,
        "module" | "namespace" | "mod" => ChunkType::CodeModule,
        _ => return None,
    };
    let mut after = after.trim_start();
    if chunk_type == ChunkType::CodeFunction {
        after = after.trim_start_matches('*').trim_start();
        // Go methods: `func (r *T) Name(`.
        if after.starts_with('(') {
            after = after.split_once(')').map(|(_, a)| a.trim_start())?;
        }
        // Ruby `def self.name`.
        after = after.strip_prefix("self.").unwrap_or(after);
    }
    if chunk_type == ChunkType::CodeImpl {
        // `impl<T> Display for Foo<T>`: the implementing type.
        let target = after.trim_start_matches(|c| c != ' ' && c != '{').trim_start();
        let target = target.rsplit(" for ").next().unwrap_or(target);
        let name = identifier(target.trim_start_matches("for ").trim_start());
        return (!name.is_empty()).then(|| (chunk_type, name.to_string()));
    }
    let name = identifier(after);
    // `enum class X`, `enum struct X`: the first word was a modifier.
    if name.is_empty() || keyword(name, &after[name.len()..], style).is_some() {
        return None;
    }
    // `type` / `object` / `record` / `module` are common variable names: require a declaration
    // shape after the name.
    let tail = after[name.len()..].trim_start();
    if matches!(word, "type" | "object" | "record" | "module")
        && !(tail.is_empty()
            || tail.starts_with(['=', '{', '<', '(', ':', '['])
            || tail.starts_with("extends"))
    {
        return None;
    }
    if chunk_type == ChunkType::CodeType && tail.starts_with("==") {
        return None;
    }
    Some((chunk_type, name.to_string()))
}

/// `int *main(void) {` / `public static void run(String[] a)`: a C-like function or method.
fn c_like_function(line: &str) -> Option<(ChunkType, String)> {
    let trimmed = line.trim();
    let open = trimmed.find('(')?;
    let before = trimmed[..open].trim_end();
    let (first, _) = split_word(before);
    if matches!(
        first,
        "if" | "for"
            | "while"
            | "switch"
            | "return"
            | "else"
            | "catch"
            | "new"
            | "throw"
            | "do"
            | "case"
            | "using"
            | "lock"
            | "foreach"
            | "sizeof"
            | "delete"
            | "await"
            | "yield"
            | "typeof"
            | "echo"
    ) || before.contains(['=', '.', ',', '"', '\''])
        || before.split_whitespace().count() < 2
    {
        return None;
    }
    let name = before.rsplit([' ', '*', '&', ':']).next().unwrap_or("");
    let valid = name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '~');
    let tail = trimmed[open..].trim_end();
    let shape =
        tail.ends_with('{') || tail.ends_with(')') || tail.contains(") throws") || tail.ends_with("const");
    (valid && shape && !tail.ends_with(';')).then(|| (ChunkType::CodeFunction, name.to_string()))
}

fn split_word(s: &str) -> (&str, &str) {
    // `pub(crate)` is one word.
    if s.starts_with("pub(") {
        if let Some(close) = s.find(')') {
            return (&s[..=close], &s[close + 1..]);
        }
    }
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '*'))
        .map_or(s.len(), |(i, _)| i);
    (&s[..end], &s[end..])
}

fn identifier(s: &str) -> &str {
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_alphanumeric() || c == '_' || c == '$') || (i == 0 && c.is_ascii_digit()))
        .map_or(s.len(), |(i, _)| i);
    &s[..end]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn kinds(text: &str, language: Language) -> Vec<(ChunkType, Option<String>, String)> {
        let config = ChunkConfig::default();
        chunk(text, language, &config)
            .unwrap()
            .into_iter()
            .map(|p| (p.chunk_type, p.metadata.symbol_name, text[p.start_byte..p.end_byte].to_string()))
            .collect()
    }

    #[test]
    fn typescript_class_and_function_without_a_grammar() {
        let text = "/**\n * Sample class\n */\nexport class MyClass {\n    method() {\n        return true;\n    }\n}\n\nfunction helper() {\n    return \"helper\";\n}\n";
        let got = kinds(text, Language::Typescript);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].0, ChunkType::CodeClass);
        assert_eq!(got[0].1.as_deref(), Some("MyClass"));
        assert!(got[0].2.starts_with("/**"));
        assert_eq!(got[1].0, ChunkType::CodeFunction);
        assert_eq!(got[1].1.as_deref(), Some("helper"));
    }

    #[test]
    fn declaration_patterns_give_type_and_name() {
        for (line, ty, name) in [
            ("export async function getUserData(id: string) {", ChunkType::CodeFunction, "getUserData"),
            ("export abstract class Base {", ChunkType::CodeClass, "Base"),
            ("export interface User {", ChunkType::CodeInterface, "User"),
            ("enum Color {", ChunkType::CodeEnum, "Color"),
            ("export type Id = string;", ChunkType::CodeType, "Id"),
            ("pub(crate) fn run() {", ChunkType::CodeFunction, "run"),
            ("impl<T> Display for Wrapper<T> {", ChunkType::CodeImpl, "Wrapper"),
            ("func (p *Point) Norm() float64 {", ChunkType::CodeFunction, "Norm"),
            ("public static void main(String[] args) {", ChunkType::CodeFunction, "main"),
            ("static int *make(int n)", ChunkType::CodeFunction, "make"),
        ] {
            assert_eq!(declaration(line, Style::Braces), Some((ty, name.to_string())), "{line}");
        }
        for line in ["if (x) {", "return foo(x);", "type = 3", "x = new Foo(1);", "foo(bar);", "} else {"] {
            assert_eq!(declaration(line, Style::Braces), None, "{line}");
        }
    }

    #[test]
    fn python_by_indentation() {
        let text = "import os\n\n@dec\ndef f(a,\n      b):\n    return a\n\nclass C:\n    def m(self):\n        pass\n\nx = 1\n";
        let got = kinds(text, Language::Python);
        let types: Vec<_> = got.iter().map(|g| g.0).collect();
        assert_eq!(
            types,
            [ChunkType::CodeBlock, ChunkType::CodeFunction, ChunkType::CodeClass, ChunkType::CodeBlock]
        );
        assert!(got[1].2.starts_with("@dec\ndef f"));
    }

    #[test]
    fn non_code_languages_are_left_to_the_line_chunker() {
        assert!(chunk("a: 1\n", Language::Yaml, &ChunkConfig::default()).is_none());
    }
}
