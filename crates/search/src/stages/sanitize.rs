//! The input sanitizer: raw request JSON → [`SanitizedRequest`]. It rejects raw tuning parameters
//! and unknown fields, maps known aliases, deserializes into the tool's typed request
//! ([`crate::request`]), then trims, fills defaults and normalizes languages, globs, profile names
//! and template placeholders. Every automatic fix is reported in
//! `warnings`. [`resolve_scope`] then fills owner/name from the last READY namespace.
use edgerag_core::Language;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::SearchError;
use crate::filters::{compile_glob, SearchFilters};
use crate::ports::{namespace_id, NamespaceInfo};
use crate::profile::{normalize_profile_name, Profile, ProfileRegistry};
use crate::request::{
    wire_fields, ConversationInput, FiltersInput, GlobalSearchRequest, Message, ParentChildInput,
    RequestContract, SearchMode, SearchRequest, SimpleSearchRequest, Turn, TurnInput,
};

/// Longest `rawQuery` kept (characters); longer ones are cut with a warning.
pub const MAX_QUERY_CHARS: usize = 2000;
/// Conversation kept (characters, most recent first) before the transformers see it.
pub const MAX_CONVERSATION_CHARS: usize = 32_000;
pub const MAX_PATH_GLOBS: usize = 20;
pub const MAX_TAGS: usize = 20;
pub const MAX_TEMPLATE_CHARS: usize = 8000;

/// Placeholders an instructions template may use.
pub const PLACEHOLDERS: [&str; 5] = ["rawQuery", "repoOwner", "repoName", "locale", "augmentedPrompt"];

/// Request fields that tune retrieval: owned by profiles, rejected in requests. Compared after
/// lowercasing and removing `_` / `-`.
const TUNING_PARAMETERS: &[&str] = &[
    "topk",
    "topkperquery",
    "minscore",
    "minsimilarity",
    "threshold",
    "similaritythreshold",
    "rerank",
    "reranktopn",
    "multiquery",
    "queries",
    "maxqueries",
    "neighborlimit",
    "neighborradius",
    "neighborstrategy",
    "neighbor",
    "neighbors",
    "codeaware",
    "codeawareenabled",
    "codeawareheadmultiplier",
    "headmultiplier",
    "maxcontexttokens",
    "translateto",
    "usecompression",
    "generationlocale",
    "vectorweight",
    "keywordweight",
    "rrfk",
    "limit",
    "k",
    "temperature",
    "maxtokens",
];

/// A request after the sanitizer: every value valid, defaults filled, the profile found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SanitizedRequest<'p> {
    pub mode: SearchMode,
    /// Explicit repository (repo mode), before autofill.
    pub owner: Option<String>,
    pub name: Option<String>,
    /// Labels (global mode).
    pub display_owner: Option<String>,
    pub display_name: Option<String>,
    pub raw_query: String,
    /// The question as it was sent (lines kept, not cut at [`MAX_QUERY_CHARS`]; at most
    /// [`crate::evidence::MAX_EVIDENCE_CHARS`]): what [`crate::evidence`] reads.
    pub question: String,
    /// An existing profile name.
    pub profile: String,
    /// That profile's settings, from the registry the request was sanitized against.
    #[serde(skip)]
    pub settings: &'p Profile,
    pub conversation: Vec<Turn>,
    pub filters: SearchFilters,
    /// Already normalized (`{{query}}` → `{{rawQuery}}`, unknown placeholders removed).
    pub instructions_template: Option<String>,
    pub allow_empty_context: Option<bool>,
    pub debug: bool,
    pub parent_child: ParentChildInput,
    pub warnings: Vec<String>,
}

fn key_norm(k: &str) -> String {
    k.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// Sanitize the body of one of the four tools: reject tuning parameters, map aliases (warned),
/// deserialize into the tool's typed request, then normalize the typed values.
pub fn sanitize<'p>(
    mode: SearchMode,
    body: &Value,
    profiles: &'p ProfileRegistry,
) -> Result<SanitizedRequest<'p>, SearchError> {
    let obj =
        body.as_object().ok_or_else(|| SearchError::invalid("the request body must be a JSON object"))?;

    // Tuning parameters first: the most useful message when someone passes `topK`.
    let tuning: Vec<&str> = obj
        .keys()
        .filter(|k| TUNING_PARAMETERS.contains(&key_norm(k).as_str()))
        .map(String::as_str)
        .collect();
    if !tuning.is_empty() {
        return Err(SearchError::TuningParameterRejected {
            fields: tuning.join(", "),
            profiles: profiles.names().join(", "),
        });
    }

    let mut warnings = Vec::new();
    let (request, labels) = match mode {
        SearchMode::Repo => (parse::<SearchRequest>(mode, obj, &mut warnings)?, Labels::default()),
        SearchMode::Global => {
            let mut fields = checked::<GlobalSearchRequest>(mode, obj, &mut warnings)?;
            let mut label = |key: &str| fields.remove(key).and_then(|v| v.as_str().map(str::to_string));
            let labels = Labels { owner: label("displayRepoOwner"), name: label("displayRepoName") };
            (typed(Value::Object(fields))?, labels)
        }
        SearchMode::Simple | SearchMode::SimpleGlobal => {
            let fields = checked::<SimpleSearchRequest>(mode, obj, &mut warnings)?;
            (typed(Value::Object(fields))?, Labels::default())
        }
    };
    normalize(mode, request, labels, profiles, warnings)
}

/// The labels of a global search (`displayRepoOwner`, `displayRepoName`).
#[derive(Default)]
struct Labels {
    owner: Option<String>,
    name: Option<String>,
}

/// Every field name and alias of every tool: a key among them that the called tool does not take
/// is another tool's field (ignored with a warning), any other key is unknown (an error).
fn contract_names() -> Vec<&'static str> {
    fn names<T: RequestContract>(out: &mut Vec<&'static str>) {
        out.extend(wire_fields::<T>());
        out.extend(T::ALIASES.iter().map(|(alias, _)| *alias));
    }
    let mut out = Vec::new();
    names::<SearchRequest>(&mut out);
    names::<GlobalSearchRequest>(&mut out);
    names::<SimpleSearchRequest>(&mut out);
    out
}

/// The field an accepted key stands for: itself, or the field it is an alias of.
fn canonical_field<T: RequestContract>(key: &str) -> Option<&'static str> {
    wire_fields::<T>()
        .iter()
        .find(|f| **f == key)
        .or_else(|| T::ALIASES.iter().find(|(alias, _)| *alias == key).map(|(_, field)| field))
        .copied()
}

/// Map the keys of `obj` onto `T`'s fields (warning about each fix) and deserialize.
fn parse<T: RequestContract>(
    mode: SearchMode,
    obj: &Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<T, SearchError> {
    typed(Value::Object(checked::<T>(mode, obj, warnings)?))
}

/// The keys of `obj` mapped onto `T`'s fields (warning about each fix), once `T` reads them.
///
/// Every request is normalized as the one shape that holds every tool's fields, the
/// [`SearchRequest`] (a global search's labels apart): the fields of the other tools are a subset
/// of its own, of the same types (a test checks it), so checked fields read as it too.
fn checked<T: RequestContract>(
    mode: SearchMode,
    obj: &Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<Map<String, Value>, SearchError> {
    let mut fields = Map::new();
    for (key, value) in obj {
        if let Some(canonical) = canonical_field::<T>(key) {
            if key != canonical {
                if obj.contains_key(canonical) {
                    warnings.push(format!("`{key}` ignored: `{canonical}` is also given"));
                    continue;
                }
                warnings.push(format!("`{key}` was read as `{canonical}`"));
            }
            fields.insert(canonical.to_string(), value.clone());
        } else if mode == SearchMode::Global
            && matches!(key.as_str(), "owner" | "repoOwner" | "name" | "repoName")
        {
            let label =
                if key.to_lowercase().contains("owner") { "displayRepoOwner" } else { "displayRepoName" };
            if !obj.contains_key(label) {
                warnings
                    .push(format!("`{key}` was read as `{label}` (global search covers every repository)"));
                fields.insert(label.to_string(), value.clone());
            } else {
                warnings.push(format!("`{key}` ignored: global search covers every repository"));
            }
        } else if contract_names().contains(&key.as_str()) {
            warnings.push(format!("`{key}` is not accepted by {} and was ignored", mode.tool_name()));
        } else {
            return Err(SearchError::UnknownField {
                field: key.clone(),
                accepted: wire_fields::<T>().join(", "),
            });
        }
    }
    if matches!(fields.get("rawQuery"), None | Some(Value::Null)) {
        return Err(SearchError::EmptyQuery);
    }
    if let Some(filters) = fields.get_mut("filters").filter(|f| !f.is_null()) {
        *filters = map_filter_aliases(filters, warnings)?;
    }
    typed::<T>(Value::Object(fields.clone()))?;
    Ok(fields)
}

/// Deserialize with the path of the offending value in the message.
fn typed<T: DeserializeOwned>(value: Value) -> Result<T, SearchError> {
    serde_path_to_error::deserialize(value)
        .map_err(|e| SearchError::invalid(format!("`{}`: {}", e.path(), e.inner())))
}

/// `filters` with every key mapped onto a [`FiltersInput`] field (warned); two spellings of one
/// filter add up.
fn map_filter_aliases(value: &Value, warnings: &mut Vec<String>) -> Result<Value, SearchError> {
    let obj = value.as_object().ok_or_else(|| SearchError::invalid("`filters` must be an object"))?;
    let mut out = Map::new();
    for (key, v) in obj {
        let Some(canonical) = canonical_field::<FiltersInput>(key) else {
            return Err(SearchError::UnknownField {
                field: format!("filters.{key}"),
                accepted: wire_fields::<FiltersInput>().join(", "),
            });
        };
        if canonical != key {
            warnings.push(format!("filters.{key} was read as filters.{canonical}"));
        }
        let merged = match out.remove(canonical) {
            None => v.clone(),
            Some(earlier) => concat_lists(earlier, v.clone()),
        };
        out.insert(canonical.to_string(), merged);
    }
    Ok(Value::Object(out))
}

/// Two string-or-list values as one list; a value of another type is kept so that the typed
/// parse reports it.
fn concat_lists(a: Value, b: Value) -> Value {
    fn items(v: &Value) -> Option<Vec<Value>> {
        match v {
            Value::Null => Some(Vec::new()),
            Value::String(s) => Some(s.split(',').map(|p| Value::String(p.to_string())).collect()),
            Value::Array(items) => Some(items.clone()),
            _ => None,
        }
    }
    match (items(&a), items(&b)) {
        (Some(mut x), Some(y)) => {
            x.extend(y);
            Value::Array(x)
        }
        (None, _) => a,
        (_, None) => b,
    }
}

/// Trimmed; blank is absent.
fn non_blank(value: Option<String>) -> Option<String> {
    value.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

fn normalize(
    mode: SearchMode,
    fields: SearchRequest,
    labels: Labels,
    profiles: &ProfileRegistry,
    mut warnings: Vec<String>,
) -> Result<SanitizedRequest<'_>, SearchError> {
    let raw_query = sanitize_query(&fields.raw_query, &mut warnings)?;
    let question: String = fields.raw_query.chars().take(crate::evidence::MAX_EVIDENCE_CHARS).collect();

    let (mut owner, mut name) = (non_blank(fields.owner), non_blank(fields.name));
    if let Some(repo) = non_blank(fields.repo) {
        match repo.split_once('/') {
            Some((o, n)) if owner.is_none() && name.is_none() => {
                owner = Some(o.trim().to_string());
                name = Some(n.trim().to_string());
            }
            Some(_) => warnings.push("`repo` ignored: `owner`/`name` are also given".into()),
            None => return Err(SearchError::invalid("`repo` must look like `owner/name`")),
        }
    }
    for (field, value) in [("owner", &owner), ("name", &name)] {
        if let Some(v) = value {
            validate_repo_part(field, v)?;
        }
    }
    if owner.is_some() != name.is_some() {
        let (given, missing) = if owner.is_some() { ("owner", "name") } else { ("name", "owner") };
        return Err(SearchError::invalid(format!(
            "`{given}` is given without `{missing}`; give both or neither"
        )));
    }

    let (profile, settings) = match non_blank(fields.profile) {
        None => profiles.default_entry(),
        Some(p) => {
            let normalized = normalize_profile_name(&p);
            match profiles.entry(&normalized) {
                Some(found) => {
                    if normalized != p {
                        warnings.push(format!("profile `{p}` was read as `{normalized}`"));
                    }
                    found
                }
                None => {
                    let (default, settings) = profiles.default_entry();
                    warnings.push(format!(
                        "unknown profile `{p}`; the default profile `{default}` was used (available: {})",
                        profiles.names().join(", ")
                    ));
                    (default, settings)
                }
            }
        }
    };
    let profile = profile.to_string();

    let conversation = sanitize_conversation(fields.conversation_context, &mut warnings);
    let filters = fields.filters.map(|f| sanitize_filters(f, &mut warnings)).transpose()?.unwrap_or_default();
    let instructions_template = non_blank(fields.instructions_template).map(|mut t| {
        if t.chars().count() > MAX_TEMPLATE_CHARS {
            t = t.chars().take(MAX_TEMPLATE_CHARS).collect();
            warnings.push(format!("instructionsTemplate was cut to {MAX_TEMPLATE_CHARS} characters"));
        }
        normalize_template(&t, &mut warnings)
    });

    Ok(SanitizedRequest {
        mode,
        owner,
        name,
        display_owner: non_blank(labels.owner),
        display_name: non_blank(labels.name),
        raw_query,
        question,
        profile,
        settings,
        conversation,
        filters,
        instructions_template,
        allow_empty_context: fields.allow_empty_context,
        debug: fields.debug.unwrap_or(false),
        parent_child: fields.parent_child.unwrap_or_default(),
        warnings,
    })
}

fn sanitize_query(q: &str, warnings: &mut Vec<String>) -> Result<String, SearchError> {
    // Control characters (other than whitespace) carry nothing for retrieval.
    let cleaned: String = q.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let collapsed = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        return Err(SearchError::EmptyQuery);
    }
    if collapsed.chars().count() > MAX_QUERY_CHARS {
        warnings.push(format!(
            "rawQuery was cut to {MAX_QUERY_CHARS} characters (the files and code names it holds were read from all of it)"
        ));
        // The cut can land just after a space: the kept query never ends in one.
        let cut: String = collapsed.chars().take(MAX_QUERY_CHARS).collect();
        return Ok(cut.trim_end().to_string());
    }
    Ok(collapsed)
}

fn validate_repo_part(field: &str, value: &str) -> Result<(), SearchError> {
    let ok = value.len() <= 100
        && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && value != "."
        && value != "..";
    if ok {
        Ok(())
    } else {
        Err(SearchError::invalid(format!(
            "`{field}` must be a repository {field} (letters, digits, `-`, `_`, `.`; at most 100 characters)"
        )))
    }
}

fn sanitize_conversation(value: Option<ConversationInput>, warnings: &mut Vec<String>) -> Vec<Turn> {
    let mut turns = match value {
        None => return Vec::new(),
        Some(ConversationInput::Text(s)) => vec![Turn { role: "user".into(), content: s }],
        Some(ConversationInput::Turns(items)) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                TurnInput::Text(content) => {
                    let role = if i % 2 == 0 { "user" } else { "assistant" };
                    Turn { role: role.into(), content }
                }
                TurnInput::Message(Message { role, content }) => {
                    let role = role.as_deref().unwrap_or("user").trim().to_lowercase();
                    let role = match role.as_str() {
                        "user" | "human" => "user",
                        "assistant" | "ai" | "bot" | "model" => "assistant",
                        "system" => "system",
                        other => {
                            warnings
                                .push(format!("conversationContext[{i}]: role `{other}` was read as `user`"));
                            "user"
                        }
                    };
                    Turn { role: role.into(), content }
                }
            })
            .collect(),
    };
    for t in &mut turns {
        t.content = t.content.trim().to_string();
    }
    turns.retain(|t| !t.content.is_empty());
    // Keep the most recent turns within the character budget.
    let mut total = 0;
    let mut keep = turns.len();
    for (i, t) in turns.iter().enumerate().rev() {
        total += t.content.chars().count();
        if total > MAX_CONVERSATION_CHARS {
            break;
        }
        keep = i;
    }
    if keep > 0 {
        warnings.push(format!(
            "conversationContext: the {keep} oldest turn(s) were dropped to fit the history budget"
        ));
        turns.drain(..keep);
    }
    turns
}

/// A path glob is relative to the repository root: any run of leading `/` and `./` parts
/// (`/./docs`, `.//src`) is dropped, so the stored glob never starts with either.
fn strip_leading_root(raw: &str) -> &str {
    let mut rest = raw;
    loop {
        let next = rest.trim_start_matches('/');
        let next = next.strip_prefix("./").unwrap_or(next);
        if next.len() == rest.len() {
            return rest;
        }
        rest = next;
    }
}

fn sanitize_filters(input: FiltersInput, warnings: &mut Vec<String>) -> Result<SearchFilters, SearchError> {
    let mut filters = SearchFilters::default();
    for raw in input.paths.map(|p| p.items()).unwrap_or_default() {
        let cleaned = strip_leading_root(&raw).to_string();
        if cleaned != raw {
            warnings.push(format!("filters.paths: `{raw}` was read as `{cleaned}`"));
        }
        if cleaned.is_empty() {
            continue;
        }
        // A glob that cannot compile would match nothing: the caller must hear why.
        if let Err(e) = compile_glob(&cleaned) {
            return Err(SearchError::invalid(format!(
                "filters.paths: `{cleaned}` is not a valid glob: {}",
                e.kind()
            )));
        }
        if filters.paths.len() >= MAX_PATH_GLOBS {
            warnings.push(format!("filters.paths: only the first {MAX_PATH_GLOBS} globs are used"));
            break;
        }
        if !filters.paths.contains(&cleaned) {
            filters.paths.push(cleaned);
        }
    }
    for raw in input.languages.map(|l| l.items()).unwrap_or_default() {
        match Language::from_name(&raw) {
            Some(lang) => {
                if lang.as_str() != raw {
                    warnings.push(format!("filters.languages: `{raw}` was read as `{lang}`"));
                }
                if !filters.languages.contains(&lang) {
                    filters.languages.push(lang);
                }
            }
            None => warnings.push(format!("filters.languages: unknown language `{raw}` was ignored")),
        }
    }
    for tag in input.tags.map(|t| t.items()).unwrap_or_default() {
        if filters.tags.len() >= MAX_TAGS {
            warnings.push(format!("filters.tags: only the first {MAX_TAGS} tags are used"));
            break;
        }
        if !filters.tags.contains(&tag) {
            filters.tags.push(tag);
        }
    }
    Ok(filters)
}

/// Normalize an instructions template: `{{query}}` → `{{rawQuery}}`, placeholder names matched
/// case-insensitively, unknown placeholders removed — each fix warned.
pub fn normalize_template(template: &str, warnings: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let raw = &after[..close];
        let name = raw.trim();
        let canonical = if name.eq_ignore_ascii_case("query") {
            warnings.push("instructionsTemplate: `{{query}}` was replaced by `{{rawQuery}}`".into());
            Some("rawQuery")
        } else {
            PLACEHOLDERS.iter().copied().find(|p| p.eq_ignore_ascii_case(name))
        };
        match canonical {
            Some(p) => {
                if p != raw && !name.eq_ignore_ascii_case("query") {
                    warnings.push(format!("instructionsTemplate: `{{{{{raw}}}}}` was read as `{{{{{p}}}}}`"));
                }
                out.push_str("{{");
                out.push_str(p);
                out.push_str("}}");
            }
            None => warnings
                .push(format!("instructionsTemplate: unknown placeholder `{{{{{raw}}}}}` was removed")),
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    out
}

/// Where a sanitized request searches.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    /// Namespaces to search (empty when the named one is not searchable).
    pub namespaces: Vec<NamespaceInfo>,
    /// `{{repoOwner}}` / `{{repoName}}`: the repository, or the display labels in global mode.
    pub repo_owner: String,
    pub repo_name: String,
    /// The named repository exists but has no searchable index yet.
    pub not_ready: bool,
}

/// Decide which namespaces to search. Fills owner/name from the last READY namespace when
/// absent (warning), errors `INDEX_NOT_READY` when nothing is READY (except simple-global, which
/// answers with an empty result labelled `global/global`).
pub fn resolve_scope(
    request: &mut SanitizedRequest,
    catalog: &[NamespaceInfo],
) -> Result<Scope, SearchError> {
    let mut searchable: Vec<&NamespaceInfo> = catalog.iter().filter(|n| n.is_searchable()).collect();
    // Latest READY first; ties by id so the choice is deterministic.
    searchable.sort_by(|a, b| b.ready_at.cmp(&a.ready_at).then_with(|| a.id().cmp(&b.id())));
    let last = searchable.first().copied();
    if request.mode.is_global() {
        let (owner, name) = match (&request.display_owner, &request.display_name, last) {
            (Some(o), Some(n), _) => (o.clone(), n.clone()),
            (o, n, Some(l)) => {
                let owner = o.clone().unwrap_or_else(|| l.owner.clone());
                let name = n.clone().unwrap_or_else(|| l.name.clone());
                if request.mode == SearchMode::Global {
                    request.warnings.push(format!(
                        "displayRepoOwner/displayRepoName were filled from the last READY repository {owner}/{name}"
                    ));
                }
                (owner, name)
            }
            (o, n, None) => {
                (o.clone().unwrap_or_else(|| "global".into()), n.clone().unwrap_or_else(|| "global".into()))
            }
        };
        if searchable.is_empty() && request.mode == SearchMode::Global {
            return Err(SearchError::IndexNotReady {
                message:
                    "no repository index is READY yet; index one (POST /v1/repos or edgerag index) and retry"
                        .into(),
            });
        }
        return Ok(Scope {
            namespaces: searchable.into_iter().cloned().collect(),
            repo_owner: owner,
            repo_name: name,
            not_ready: false,
        });
    }
    match (&request.owner, &request.name) {
        (Some(owner), Some(name)) => {
            let id = namespace_id(owner, name);
            let found = catalog.iter().find(|n| {
                n.id() == id || (n.owner.eq_ignore_ascii_case(owner) && n.name.eq_ignore_ascii_case(name))
            });
            match found {
                Some(ns) if ns.is_searchable() => {
                    if ns.owner != *owner || ns.name != *name {
                        request
                            .warnings
                            .push(format!("repository {owner}/{name} was read as {}/{}", ns.owner, ns.name));
                    }
                    Ok(Scope {
                        namespaces: vec![ns.clone()],
                        repo_owner: ns.owner.clone(),
                        repo_name: ns.name.clone(),
                        not_ready: false,
                    })
                }
                _ => {
                    request.warnings.push(format!(
                        "repository {owner}/{name} has no READY index{}",
                        if found.is_some() { " yet" } else { "; index it first" }
                    ));
                    Ok(Scope {
                        namespaces: Vec::new(),
                        repo_owner: owner.clone(),
                        repo_name: name.clone(),
                        not_ready: true,
                    })
                }
            }
        }
        _ => match last {
            Some(ns) => {
                request.warnings.push(format!(
                    "repoOwner/repoName were filled automatically with {}/{} (the last READY repository)",
                    ns.owner, ns.name
                ));
                request.owner = Some(ns.owner.clone());
                request.name = Some(ns.name.clone());
                Ok(Scope {
                    namespaces: vec![ns.clone()],
                    repo_owner: ns.owner.clone(),
                    repo_name: ns.name.clone(),
                    not_ready: false,
                })
            }
            None => Err(SearchError::IndexNotReady {
                message:
                    "no repository index is READY yet, so owner/name cannot be filled; index a repository \
                          (POST /v1/repos or edgerag index), wait for READY, then retry"
                        .into(),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::ports::NamespaceStatus;
    use serde_json::json;

    fn run(mode: SearchMode, body: Value) -> Result<SanitizedRequest<'static>, SearchError> {
        static PROFILES: std::sync::LazyLock<ProfileRegistry> =
            std::sync::LazyLock::new(ProfileRegistry::default);
        sanitize(mode, &body, &PROFILES)
    }

    fn ok(body: Value) -> SanitizedRequest<'static> {
        run(SearchMode::Repo, body).unwrap()
    }

    /// Every request is normalized as a [`SearchRequest`]: the other tools' fields (a global
    /// search's labels apart) must be its fields, of the same types.
    #[test]
    fn every_tools_fields_are_the_repo_search_fields_but_the_global_labels() {
        let schema = |s: schemars::Schema| serde_json::to_value(s).unwrap();
        let repo = schema(schemars::schema_for!(SearchRequest));
        for (tool, labels) in [
            (
                schema(schemars::schema_for!(GlobalSearchRequest)),
                &["displayRepoOwner", "displayRepoName"][..],
            ),
            (schema(schemars::schema_for!(SimpleSearchRequest)), &[][..]),
        ] {
            for (field, spec) in tool["properties"].as_object().unwrap() {
                if labels.contains(&field.as_str()) {
                    continue;
                }
                // The same type: the same schema but for the description.
                let without_docs = |v: &Value| {
                    let mut v = v.clone();
                    v.as_object_mut().map(|o| o.remove("description"));
                    v
                };
                let theirs = &repo["properties"][field];
                assert!(!theirs.is_null(), "{field} is not a SearchRequest field");
                assert_eq!(without_docs(spec), without_docs(theirs), "{field}");
            }
        }
    }

    fn ns(owner: &str, name: &str, status: NamespaceStatus, ready_at: Option<&str>) -> NamespaceInfo {
        NamespaceInfo {
            owner: owner.into(),
            name: name.into(),
            status,
            ready_at: ready_at.map(String::from),
            chunk_count: 1,
        }
    }

    #[test]
    fn minimal_request_gets_defaults_and_no_warnings() {
        let r = ok(json!({"rawQuery": "  where is the retry   logic\n"}));
        assert_eq!(r.raw_query, "where is the retry logic");
        assert_eq!(r.profile, "balanced");
        assert!(r.filters.is_empty() && r.conversation.is_empty() && !r.debug);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn rejects_tuning_parameters_with_a_clear_code() {
        for field in
            ["topK", "top_k", "minScore", "neighborLimit", "multiQuery", "maxContextTokens", "rerankTopN"]
        {
            let e = run(SearchMode::Repo, json!({"rawQuery": "x", field: 5})).unwrap_err();
            assert_eq!(e.code(), "TUNING_PARAMETER_REJECTED", "{field}");
            assert_eq!(e.http_status(), 400);
            assert!(e.to_string().contains(field) && e.to_string().contains("balanced"), "{e}");
        }
        // Even in the simple tools.
        let e = run(SearchMode::Simple, json!({"rawQuery": "x", "topK": 3})).unwrap_err();
        assert_eq!(e.code(), "TUNING_PARAMETER_REJECTED");
    }

    #[test]
    fn rejects_unknown_fields_and_bad_types() {
        let e = run(SearchMode::Repo, json!({"rawQuery": "x", "colour": "red"})).unwrap_err();
        assert_eq!(e.code(), "UNKNOWN_FIELD");
        assert!(e.to_string().contains("colour"));
        let e = run(SearchMode::Repo, json!({"rawQuery": "x", "filters": {"size": 3}})).unwrap_err();
        assert_eq!(e.code(), "UNKNOWN_FIELD");
        assert_eq!(run(SearchMode::Repo, json!({"rawQuery": 3})).unwrap_err().code(), "INVALID_REQUEST");
        assert_eq!(run(SearchMode::Repo, json!([1])).unwrap_err().code(), "INVALID_REQUEST");
        assert_eq!(
            run(SearchMode::Repo, json!({"rawQuery": "x", "debug": "yes"})).unwrap_err().code(),
            "INVALID_REQUEST"
        );
        assert_eq!(
            run(SearchMode::Repo, json!({"rawQuery": "x", "owner": "a"})).unwrap_err().code(),
            "INVALID_REQUEST"
        );
        assert_eq!(
            run(SearchMode::Repo, json!({"rawQuery": "x", "owner": "../etc", "name": "b"}))
                .unwrap_err()
                .code(),
            "INVALID_REQUEST"
        );
        assert_eq!(
            run(SearchMode::Repo, json!({"rawQuery": "x", "repo": "nope"})).unwrap_err().code(),
            "INVALID_REQUEST"
        );
    }

    #[test]
    fn a_wrong_type_is_reported_with_its_path() {
        for (body, path) in [
            (json!({"rawQuery": 3}), "`rawQuery`"),
            (json!({"rawQuery": "x", "debug": "yes"}), "`debug`"),
            (json!({"rawQuery": "x", "filters": {"tags": ["a", 2]}}), "`filters.tags[1]`"),
            (json!({"rawQuery": "x", "history": ["a", {"role": "user"}]}), "`conversationContext[1]"),
        ] {
            let e = run(SearchMode::Repo, body.clone()).unwrap_err();
            assert_eq!(e.code(), "INVALID_REQUEST", "{body}");
            assert!(e.to_string().starts_with(path), "{body}: {e}");
        }
    }

    #[test]
    fn a_conversation_list_may_mix_texts_and_turns() {
        let r = ok(json!({"rawQuery": "q", "conversationContext": [
            "first question", {"role": "assistant", "content": "an answer"}, {"content": "follow-up"}
        ]}));
        let roles: Vec<&str> = r.conversation.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn a_filter_spelled_two_ways_adds_up() {
        let r = ok(json!({"rawQuery": "q", "filters": {"path": "a/*, b/*", "paths": ["c/*"], "tag": "x"}}));
        assert_eq!(r.filters.paths, ["a/*", "b/*", "c/*"]);
        assert_eq!(r.filters.tags, ["x"]);
        assert!(r.warnings.iter().any(|w| w == "filters.tag was read as filters.tags"), "{:?}", r.warnings);
    }

    #[test]
    fn unknown_field_lists_the_accepted_fields_of_the_tool() {
        let e = run(SearchMode::Repo, json!({"rawQuery": "x", "colour": "red"})).unwrap_err();
        assert_eq!(
            e,
            SearchError::UnknownField {
                field: "colour".into(),
                accepted: "owner, name, repo, rawQuery, profile, conversationContext, filters, \
                           instructionsTemplate, allowEmptyContext, debug, parentChild"
                    .into()
            }
        );
        let e = run(SearchMode::Repo, json!({"rawQuery": "x", "filters": {"size": 1}})).unwrap_err();
        assert_eq!(
            e,
            SearchError::UnknownField {
                field: "filters.size".into(),
                accepted: "paths, languages, tags".into()
            }
        );
    }

    #[test]
    fn empty_query_is_an_error() {
        for body in [
            json!({}),
            json!({"rawQuery": null}),
            json!({"rawQuery": " \n\t "}),
            json!({"rawQuery": "\u{0}"}),
        ] {
            assert_eq!(run(SearchMode::Repo, body).unwrap_err().code(), "EMPTY_QUERY");
        }
    }

    #[test]
    fn each_fix_is_warned() {
        // Aliases.
        let r = ok(json!({"query": "q", "repoOwner": "a", "repoName": "b", "history": "earlier"}));
        assert_eq!(
            (r.raw_query.as_str(), r.owner.as_deref(), r.name.as_deref()),
            ("q", Some("a"), Some("b"))
        );
        assert_eq!(r.conversation.len(), 1);
        assert_eq!(r.warnings.len(), 4, "{:?}", r.warnings);
        // An alias next to its canonical field is ignored.
        let r = ok(json!({"rawQuery": "q", "query": "other"}));
        assert_eq!(r.raw_query, "q");
        assert_eq!(r.warnings.len(), 1);
        // `repo: owner/name`.
        let r = ok(json!({"rawQuery": "q", "repo": "acme/shop"}));
        assert_eq!((r.owner.as_deref(), r.name.as_deref()), (Some("acme"), Some("shop")));
        // Profile spelling and unknown profile.
        let r = ok(json!({"rawQuery": "q", "profile": " Aggressive "}));
        assert_eq!(r.profile, "aggressive");
        assert_eq!(*r.settings, Profile::aggressive(), "the profile's settings travel with its name");
        assert_eq!(r.warnings.len(), 1);
        let r = ok(json!({"rawQuery": "q", "profile": "turbo"}));
        assert_eq!(r.profile, "balanced");
        assert_eq!(*r.settings, Profile::balanced());
        assert!(r.warnings[0].contains("unknown profile `turbo`"));
        // Long query.
        let r = ok(json!({"rawQuery": "x".repeat(MAX_QUERY_CHARS + 10)}));
        assert_eq!(r.raw_query.chars().count(), MAX_QUERY_CHARS);
        assert_eq!(r.warnings.len(), 1);
        // A cut that falls right after a space drops it.
        let words = format!("{} tail", "x".repeat(MAX_QUERY_CHARS - 1));
        let r = ok(json!({"rawQuery": words}));
        assert_eq!(r.raw_query, "x".repeat(MAX_QUERY_CHARS - 1));
    }

    #[test]
    fn filters_are_normalized() {
        let r = ok(json!({"rawQuery": "q", "filters": {
            "language": ["TS", "python", "klingon", "py"],
            "path": "./src/**/*.ts, /docs/*, /./lib/*, .//./bin/*",
            "tags": ["api", " api ", ""]
        }}));
        assert_eq!(r.filters.languages, [Language::Typescript, Language::Python]);
        assert_eq!(r.filters.paths, ["src/**/*.ts", "docs/*", "lib/*", "bin/*"]);
        assert_eq!(r.filters.tags, ["api"]);
        let w = r.warnings.join("\n");
        for expected in [
            "filters.language was read as filters.languages",
            "`TS` was read as `typescript`",
            "unknown language `klingon`",
            "`py` was read as `python`",
            "filters.path was read as filters.paths",
            "`./src/**/*.ts` was read as `src/**/*.ts`",
            "`/docs/*` was read as `docs/*`",
            "`/./lib/*` was read as `lib/*`",
            "`.//./bin/*` was read as `bin/*`",
        ] {
            assert!(w.contains(expected), "missing {expected:?} in\n{w}");
        }
        let e =
            run(SearchMode::Repo, json!({"rawQuery": "q", "filters": {"paths": ["src/[a"]}})).unwrap_err();
        assert_eq!(e.code(), "INVALID_REQUEST");
        assert!(e.to_string().contains("`src/[a` is not a valid glob: unclosed character class"), "{e}");
        assert!(run(SearchMode::Repo, json!({"rawQuery": "q", "filters": {"paths": ["[a-"]}})).is_err());
    }

    #[test]
    fn conversation_shapes() {
        let r = ok(json!({"rawQuery": "q", "conversationContext": ["first question", "an answer", "  "]}));
        assert_eq!(r.conversation.iter().map(|t| t.role.as_str()).collect::<Vec<_>>(), ["user", "assistant"]);
        let r = ok(
            json!({"rawQuery": "q", "conversationContext": [{"role": "Human", "content": "hi"}, {"role": "wizard", "content": "x"}]}),
        );
        assert_eq!(r.conversation[0].role, "user");
        assert!(r.warnings[0].contains("wizard"));
        let big = "y".repeat(MAX_CONVERSATION_CHARS - 5);
        let r = ok(json!({"rawQuery": "q", "conversationContext": ["old turn", "old answer", big]}));
        assert_eq!(r.conversation.len(), 1);
        assert!(r.warnings[0].contains("2 oldest"));
        assert_eq!(
            run(SearchMode::Repo, json!({"rawQuery": "q", "conversationContext": 3})).unwrap_err().code(),
            "INVALID_REQUEST"
        );
    }

    #[test]
    fn template_placeholders() {
        let mut w = Vec::new();
        let t = normalize_template(
            "Q: {{query}} in {{ repoOwner }}/{{REPONAME}} {{secret}} {{locale}} {{",
            &mut w,
        );
        assert_eq!(t, "Q: {{rawQuery}} in {{repoOwner}}/{{repoName}}  {{locale}} {{");
        assert_eq!(w.len(), 4, "{w:?}");
        let r = ok(json!({"rawQuery": "q", "instructionsTemplate": "Use {{augmentedPrompt}}"}));
        assert_eq!(r.instructions_template.as_deref(), Some("Use {{augmentedPrompt}}"));
        assert!(r.warnings.is_empty());
    }

    #[test]
    fn simple_and_global_take_their_own_fields() {
        let r = run(SearchMode::Simple, json!({"rawQuery": "q", "profile": "aggressive", "filters": {}}))
            .unwrap();
        assert_eq!(r.profile, "balanced");
        assert_eq!(r.warnings.len(), 2);
        let e = run(SearchMode::Simple, json!({"rawQuery": "q", "nope": 1})).unwrap_err();
        assert_eq!(e.code(), "UNKNOWN_FIELD");
        let r = run(SearchMode::Global, json!({"rawQuery": "q", "owner": "me"})).unwrap();
        assert_eq!(r.display_owner.as_deref(), Some("me"));
        assert_eq!(r.warnings.len(), 1);
    }

    #[test]
    fn scope_autofills_from_the_last_ready_namespace() {
        let catalog = [
            ns("a", "old", NamespaceStatus::Ready, Some("2024-01-01T00:00:00Z")),
            ns("b", "new", NamespaceStatus::Indexing, Some("2024-02-01T00:00:00Z")),
            ns("c", "never", NamespaceStatus::Indexing, None),
        ];
        let mut r = ok(json!({"rawQuery": "q"}));
        let scope = resolve_scope(&mut r, &catalog).unwrap();
        assert_eq!((scope.repo_owner.as_str(), scope.repo_name.as_str()), ("b", "new"));
        assert!(r.warnings[0].contains("filled automatically with b/new"));

        let mut r = ok(json!({"rawQuery": "q", "owner": "c", "name": "never"}));
        let scope = resolve_scope(&mut r, &catalog).unwrap();
        assert!(scope.not_ready && scope.namespaces.is_empty());

        let mut r = ok(json!({"rawQuery": "q", "owner": "A", "name": "OLD"}));
        let scope = resolve_scope(&mut r, &catalog).unwrap();
        assert_eq!(scope.namespaces[0].id(), "repo:a/old");

        let mut r = ok(json!({"rawQuery": "q"}));
        let e = resolve_scope(&mut r, &catalog[2..]).unwrap_err();
        assert_eq!(e.code(), "INDEX_NOT_READY");
    }

    #[test]
    fn global_scope_labels() {
        let catalog = [
            ns("a", "x", NamespaceStatus::Ready, Some("1")),
            ns("b", "y", NamespaceStatus::Ready, Some("2")),
        ];
        let mut r = run(SearchMode::Global, json!({"rawQuery": "q"})).unwrap();
        let scope = resolve_scope(&mut r, &catalog).unwrap();
        assert_eq!(scope.namespaces.len(), 2);
        assert_eq!((scope.repo_owner.as_str(), scope.repo_name.as_str()), ("b", "y"));
        let mut r = run(SearchMode::SimpleGlobal, json!({"rawQuery": "q"})).unwrap();
        let scope = resolve_scope(&mut r, &[]).unwrap();
        assert_eq!((scope.repo_owner.as_str(), scope.repo_name.as_str()), ("global", "global"));
        assert!(scope.namespaces.is_empty());
        let mut r = run(SearchMode::Global, json!({"rawQuery": "q"})).unwrap();
        assert_eq!(resolve_scope(&mut r, &[]).unwrap_err().code(), "INDEX_NOT_READY");
    }
}
