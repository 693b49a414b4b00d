//! The request contract of the four search tools: one typed definition per tool. The JSON
//! Schemas in `schemas/` are generated from these types and the search crate's `sanitize` deserializes the
//! body into them (after mapping the aliases listed here), so the schema, the accepted field
//! names and the parser cannot disagree.
use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Which tool is being called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SearchMode {
    /// `repo.rag_search` — `POST /v1/search`.
    Repo,
    /// `repo.rag_search_simple` — `POST /v1/search/simple`: only `rawQuery`, the last READY repo.
    Simple,
    /// `repo.rag_search_global` — `POST /v1/search/global`: every READY repo.
    Global,
    /// `repo.rag_search_simple_global` — `POST /v1/search/simple-global`.
    SimpleGlobal,
}

impl SearchMode {
    pub fn tool_name(self) -> &'static str {
        match self {
            SearchMode::Repo => "repo.rag_search",
            SearchMode::Simple => "repo.rag_search_simple",
            SearchMode::Global => "repo.rag_search_global",
            SearchMode::SimpleGlobal => "repo.rag_search_simple_global",
        }
    }

    pub fn is_global(self) -> bool {
        matches!(self, SearchMode::Global | SearchMode::SimpleGlobal)
    }

    pub fn is_simple(self) -> bool {
        matches!(self, SearchMode::Simple | SearchMode::SimpleGlobal)
    }
}

/// A string or a list of strings. A single string may hold several values separated by commas.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    /// The values, trimmed, blanks dropped (`"a, b"` → `[a, b]`).
    pub fn items(&self) -> Vec<String> {
        let trimmed = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty());
        match self {
            OneOrMany::One(s) => s.split(',').filter_map(trimmed).collect(),
            OneOrMany::Many(items) => items.iter().filter_map(|s| trimmed(s)).collect(),
        }
    }
}

// Hand-written rather than `#[serde(untagged)]` so a wrong type is reported with its path and
// what was expected (`filters.tags[1]: invalid type: integer, expected a string`).
impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OneOrManyVisitor;
        impl<'de> Visitor<'de> for OneOrManyVisitor {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany::One(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrMany, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<String>()? {
                    items.push(item);
                }
                Ok(OneOrMany::Many(items))
            }
        }
        deserializer.deserialize_any(OneOrManyVisitor)
    }
}

/// Result filters. Each accepts one string or a list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FiltersInput {
    /// Path globs (`src/**/*.ts`, `*.py`); `*` also crosses folders. Aliases: `path`, `pathGlob`,
    /// `glob`, `filePath`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<OneOrMany>,
    /// Languages by name or alias (`ts`, `py`, `golang`, `c#`, ...). Aliases: `language`, `lang`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub languages: Option<OneOrMany>,
    /// Tags attached at upload (any of them matches). Alias: `tag`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<OneOrMany>,
}

/// Two-stage retrieval over documents chunked into parents and children (and code parents):
/// overrides of the profile's `postProcessing.parentChild`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ParentChildInput {
    /// Size normalization of the parents' scores, `raw × sqrt(avgSize / size)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalize_scores: Option<bool>,
    /// Characters returned around the matched child of a larger parent (200..=8000; default
    /// from the profile, 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window_chars: Option<u32>,
}

/// One turn of the conversation before the current question, after the sanitizer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Turn {
    /// `user`, `assistant` or `system`.
    pub role: String,
    pub content: String,
}

/// A `{role, content}` turn as the caller writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    /// `user` (also `human`, the default), `assistant` (also `ai`, `bot`, `model`) or `system`;
    /// anything else is read as `user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub content: String,
}

/// One item of a conversation list: a plain text (roles alternate user / assistant by position)
/// or a `{role, content}`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum TurnInput {
    Text(String),
    Message(Message),
}

impl<'de> Deserialize<'de> for TurnInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TurnVisitor;
        impl<'de> Visitor<'de> for TurnVisitor {
            type Value = TurnInput;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or {role, content}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TurnInput, E> {
                Ok(TurnInput::Text(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TurnInput, A::Error> {
                Message::deserialize(de::value::MapAccessDeserializer::new(map)).map(TurnInput::Message)
            }
        }
        deserializer.deserialize_any(TurnVisitor)
    }
}

/// The conversation so far: a plain text, or a list (oldest first) of texts and / or
/// `{role, content}`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ConversationInput {
    Text(String),
    Turns(Vec<TurnInput>),
}

impl<'de> Deserialize<'de> for ConversationInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ConversationVisitor;
        impl<'de> Visitor<'de> for ConversationVisitor {
            type Value = ConversationInput;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ConversationInput, E> {
                Ok(ConversationInput::Text(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ConversationInput, A::Error> {
                let mut turns = Vec::new();
                while let Some(turn) = seq.next_element::<TurnInput>()? {
                    turns.push(turn);
                }
                Ok(ConversationInput::Turns(turns))
            }
        }
        deserializer.deserialize_any(ConversationVisitor)
    }
}

/// `repo.rag_search` / `POST /v1/search`. Tuning parameters (`topK`, `minScore`, ...) are not
/// accepted: pick a `profile`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchRequest {
    /// Repository owner; filled from the last READY repository when absent. Alias: `repoOwner`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Repository name; filled from the last READY repository when absent. Alias: `repoName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `owner/name` in one string (ignored when `owner` / `name` are given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The question, as the user asked it. Alias: `query`.
    pub raw_query: String,
    /// `conservative`, `balanced`, `aggressive`, `legacy` or a configured one; default from the
    /// server configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Earlier turns, for follow-up questions. Alias: `history`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_context: Option<ConversationInput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<FiltersInput>,
    /// Overrides the profile's template for `instructions` (placeholders `{{rawQuery}}`,
    /// `{{repoOwner}}`, `{{repoName}}`, `{{locale}}`, `{{augmentedPrompt}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_template: Option<String>,
    /// Overrides the profile: `false` makes "nothing found" an error (`CONTEXT_NOT_FOUND`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_empty_context: Option<bool>,
    /// Adds `debug` (plan, per-module timings) to the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<bool>,
    /// Parent/child retrieval options (size normalization, context window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_child: Option<ParentChildInput>,
}

/// `repo.rag_search_global` / `POST /v1/search/global`: every READY repository; the labels
/// replace owner/name in `instructions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GlobalSearchRequest {
    /// Label used as `{{repoOwner}}`. `owner` / `repoOwner` are read as this label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_repo_owner: Option<String>,
    /// Label used as `{{repoName}}`. `name` / `repoName` are read as this label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_repo_name: Option<String>,
    /// The question. Alias: `query`.
    pub raw_query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Alias: `history`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_context: Option<ConversationInput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<FiltersInput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_template: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_empty_context: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<bool>,
    /// Parent/child retrieval options (size normalization, context window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_child: Option<ParentChildInput>,
}

/// `repo.rag_search_simple` and `repo.rag_search_simple_global`: only the question.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimpleSearchRequest {
    /// The question. Alias: `query`.
    pub raw_query: String,
}

/// A request type and the other spellings it accepts for its fields. The accepted field names
/// themselves are read from the type's `Deserialize` impl ([`wire_fields`]).
pub trait RequestContract: DeserializeOwned {
    /// `(alias, field)`: read as `field`, with a warning.
    const ALIASES: &'static [(&'static str, &'static str)];
}

impl RequestContract for SearchRequest {
    const ALIASES: &'static [(&'static str, &'static str)] = &[
        ("repoOwner", "owner"),
        ("repoName", "name"),
        ("query", "rawQuery"),
        ("history", "conversationContext"),
    ];
}

impl RequestContract for GlobalSearchRequest {
    const ALIASES: &'static [(&'static str, &'static str)] =
        &[("query", "rawQuery"), ("history", "conversationContext")];
}

impl RequestContract for SimpleSearchRequest {
    const ALIASES: &'static [(&'static str, &'static str)] = &[("query", "rawQuery")];
}

impl RequestContract for FiltersInput {
    const ALIASES: &'static [(&'static str, &'static str)] = &[
        ("path", "paths"),
        ("pathGlob", "paths"),
        ("glob", "paths"),
        ("filePath", "paths"),
        ("language", "languages"),
        ("lang", "languages"),
        ("tag", "tags"),
    ];
}

/// The JSON names of a struct's fields, in declaration order, as its derived `Deserialize` sees
/// them (renames applied). Read by asking the impl to deserialize from a probe that records the
/// field list and stops.
pub fn wire_fields<T: DeserializeOwned>() -> &'static [&'static str] {
    #[derive(Debug)]
    struct Stop;
    impl fmt::Display for Stop {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("field probe")
        }
    }
    impl std::error::Error for Stop {}
    impl de::Error for Stop {
        fn custom<M: fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    struct Probe<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Probe<'_> {
        type Error = Stop;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            *self.0 = fields;
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut fields));
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema_properties<T: JsonSchema>() -> Vec<String> {
        let schema = schemars::schema_for!(T);
        let mut names: Vec<String> = schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map_or_else(Vec::new, |p| p.keys().cloned().collect());
        names.sort();
        names
    }

    fn check<T: RequestContract + JsonSchema>() {
        let fields = wire_fields::<T>();
        assert!(!fields.is_empty(), "{}", std::any::type_name::<T>());
        let mut sorted: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        sorted.sort();
        assert_eq!(sorted, schema_properties::<T>(), "{}", std::any::type_name::<T>());
        for (alias, field) in T::ALIASES {
            assert!(fields.contains(field), "alias {alias} points at unknown field {field}");
            assert!(!fields.contains(alias), "alias {alias} is also a field");
        }
    }

    #[test]
    fn parser_fields_schema_properties_and_aliases_agree() {
        check::<SearchRequest>();
        check::<GlobalSearchRequest>();
        check::<SimpleSearchRequest>();
        check::<FiltersInput>();
        assert_eq!(wire_fields::<SimpleSearchRequest>(), ["rawQuery"]);
        assert_eq!(wire_fields::<FiltersInput>(), ["paths", "languages", "tags"]);
    }
}
