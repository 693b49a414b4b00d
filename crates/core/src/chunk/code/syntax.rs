//! The syntax-aware chunker: split-then-merge over a tree-sitter tree.
//!
//! 1. **Units.** The children of a node become units: whole lines (rows) with a role. Definitions
//!    take the doc comments / attributes directly above them (up to `docstring_lines`, or a whole
//!    longer block when everything still fits); children that share a row are fused, so chunks
//!    always hold whole lines.
//! 2. **Split.** A unit over the limits is split at its members: a definition at its body (its
//!    methods become chunks with `parent_symbol`, its header and fields a chunk of its own), plain
//!    code at its children. Modules / namespaces are always split. Where no structure is left (one
//!    giant statement, a minified line), [`split_span`] cuts by lines and inside lines.
//! 3. **Merge.** Within one level, neighbouring plain code, one-line definitions and closing
//!    tokens are merged up to the limits; other definitions always stand alone. A merged group is
//!    typed by the single definition it holds when that is at least half of it, else by the
//!    enclosing definition, else `code-block`. A one-row leftover (an `impl X {` header, a
//!    section comment) joins its neighbour rather than becoming a one-line chunk.
//!
//! Code that did not parse (`ERROR` nodes) is split like a container when the parser still
//! recognised definitions inside it, else handed to the grammar-free heuristics.
//!
//! Every non-blank line of the input ends up in exactly one piece (or in several overlapping ones
//! where [`split_span`] cuts with overlap); pieces are in file order, trimmed of blank lines.
use std::cell::RefCell;

use tree_sitter::{Node, Parser};

use super::grammar::{Def, Grammar, Role};
use super::heuristic;
use crate::chunk::config::count_chars;
use crate::chunk::lines::split_span;
use crate::chunk::{ChunkConfig, ChunkMetadata, ChunkType, Piece, TokenCounter};
use crate::lang::Language;

/// Deepest nesting of split definitions / code we follow before cutting by lines instead (keeps
/// the recursion bounded on pathological input; real code never gets near it).
const MAX_DEPTH: usize = 64;

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// `text` parsed with `grammar`, or `None` if the parser could not run.
pub(crate) fn parse(text: &str, grammar: &Grammar) -> Option<tree_sitter::Tree> {
    PARSER.with(|parser| {
        let mut parser = parser.try_borrow_mut().ok()?;
        parser.set_language(&(grammar.language)()).ok()?;
        parse_bounded(&mut parser, text)
    })
}

/// Progress checks a parse may take: this many, plus one per 8 bytes. tree-sitter checks in every
/// 100 parse operations, so that is 100,000 operations plus 12.5 a byte. Some grammars' error
/// recovery on hostile input takes unbounded time and memory (a 1.7 KB file held gigabytes in the
/// Kotlin grammar); real source stays far below: the code graph bench's 1,109 files (Rust,
/// TypeScript, JavaScript, Python) chunk and graph identically with this budget and with none, and
/// only a budget of 10,000 operations plus about 1.6 a byte changed one of them. Counted in
/// operations, not time, so the same input gives up at the same point on every platform.
const PARSE_CHECKS_BASE: usize = 1_000;

/// Most progress checks any parse may take, whatever the file's size: a parse's memory is its
/// tree, which grows with its operations — measured at 3.5–4.4 KB of tree per check on ordinary
/// code and up to 5.4 KB on tables of literals (tree-sitter's allocations counted), so at most
/// about 11 MB of finished tree (a parse stopped here held up to 17 MB with its stack). Ordinary
/// code takes one check per 100–200 bytes: files of up to 200–400 KB of it stay under the cap. A
/// 760 KB file of table literals held a 61 MB tree.
pub(crate) const PARSE_CHECKS_MAX: usize = 2_000;

/// `parser.parse(text)` within [`PARSE_CHECKS_BASE`] + one progress check per 8 bytes, and
/// never more than [`PARSE_CHECKS_MAX`]; `None` past it (the caller falls back as for any failed
/// parse, see [`crate::chunk::ChunkFallback::ParseOverBudget`]).
pub(crate) fn parse_bounded(parser: &mut Parser, text: &str) -> Option<tree_sitter::Tree> {
    let budget = (PARSE_CHECKS_BASE + text.len() / 8).min(PARSE_CHECKS_MAX);
    let mut checks = 0usize;
    let mut progress = |_: &tree_sitter::ParseState| {
        checks += 1;
        if checks > budget {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    };
    let bytes = text.as_bytes();
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
    let tree = parser.parse_with_options(
        &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
        None,
        Some(options),
    );
    if tree.is_none() {
        // A stopped parse keeps its stack and partial tree in the parser, to be resumed: the
        // thread's parser would hold them (megabytes) until its next parse.
        parser.reset();
    }
    tree
}

/// Pieces for `text` from its parse `tree` (so that other passes can share the one parse).
pub(crate) fn chunk_tree(
    text: &str,
    tree: &tree_sitter::Tree,
    language: Language,
    grammar: &Grammar,
    config: &ChunkConfig,
) -> Vec<Piece> {
    let chunker = Chunker::new(text, language, grammar, config);
    let root = tree.root_node();
    let units = if root.is_error() && root.end_byte() > root.start_byte() {
        // Nothing parsed at the top: chunk the whole file as broken code.
        let last = chunker.line_starts.len().saturating_sub(1);
        vec![Unit { first: 0, last, kind: Kind::Code { node: Some(root), transparent: true, error: true } }]
    } else {
        let last = chunker.line_starts.len().saturating_sub(1);
        chunker.units_of(root, Some((0, last)), None)
    };
    let mut atoms = Vec::with_capacity(units.len());
    for unit in units {
        chunker.expand(unit, None, 0, &mut atoms);
    }
    chunker.merge(atoms, None)
}

/// The enclosing definition while its members are chunked.
struct Scope {
    chunk_type: ChunkType,
    name: Option<String>,
    parent: Option<String>,
    /// Functions directly inside are methods.
    type_like: bool,
}

impl Scope {
    fn of(def: &Def<'_>, outer: Option<&Scope>) -> Scope {
        let chunk_type = method_if(def.chunk_type, outer);
        Scope {
            chunk_type,
            name: def.name.clone(),
            parent: def.parent.clone().or_else(|| outer.and_then(|s| s.name.clone())),
            type_like: matches!(
                chunk_type,
                ChunkType::CodeClass
                    | ChunkType::CodeStruct
                    | ChunkType::CodeInterface
                    | ChunkType::CodeTrait
                    | ChunkType::CodeImpl
                    | ChunkType::CodeEnum
            ),
        }
    }
}

fn method_if(chunk_type: ChunkType, scope: Option<&Scope>) -> ChunkType {
    match (chunk_type, scope) {
        (ChunkType::CodeFunction, Some(s)) if s.type_like => ChunkType::CodeMethod,
        (t, _) => t,
    }
}

#[derive(Clone)]
enum Kind<'t> {
    /// A definition; `tiny` when the definition itself (without docs) is one line.
    Def(Def<'t>, bool),
    /// Plain code; `node` is gone when units were fused or cut; `transparent` units are always
    /// split into their members; `error` units hold code that did not parse.
    Code { node: Option<Node<'t>>, transparent: bool, error: bool },
    /// A comment / attribute not (yet) attached to a definition.
    Prefix,
    /// Anonymous tokens only (`}`, `end`, `);`).
    Token,
}

impl Kind<'_> {
    fn is_error(&self) -> bool {
        matches!(self, Kind::Code { error: true, .. })
    }

    /// Which kind wins when units on one row are fused.
    fn weight(&self) -> u8 {
        match self {
            Kind::Token => 0,
            Kind::Prefix => 1,
            Kind::Code { .. } | Kind::Def(..) => 2,
        }
    }
}

/// Rows `first..=last` (0-based, inclusive) with a role.
#[derive(Clone)]
struct Unit<'t> {
    first: usize,
    last: usize,
    kind: Kind<'t>,
}

/// A merge result before typing: a group of units, or pieces already cut.
enum Out<'t> {
    Group(Group<'t>),
    Pieces(Vec<Piece>),
}

impl Out<'_> {
    fn last_piece(&mut self) -> Option<&mut Piece> {
        match self {
            Out::Pieces(pieces) => pieces.last_mut(),
            Out::Group(_) => None,
        }
    }
}

enum Atom<'t> {
    /// Fits the limits; may be merged with neighbours.
    Unit(Unit<'t>),
    /// Already cut (a split definition or a span split by lines); never merged.
    Fixed(Vec<Piece>),
}

struct Group<'t> {
    first: usize,
    last: usize,
    mergeable: bool,
    defs: usize,
    def: Option<Def<'t>>,
    /// Rows of the definition(s) in the group.
    def_rows: usize,
    /// Only comments (a section comment).
    comments: bool,
}

struct Chunker<'a> {
    text: &'a str,
    language: Language,
    grammar: &'a Grammar,
    config: &'a ChunkConfig,
    /// Byte offset where each row starts.
    line_starts: Vec<usize>,
    /// Chars before each row (for the default chars/4 token estimate).
    chars_before: Vec<usize>,
    max_lines: usize,
    max_tokens: usize,
    max_chars: usize,
    counter: Option<&'a dyn TokenCounter>,
}

impl<'a> Chunker<'a> {
    fn new(text: &'a str, language: Language, grammar: &'a Grammar, config: &'a ChunkConfig) -> Self {
        let mut line_starts = Vec::with_capacity(text.len() / 32 + 1);
        let mut chars_before = Vec::with_capacity(text.len() / 32 + 1);
        let counter = config.token_counter.custom();
        line_starts.push(0);
        chars_before.push(0);
        let bytes = text.as_bytes();
        let mut chars = 0;
        let mut from = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                if counter.is_none() {
                    chars += count_chars(&bytes[from..=i]);
                }
                from = i + 1;
                line_starts.push(i + 1);
                chars_before.push(chars);
            }
        }
        let max_tokens = config.token_limit();
        Chunker {
            text,
            language,
            grammar,
            config,
            line_starts,
            chars_before,
            max_lines: config.line_limit(),
            max_tokens,
            max_chars: max_tokens.saturating_mul(4),
            counter,
        }
    }

    // ---- rows and spans -------------------------------------------------------------------

    fn rows(&self, node: Node<'_>) -> (usize, usize) {
        let start = node.start_position();
        let end = node.end_position();
        // A node ending right after a newline ends on the previous row.
        let last = if end.column == 0 && end.row > start.row { end.row - 1 } else { end.row };
        (start.row, last)
    }

    fn row_start(&self, row: usize) -> usize {
        self.line_starts.get(row).copied().unwrap_or(self.text.len())
    }

    /// End of `row` including its newline.
    fn row_end(&self, row: usize) -> usize {
        self.line_starts.get(row + 1).copied().unwrap_or(self.text.len())
    }

    fn row_of(&self, byte: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= byte).saturating_sub(1)
    }

    fn is_blank_row(&self, row: usize) -> bool {
        self.text[self.row_start(row)..self.row_end(row)].trim().is_empty()
    }

    /// The byte span of rows `first..=last` without leading / trailing blank lines and trailing
    /// whitespace; `None` when the rows are all blank.
    fn span(&self, first: usize, last: usize) -> Option<(usize, usize)> {
        let mut first = first;
        while first <= last && self.is_blank_row(first) {
            first += 1;
        }
        if first > last {
            return None;
        }
        let start = self.row_start(first);
        let end = start + self.text[start..self.row_end(last)].trim_end().len();
        Some((start, end))
    }

    fn chars_at(&self, byte: usize) -> usize {
        let row = self.row_of(byte);
        self.chars_before[row] + count_chars(&self.text.as_bytes()[self.line_starts[row]..byte])
    }

    fn fits_span(&self, start: usize, end: usize) -> bool {
        if end <= start {
            return true;
        }
        if self.row_of(end - 1) - self.row_of(start) + 1 > self.max_lines {
            return false;
        }
        match self.counter {
            None => {
                end - start <= self.max_chars || self.chars_at(end) - self.chars_at(start) <= self.max_chars
            }
            Some(counter) => counter.count(&self.text[start..end]) <= self.max_tokens,
        }
    }

    fn fits(&self, first: usize, last: usize) -> bool {
        self.span(first, last).is_none_or(|(start, end)| self.fits_span(start, end))
    }

    // ---- units --------------------------------------------------------------------------------

    /// Units for the children of `node`. `cover` is the row range the units must cover: rows
    /// above the children become a head unit (the part of a definition before its body: docs,
    /// decorators, signature), rows below them a closing unit.
    ///
    /// The children of `inline` (a child of `node`: a definition's body) are itemized in its
    /// place, so that comments before the body attach to a first member inside it.
    fn units_of<'t>(
        &self,
        node: Node<'t>,
        cover: Option<(usize, usize)>,
        inline: Option<Node<'t>>,
    ) -> Vec<Unit<'t>> {
        // Children on one row fuse into one unit: a row count bounds the units, where a child
        // count does not (a table of 120,000 literals is one node with 240,000 children).
        let rows = node.end_position().row - node.start_position().row + 1;
        let mut items: Vec<Unit<'t>> = Vec::with_capacity((node.child_count() as usize).min(rows) + 2);
        let mut cursor = node.walk();
        let mut inlined = false;
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if !inlined && inline.is_some_and(|b| b.id() == child.id()) && cursor.goto_first_child() {
                    inlined = true;
                    continue;
                }
                if child.end_byte() > child.start_byte() {
                    let (first, last) = self.rows(child);
                    let kind = if !child.is_named() {
                        Kind::Token
                    } else if child.is_error() {
                        // Code that did not parse: split it like a container, so that the
                        // definitions the parser still recognised inside get their own chunks.
                        Kind::Code { node: Some(child), transparent: true, error: true }
                    } else {
                        match (self.grammar.classify)(child, self.text) {
                            Role::Def(def) => {
                                let (f, l) = self.rows(def.node);
                                let tiny = f == l && first == last;
                                Kind::Def(def, tiny)
                            }
                            Role::Prefix => Kind::Prefix,
                            Role::Transparent => {
                                Kind::Code { node: Some(child), transparent: true, error: false }
                            }
                            Role::Code => Kind::Code { node: Some(child), transparent: false, error: false },
                        }
                    };
                    self.push_item(&mut items, Unit { first, last, kind }, true);
                }
                if !cursor.goto_next_sibling() {
                    // Back out of an inlined body to continue with its parent's siblings.
                    if inlined {
                        inlined = false;
                        if cursor.goto_parent() && cursor.goto_next_sibling() {
                            continue;
                        }
                    }
                    break;
                }
            }
        }
        let Some((first, last)) = cover else {
            return items;
        };
        let top = items.first().map_or(last + 1, |u| u.first);
        let bottom = items.last().map_or(last + 1, |u| u.last + 1);
        if first >= top && bottom > last {
            return items;
        }
        let mut units = Vec::with_capacity(items.len() + 2);
        if first < top {
            units.push(Unit {
                first,
                last: top - 1,
                kind: Kind::Code { node: None, transparent: false, error: false },
            });
        }
        // Docs were attached in the first pass: only fuse here.
        for item in items {
            self.push_item(&mut units, item, false);
        }
        if bottom <= last {
            self.push_item(&mut units, Unit { first: bottom, last, kind: Kind::Token }, false);
        }
        units
    }

    /// Appends `item`: attaches the doc comments / attributes above a definition, fuses units
    /// that share a row.
    fn push_item<'t>(&self, units: &mut Vec<Unit<'t>>, mut item: Unit<'t>, attach: bool) {
        // Rows between two children that hold text no child covers (chars a grammar skips like
        // whitespace, e.g. a stray U+FEFF): plain code of their own, never lost.
        if let Some(prev) = units.last() {
            if item.first > prev.last + 1 {
                let gap = prev.last + 1..item.first;
                let first = gap.clone().find(|&r| !self.is_blank_row(r));
                if let Some(first) = first {
                    let last = gap.rev().find(|&r| !self.is_blank_row(r)).unwrap_or(first);
                    units.push(Unit {
                        first,
                        last,
                        kind: Kind::Code { node: None, transparent: false, error: false },
                    });
                }
            }
        }
        if attach && matches!(item.kind, Kind::Def(..)) {
            self.attach_prefixes(units, &mut item);
        }
        if let Some(prev) = units.last_mut() {
            if item.first <= prev.last {
                prev.last = prev.last.max(item.last);
                let (a, b) = (prev.kind.weight(), item.kind.weight());
                let error = prev.kind.is_error() || item.kind.is_error();
                prev.kind = if a > b {
                    prev.kind.clone()
                } else if b > a {
                    item.kind
                } else if a == 2 {
                    Kind::Code { node: None, transparent: false, error }
                } else {
                    prev.kind.clone()
                };

                return;
            }
        }
        units.push(item);
    }

    /// Moves the contiguous comments / attributes at the end of `units` into `def` (see the module
    /// docs for the `docstring_lines` rule).
    fn attach_prefixes<'t>(&self, units: &mut Vec<Unit<'t>>, def: &mut Unit<'t>) {
        let mut k = units.len();
        let mut top = def.first;
        while k > 0 && matches!(units[k - 1].kind, Kind::Prefix) && units[k - 1].last + 1 >= top {
            top = units[k - 1].first;
            k -= 1;
        }
        if k == units.len() {
            return;
        }
        let block_first = units[k].first;
        let limit = self.config.docstring_lines;
        let attach_first = if def.first - block_first <= limit || self.fits(block_first, def.last) {
            block_first
        } else {
            def.first - limit
        };
        while units.len() > k {
            let Some(last) = units.last_mut() else { break };
            if last.first >= attach_first {
                units.pop();
            } else {
                if last.last >= attach_first {
                    last.last = attach_first - 1;
                }
                break;
            }
        }
        def.first = def.first.min(attach_first);
    }

    /// Members of `node` covering rows `first..=last`: the units of the first node, from `node`
    /// (with `inline`, its body, itemized in place) down through its largest child, that has at
    /// least two of them.
    fn members<'t>(
        &self,
        node: Node<'t>,
        first: usize,
        last: usize,
        inline: Option<Node<'t>>,
    ) -> Vec<Unit<'t>> {
        let mut current = node;
        let mut inline = inline;
        loop {
            let units = self.units_of(current, Some((first, last)), inline.take());
            if units.len() >= 2 {
                return units;
            }
            let mut cursor = current.walk();
            let largest = current
                .children(&mut cursor)
                .map(|c| (self.rows(c), c))
                .filter(|((f, l), _)| l > f)
                .max_by_key(|((f, l), c)| (l - f, std::cmp::Reverse(c.start_byte())));
            match largest {
                Some((_, child)) => current = child,
                None => return units,
            }
        }
    }

    /// The body of a definition: its `body` field, else its largest multi-row named child.
    fn body_of<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        if let Some(body) = node.child_by_field_name("body") {
            return Some(body);
        }
        let mut cursor = node.walk();
        let largest = node
            .named_children(&mut cursor)
            .map(|c| (self.rows(c), c))
            .filter(|((f, l), _)| l > f)
            .max_by_key(|((f, l), c)| (l - f, std::cmp::Reverse(c.start_byte())))
            .map(|(_, c)| c);
        largest
    }

    // ---- split ------------------------------------------------------------------------------

    fn expand<'t>(&self, unit: Unit<'t>, scope: Option<&Scope>, depth: usize, out: &mut Vec<Atom<'t>>) {
        match &unit.kind {
            Kind::Def(def, _) => {
                let always_split = def.chunk_type == ChunkType::CodeModule;
                if !always_split && self.fits(unit.first, unit.last) {
                    out.push(Atom::Unit(unit));
                    return;
                }
                let inner = Scope::of(def, scope);
                let members = if depth < MAX_DEPTH {
                    let body = self.body_of(def.node);
                    self.members(def.node, unit.first, unit.last, body)
                } else {
                    Vec::new()
                };
                if members.len() < 2 {
                    self.keep_or_cut(unit, &inner_typing(&inner), out);
                    return;
                }
                let mut atoms = Vec::with_capacity(members.len());
                for member in members {
                    self.expand(member, Some(&inner), depth + 1, &mut atoms);
                }
                out.push(Atom::Fixed(self.merge(atoms, Some(&inner))));
            }
            Kind::Code { node, transparent, error } => {
                let node = *node;
                if !transparent && !error && self.fits(unit.first, unit.last) {
                    out.push(Atom::Unit(unit));
                    return;
                }
                let members = match node {
                    Some(node) if depth < MAX_DEPTH => self.members(node, unit.first, unit.last, None),
                    _ => Vec::new(),
                };
                // Code that did not parse: where the parser recognised no definition inside,
                // the grammar-free heuristics look for declarations in its rows.
                if *error && !members.iter().any(|m| matches!(m.kind, Kind::Def(..))) {
                    let scope = scope.map(|s| heuristic::Scope {
                        chunk_type: s.chunk_type,
                        name: s.name.clone().unwrap_or_default(),
                        parent: s.parent.clone(),
                    });
                    let rows = (unit.first, unit.last);
                    let heuristic = heuristic::chunk_rows(
                        self.text,
                        &self.line_starts,
                        self.language,
                        rows,
                        scope,
                        self.config,
                    );
                    if let Some(pieces) = heuristic {
                        out.push(Atom::Fixed(pieces));
                        return;
                    }
                }
                if members.len() < 2 {
                    self.keep_or_cut(unit, &scope_typing(scope), out);
                    return;
                }
                for member in members {
                    self.expand(member, scope, depth + 1, out);
                }
            }
            _ => self.keep_or_cut(unit, &scope_typing(scope), out),
        }
    }

    fn keep_or_cut<'t>(&self, unit: Unit<'t>, typing: &(ChunkType, ChunkMetadata), out: &mut Vec<Atom<'t>>) {
        if self.fits(unit.first, unit.last) {
            out.push(Atom::Unit(unit));
        } else if let Some((start, end)) = self.span(unit.first, unit.last) {
            out.push(Atom::Fixed(split_span(self.text, start, end, typing.0, &typing.1, self.config)));
        }
    }

    // ---- merge ------------------------------------------------------------------------------

    fn merge(&self, atoms: Vec<Atom<'_>>, scope: Option<&Scope>) -> Vec<Piece> {
        let mut seq: Vec<Out<'_>> = Vec::with_capacity(atoms.len());
        let mut group: Option<Group<'_>> = None;
        for atom in atoms {
            let unit = match atom {
                Atom::Fixed(pieces) => {
                    seq.extend(group.take().map(Out::Group));
                    seq.push(Out::Pieces(pieces));
                    continue;
                }
                Atom::Unit(unit) => unit,
            };
            match unit.kind {
                Kind::Token => {
                    if let Some(g) = group.as_mut() {
                        if self.fits(g.first, unit.last) {
                            g.last = unit.last;
                            continue;
                        }
                    } else if let Some(piece) = seq.last_mut().and_then(Out::last_piece) {
                        // Closing tokens after a split definition go with its last piece.
                        if let Some((_, end)) = self.span(unit.first, unit.last) {
                            if end > piece.end_byte && self.fits_span(piece.start_byte, end) {
                                piece.end_byte = end;
                                continue;
                            }
                        }
                    }
                    seq.extend(group.take().map(Out::Group));
                    group = Some(Group {
                        first: unit.first,
                        last: unit.last,
                        mergeable: true,
                        defs: 0,
                        def: None,
                        def_rows: 0,
                        comments: false,
                    });
                }
                Kind::Def(def, false) => {
                    seq.extend(group.take().map(Out::Group));
                    group = Some(Group {
                        first: unit.first,
                        last: unit.last,
                        mergeable: false,
                        defs: 1,
                        def: Some(def),
                        def_rows: unit.last + 1 - unit.first,
                        comments: false,
                    });
                }
                kind => {
                    let comment = matches!(kind, Kind::Prefix);
                    let def = match kind {
                        Kind::Def(def, _) => Some(def),
                        _ => None,
                    };
                    if let Some(g) = group.as_mut() {
                        if g.mergeable && self.fits(g.first, unit.last) {
                            g.last = unit.last;
                            g.comments &= comment;
                            if let Some(def) = def {
                                g.defs += 1;
                                g.def_rows += unit.last + 1 - unit.first;
                                g.def.get_or_insert(def);
                            }
                            continue;
                        }
                    }
                    seq.extend(group.take().map(Out::Group));
                    let defs = usize::from(def.is_some());
                    let def_rows = if def.is_some() { unit.last + 1 - unit.first } else { 0 };
                    group = Some(Group {
                        first: unit.first,
                        last: unit.last,
                        mergeable: true,
                        defs,
                        def,
                        def_rows,
                        comments: comment,
                    });
                }
            }
        }
        seq.extend(group.map(Out::Group));
        self.absorb_orphans(&mut seq, scope.is_some());
        let mut out = Vec::with_capacity(seq.len());
        for item in seq {
            match item {
                Out::Group(group) => self.flush(Some(group), scope, &mut out),
                Out::Pieces(pieces) => out.extend(pieces),
            }
        }
        out
    }

    /// A one-row group of plain code (an `impl X {` header, a section comment, a lone statement)
    /// directly above or below a neighbour joins that neighbour when it fits — the following one
    /// first, then the preceding one. A definition's header (the first group in its scope) and a
    /// lone comment join the following group even across blank lines.
    fn absorb_orphans(&self, seq: &mut Vec<Out<'_>>, in_scope: bool) {
        let mut i = 0;
        while i < seq.len() {
            let Out::Group(g) = &seq[i] else {
                i += 1;
                continue;
            };
            if !(g.mergeable && g.defs == 0 && g.last == g.first) {
                i += 1;
                continue;
            }
            let (first, last, comments) = (g.first, g.last, g.comments);
            if let Some(Out::Group(next)) = seq.get(i + 1) {
                if (next.first == last + 1 || comments || (in_scope && i == 0)) && self.fits(first, next.last)
                {
                    if let Some(Out::Group(next)) = seq.get_mut(i + 1) {
                        next.first = first;
                    }
                    seq.remove(i);
                    continue;
                }
            }
            if let Some(Out::Group(prev)) = i.checked_sub(1).and_then(|p| seq.get(p)) {
                if prev.last + 1 == first && self.fits(prev.first, last) {
                    if let Some(Out::Group(prev)) = seq.get_mut(i - 1) {
                        prev.last = last;
                    }
                    seq.remove(i);
                    continue;
                }
            }
            i += 1;
        }
    }

    fn flush(&self, group: Option<Group<'_>>, scope: Option<&Scope>, out: &mut Vec<Piece>) {
        let Some(group) = group else { return };
        let Some((start, end)) = self.span(group.first, group.last) else { return };
        // A group is typed by its one definition when that is at least half of it; a definition
        // among more code (imports, statements) makes a `code-block`.
        let mostly_def = group.def_rows * 2 >= group.last + 1 - group.first;
        let (chunk_type, metadata) = match (group.defs, &group.def) {
            (1, Some(def)) if mostly_def => (
                method_if(def.chunk_type, scope),
                ChunkMetadata {
                    symbol_name: def.name.clone(),
                    parent_symbol: def.parent.clone().or_else(|| scope.and_then(|s| s.name.clone())),
                    ..ChunkMetadata::default()
                },
            ),
            (0, _) => scope_typing(scope),
            (1, Some(_)) if scope.is_some() => scope_typing(scope),
            _ => (
                ChunkType::CodeBlock,
                ChunkMetadata {
                    parent_symbol: scope.and_then(|s| s.name.clone()),
                    ..ChunkMetadata::default()
                },
            ),
        };
        if self.fits_span(start, end) {
            out.push(Piece { start_byte: start, end_byte: end, chunk_type, metadata });
        } else {
            out.extend(split_span(self.text, start, end, chunk_type, &metadata, self.config));
        }
    }
}

/// Type and metadata of code directly inside `scope` (a definition's header, fields, pieces of
/// its body) — or `code-block` at the top level.
fn scope_typing(scope: Option<&Scope>) -> (ChunkType, ChunkMetadata) {
    match scope {
        Some(s) => inner_typing(s),
        None => (ChunkType::CodeBlock, ChunkMetadata::default()),
    }
}

fn inner_typing(scope: &Scope) -> (ChunkType, ChunkMetadata) {
    (
        scope.chunk_type,
        ChunkMetadata {
            symbol_name: scope.name.clone(),
            parent_symbol: scope.parent.clone(),
            ..ChunkMetadata::default()
        },
    )
}
