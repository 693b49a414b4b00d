//! What the walk looks up in a grammar, made once per language: each kind's flags, the field ids
//! of names, types and callees; and how a call node's callee is read from those fields.

use std::num::NonZeroU16 as FieldId;
use std::sync::{Arc, Mutex};

use tree_sitter::Node as TsNode;

use super::super::lang::GraphLang;
use super::super::text::{is_plain_identifier, split_path, strip_generics};
use super::doc::{is_doc_or_annotation, ANNOTATION_KINDS};
use crate::chunk::code::grammar::text;
use crate::lang::Language;

/// What the walk looks up in a grammar, made once per language and process.
pub(super) struct Grammar {
    /// [`KindFlags`] per grammar symbol: `kind()` converts a C string (length + UTF-8 check) on
    /// every call, and the walk asks about every node.
    pub(super) flags: Box<[u16]>,
    /// Field ids of `name` and of [`super::super::lang::TypeRefs::fields`]: comparing ids spares the
    /// field name's C string conversion on every candidate type name (and looking an id up by
    /// name scans the grammar's field names).
    pub(super) name_field: Option<FieldId>,
    pub(super) type_fields: Vec<FieldId>,
    /// The names of those fields with their ids.
    pub(super) fields: Vec<(&'static str, FieldId)>,
    pub(super) callee_fields: CalleeFields,
}

pub(super) fn grammar(language: Language, ts: &tree_sitter::Language, lang: &GraphLang) -> Arc<Grammar> {
    static GRAMMARS: Mutex<Vec<(Language, Arc<Grammar>)>> = Mutex::new(Vec::new());
    let mut grammars = GRAMMARS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, grammar)) = grammars.iter().find(|(l, _)| *l == language) {
        return grammar.clone();
    }
    let count = u16::try_from(ts.node_kind_count()).unwrap_or(u16::MAX - 2);
    let grammar = Arc::new(Grammar {
        flags: (0..count)
            .map(|id| kind_flags(ts.node_kind_for_id(id).unwrap_or(""), ts.node_kind_is_named(id), lang))
            .collect(),
        name_field: ts.field_id_for_name("name"),
        type_fields: lang.types.fields.iter().filter_map(|f| ts.field_id_for_name(f)).collect(),
        fields: std::iter::once("name")
            .chain(lang.types.fields.iter().copied())
            .filter_map(|f| Some((f, ts.field_id_for_name(f)?)))
            .collect(),
        callee_fields: CalleeFields::of(ts),
    });
    grammars.push((language, grammar.clone()));
    grammar
}

/// `node`'s [`KindFlags`] from the grammar's table.
pub(super) fn flags_of(table: &[u16], node: TsNode<'_>, lang: &GraphLang) -> u16 {
    match table.get(usize::from(node.kind_id())) {
        Some(&f) => f,
        // `ERROR` sits outside the symbol table.
        None => kind_flags(node.kind(), node.is_named(), lang),
    }
}

pub(super) fn kind_flags(kind: &str, named: bool, lang: &GraphLang) -> u16 {
    let mut f = KindFlags::KNOWN;
    if named {
        f |= KindFlags::NAMED;
    }
    if lang.decl_kinds.contains(&kind) {
        f |= KindFlags::DECL;
    }
    if lang.import_kinds.contains(&kind) {
        f |= KindFlags::IMPORT;
    }
    if ANNOTATION_KINDS.contains(&kind) {
        f |= KindFlags::ANNOTATION;
    }
    if kind == "modifiers" || kind == "modifier" {
        f |= KindFlags::MODIFIERS;
    }
    if lang.wrappers.contains(&kind) {
        f |= KindFlags::WRAPPER;
    }
    if lang.opaque.contains(&kind) {
        f |= KindFlags::OPAQUE;
    }
    if kind.contains("comment") {
        f |= KindFlags::COMMENT;
    }
    if is_doc_or_annotation(kind) {
        f |= KindFlags::DOC_OR_ANNOTATION;
    }
    if lang.call_kinds.contains(&kind) {
        f |= KindFlags::CALL;
    }
    let types = &lang.types;
    if types.names.contains(&kind) {
        f |= KindFlags::TYPE_NAME;
    }
    if types.candidates.contains(&kind) {
        f |= KindFlags::TYPE_CANDIDATE;
    }
    if types.parents.contains(&kind) {
        f |= KindFlags::TYPE_PARENT;
    }
    if types.unions.contains(&kind) {
        f |= KindFlags::TYPE_UNION;
    }
    f
}

/// What the walk needs to know about a node kind (bits of `kind_flags`).
pub(super) struct KindFlags;

impl KindFlags {
    pub(super) const KNOWN: u16 = 1;
    pub(super) const COMMENT: u16 = 2;
    pub(super) const DOC_OR_ANNOTATION: u16 = 4;
    pub(super) const CALL: u16 = 8;
    /// Always a type name ([`super::lang::TypeRefs::names`]).
    pub(super) const TYPE_NAME: u16 = 16;
    /// A type name in a type position ([`super::lang::TypeRefs::candidates`]).
    pub(super) const TYPE_CANDIDATE: u16 = 32;
    /// Its children in candidate kinds are type names ([`super::lang::TypeRefs::parents`]).
    pub(super) const TYPE_PARENT: u16 = 64;
    /// Passes a type position on to its children ([`super::lang::TypeRefs::unions`]).
    pub(super) const TYPE_UNION: u16 = 128;
    pub(super) const NAMED: u16 = 256;
    /// May be a definition ([`GraphLang::decl_kinds`]).
    pub(super) const DECL: u16 = 512;
    /// May be an import ([`GraphLang::import_kinds`]).
    pub(super) const IMPORT: u16 = 1024;
    pub(super) const ANNOTATION: u16 = 2048;
    pub(super) const WRAPPER: u16 = 4096;
    /// `modifiers` / `modifier`: annotations may sit inside.
    pub(super) const MODIFIERS: u16 = 8192;
    /// Not walked into ([`GraphLang::opaque`]).
    pub(super) const OPAQUE: u16 = 16384;
}

/// The ids of the fields [`callee`] reads: `child_by_field_name` looks the name up among all the
/// grammar's fields on every call.
pub(super) struct CalleeFields {
    pub(super) function: Option<FieldId>,
    pub(super) constructor: Option<FieldId>,
    pub(super) type_: Option<FieldId>,
    pub(super) name: Option<FieldId>,
    pub(super) method: Option<FieldId>,
    pub(super) object: Option<FieldId>,
    pub(super) receiver: Option<FieldId>,
    pub(super) scope: Option<FieldId>,
}

impl CalleeFields {
    pub(super) fn of(ts: &tree_sitter::Language) -> Self {
        let id = |name: &str| ts.field_id_for_name(name);
        CalleeFields {
            function: id("function"),
            constructor: id("constructor"),
            type_: id("type"),
            name: id("name"),
            method: id("method"),
            object: id("object"),
            receiver: id("receiver"),
            scope: id("scope"),
        }
    }
}

pub(super) fn field(node: TsNode<'_>, id: Option<FieldId>) -> Option<TsNode<'_>> {
    node.child_by_field_id(id?.get())
}

/// The callee of a call node: its simple name when it differs from the text as written, its
/// qualifier, and the callee text as written.
pub(super) fn callee(
    node: TsNode<'_>,
    src: &str,
    fields: &CalleeFields,
) -> Option<(Option<String>, Option<String>, String)> {
    let written: std::borrow::Cow<'_, str> = if let Some(f) = field(node, fields.function)
        .or_else(|| field(node, fields.constructor))
        .or_else(|| field(node, fields.type_))
    {
        text(f, src).into()
    } else if let Some(name) = field(node, fields.name).or_else(|| field(node, fields.method)) {
        let qualifier = field(node, fields.object)
            .or_else(|| field(node, fields.receiver))
            .or_else(|| field(node, fields.scope));
        match qualifier {
            Some(q) => format!("{}.{}", text(q, src), text(name, src)).into(),
            None => text(name, src).into(),
        }
    } else {
        let first = node.named_child(0)?;
        text(first, src).into()
    };
    // Most callees are a plain name (`helper`): it is its own simple name, nothing to strip.
    if is_plain_identifier(&written) {
        return (written.len() <= 200).then(|| (None, None, written.into_owned()));
    }
    let written = strip_generics(&written);
    let (name, qualifier) = split_path(&written);
    if name.is_empty() || name.len() > 200 {
        return None;
    }
    if written.len() > 200 {
        return Some((None, qualifier, name));
    }
    Some(((name != written).then_some(name), qualifier, written))
}
