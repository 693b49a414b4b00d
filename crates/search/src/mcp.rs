//! MCP (Model Context Protocol) over streamable HTTP, the protocol part: JSON-RPC 2.0 messages in,
//! replies out. The worker's `POST /mcp` feeds each message to [`step`] and runs the tool calls it
//! asks for (the search pipeline, the index status). Stateless: no session ids, no server-sent
//! events (`GET /mcp` is 405, as the transport allows).
//!
//! Two eras of the protocol are served on the same endpoint:
//! - **modern** ([`MODERN_VERSIONS`], revision 2026-07-28): no handshake; every request carries
//!   its version in `params._meta["io.modelcontextprotocol/protocolVersion"]` (and the
//!   `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` headers, checked by [`check_headers`]);
//!   `server/discover` lists the versions and capabilities; every result says
//!   `resultType: "complete"`; an unknown version is `UnsupportedProtocolVersion` (-32022).
//! - **legacy** ([`PROTOCOL_VERSIONS`], 2025-11-25 and earlier): the `initialize` handshake
//!   negotiates a version; requests without modern `_meta` are served this way.
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Value};

use edgerag_api::repo::{named_repo, RepoKeys};

use crate::repo_tools::{
    GrepRequest, ImpactRequest, LinesQuery, ListFilesQuery, MapRequest, OutlineQuery, ReferencesQuery,
    SymbolQuery,
};
use crate::request::SearchMode;

/// Handshake-era protocol versions this server speaks (newest first). A client whose `initialize`
/// asks for another one gets the newest, as those revisions say.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Per-request-metadata protocol versions this server speaks (newest first).
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];
/// The `_meta` key of a modern request's protocol version.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// How long a client may cache `tools/list` and `server/discover` (the tool set changes only
/// with a new deployment).
const LIST_TTL_MS: u64 = 3_600_000;

/// The header and body of a modern request disagree, or a required header is missing.
pub const HEADER_MISMATCH: i64 = -32020;
/// A modern request asked for a version this server does not speak.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// A tool of this server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Search(SearchMode),
    IndexStatus,
    FindSymbol,
    SymbolReferences,
    ReadFileRange,
    ListFiles,
    Outline,
    Grep,
    Map,
    Impact,
}

impl Tool {
    pub const ALL: [Tool; 13] = [
        Tool::Search(SearchMode::Repo),
        Tool::Search(SearchMode::Simple),
        Tool::Search(SearchMode::Global),
        Tool::Search(SearchMode::SimpleGlobal),
        Tool::IndexStatus,
        Tool::FindSymbol,
        Tool::SymbolReferences,
        Tool::ReadFileRange,
        Tool::ListFiles,
        Tool::Outline,
        Tool::Grep,
        Tool::Map,
        Tool::Impact,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Tool::Search(mode) => mode.tool_name(),
            Tool::IndexStatus => "repo.rag_index_status",
            Tool::FindSymbol => "repo.find_symbol",
            Tool::SymbolReferences => "repo.symbol_references",
            Tool::ReadFileRange => "repo.read_file_range",
            Tool::ListFiles => "repo.list_files",
            Tool::Outline => "repo.outline",
            Tool::Grep => "repo.grep",
            Tool::Map => "repo.map",
            Tool::Impact => "repo.impact",
        }
    }

    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// A short human-readable name (`title` in `tools/list`).
    pub fn title(self) -> &'static str {
        match self {
            Tool::Search(SearchMode::Repo) => "Search a repository",
            Tool::Search(SearchMode::Simple) => "Ask the latest repository",
            Tool::Search(SearchMode::Global) => "Search every repository",
            Tool::Search(SearchMode::SimpleGlobal) => "Ask every repository",
            Tool::IndexStatus => "Indexing status",
            Tool::FindSymbol => "Find a symbol",
            Tool::SymbolReferences => "Follow a symbol's references",
            Tool::ReadFileRange => "Read lines of a file",
            Tool::ListFiles => "List files",
            Tool::Outline => "Outline a file or folder",
            Tool::Grep => "Grep the repository",
            Tool::Map => "Map of the repository",
            Tool::Impact => "Impact of a change",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Tool::Search(SearchMode::Repo) => {
                "Search one indexed repository for code and docs relevant to a question (hybrid BM25 + \
                 vector retrieval, code-aware rerank, neighbour expansion). Pass only the question \
                 (rawQuery), optionally owner/name (default: the last READY repository), a profile \
                 (conservative | balanced | aggressive | legacy), conversationContext and filters \
                 (paths globs, languages, tags). Returns matches with path, line span and snippet, an \
                 augmentedPrompt, instructions, appliedModules and warnings."
            }
            Tool::Search(SearchMode::Simple) => {
                "Ask a question about the most recently indexed (READY) repository. Only rawQuery; \
                 returns the same response as repo.rag_search."
            }
            Tool::Search(SearchMode::Global) => {
                "Search every READY repository at once; each match's metadata names its repository. \
                 Same inputs as repo.rag_search, with displayRepoOwner/displayRepoName labels instead \
                 of owner/name."
            }
            Tool::Search(SearchMode::SimpleGlobal) => {
                "Ask a question across every READY repository. Only rawQuery; labels are global/global \
                 when nothing has been indexed yet."
            }
            Tool::IndexStatus => {
                "Indexing status of a repository: job status, progress %, ETA, attempts, last error, \
                 READY flag and recent jobs. Without repoOwner/repoName, lists every repository."
            }
            Tool::FindSymbol => {
                "Find the definitions of a symbol in an indexed repository by exact name or fully \
                 qualified name (repoOwner, repoName, name; optional kind, path glob, limit). Returns \
                 each definition's id, kind, fqn, path, line span, signature and doc (and the route \
                 and HTTP method of an ENDPOINT)."
            }
            Tool::SymbolReferences => {
                "Follow a symbol's edges in the code graph: its callers, callees, implementers, \
                 importers, referencers (symbols using it as a type) or referenced (the types it \
                 uses) (direction), one or two steps away (depth), paged by limit/offset. Takes \
                 the id from repo.find_symbol; external targets come back as dstName."
            }
            Tool::ReadFileRange => {
                "Read lines start..end (1-based, inclusive) of an indexed file exactly as indexed."
            }
            Tool::ListFiles => {
                "List the indexed files of a repository in path order, with language, size and line \
                 count: under a folder (prefix), matching a glob, of one language; paged by \
                 limit/offset (nextOffset), cut to maxTokens (truncated: true)."
            }
            Tool::Outline => {
                "Outline a file or a folder from the code graph without reading it: a file's \
                 symbols as a tree (kind, name, signature, line span, first doc line, id for \
                 repo.symbol_references), or a folder's files with their top-level symbols (paged \
                 by offset). Cut to maxTokens (truncated: true)."
            }
            Tool::Grep => {
                "Find lines matching a literal string (default) or a regular expression (regex: \
                 true, Rust regex syntax) in the indexed files, exactly as indexed: case \
                 sensitivity, path globs, languages, context lines; in path and line order, at \
                 most limit lines (limitReached, nextCursor to continue), cut to maxTokens."
            }
            Tool::Map => {
                "A map of the repository that fits maxTokens: its most important files (PageRank \
                 over calls, references, imports and inheritance) with their definitions as \
                 signatures, no bodies. Optionally put first the files about a question (query), \
                 matching path globs (paths) or defining symbols (symbols). Start here in an \
                 unfamiliar repository."
            }
            Tool::Impact => {
                "What a change touches: give changed paths with line ranges (changes) or a unified \
                 diff (diff). Returns the symbols changed, the symbols calling, referencing, \
                 importing, extending or implementing them up to 3 steps away (depth) with the \
                 edges that reach each, the HTTP endpoints reached and the test files involved; \
                 nearest first, paged by limit/offset, cut to maxTokens."
            }
        }
    }
}

fn index_status_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "repoOwner": { "type": "string", "description": "Repository owner (alias: owner)." },
            "repoName": { "type": "string", "description": "Repository name (alias: name)." }
        },
        "additionalProperties": false
    })
}

/// A navigation tool's input schema: `repoOwner`, `repoName`, the route's path parameters (`path`:
/// their schemas, all required) and the arguments type `T` (the route's query), generated from `T`
/// with its subschemas inlined (MCP clients want one plain object).
fn navigation_schema<T: JsonSchema>(path: Value, path_required: &[&str]) -> Value {
    let generated = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>();
    let generated = serde_json::to_value(generated).unwrap_or_default();
    let mut props = json!({
        "repoOwner": { "type": "string" },
        "repoName": { "type": "string" }
    });
    let mut required: Vec<Value> = vec!["repoOwner".into(), "repoName".into()];
    required.extend(path_required.iter().map(|r| Value::from(*r)));
    if let Some(all) = props.as_object_mut() {
        for own in [&path, &generated["properties"]] {
            if let Value::Object(own) = own {
                all.extend(own.clone());
            }
        }
    }
    required.extend(generated["required"].as_array().cloned().unwrap_or_default());
    json!({ "type": "object", "properties": props, "required": required, "additionalProperties": false })
}

/// `repoOwner` / `repoName` of a repository tool call and the remaining arguments (the tool's
/// own, left to its parser).
pub fn repo_tool_args(arguments: &Value) -> Result<(String, String, Value), String> {
    let mut rest = arguments.as_object().ok_or("arguments must be an object")?.clone();
    let keys = RepoKeys::TOOLS;
    let (owner, name) = named_repo(&rest, keys);
    let owner = owner.ok_or("give repoOwner (a non-empty string)")?;
    let name = name.ok_or("give repoName (a non-empty string)")?;
    for key in keys.owner.iter().chain(keys.name) {
        rest.remove(*key);
    }
    Ok((owner, name, Value::Object(rest)))
}

/// The `tools/list` result: each tool's name, title, description, annotations (every tool only
/// reads edgerag's own index: read-only, idempotent, closed world), input schema, and the output
/// schema `output_schema` gives for it (generated from its response type by the caller).
pub fn tools_list(output_schema: &dyn Fn(Tool) -> Value) -> Value {
    let tools: Vec<Value> = Tool::ALL
        .into_iter()
        .map(|t| {
            let schema = match t {
                Tool::Search(mode) => {
                    let mut s = serde_json::to_value(crate::schema::request_schema(mode)).unwrap_or_default();
                    if let Some(o) = s.as_object_mut() {
                        // MCP clients want a plain object schema.
                        o.remove("$schema");
                    }
                    s
                }
                Tool::IndexStatus => index_status_schema(),
                Tool::FindSymbol => navigation_schema::<SymbolQuery>(json!({}), &[]),
                Tool::SymbolReferences => navigation_schema::<ReferencesQuery>(
                    json!({ "id": { "type": "string", "description": "Symbol id from repo.find_symbol." } }),
                    &["id"],
                ),
                Tool::ReadFileRange => navigation_schema::<LinesQuery>(
                    json!({ "path": { "type": "string", "description": "Path of an indexed file." } }),
                    &["path"],
                ),
                Tool::ListFiles => navigation_schema::<ListFilesQuery>(json!({}), &[]),
                Tool::Outline => navigation_schema::<OutlineQuery>(json!({}), &[]),
                Tool::Grep => navigation_schema::<GrepRequest>(json!({}), &[]),
                Tool::Map => navigation_schema::<MapRequest>(json!({}), &[]),
                Tool::Impact => navigation_schema::<ImpactRequest>(json!({}), &[]),
            };
            json!({
                "name": t.name(),
                "title": t.title(),
                "description": t.description(),
                "inputSchema": schema,
                "outputSchema": output_schema(t),
                "annotations": {
                    "title": t.title(),
                    "readOnlyHint": true,
                    "destructiveHint": false,
                    "idempotentHint": true,
                    "openWorldHint": false
                }
            })
        })
        .collect();
    json!({ "tools": tools })
}

/// What to do with one JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Send this reply.
    Reply(Value),
    /// A notification or a response from the client: nothing to send.
    NoReply,
    /// Answer with [`tools_list`] under `id` (wrapped by [`reply_for`]).
    ListTools { id: Value, modern: bool },
    /// Run a tool, then answer with [`tool_result`] / [`tool_error`] under `id` (wrapped by
    /// [`reply_for`]).
    Call { id: Value, tool: Tool, arguments: Value, modern: bool },
}

/// The modern protocol version a request names in its `_meta`, if any.
pub fn modern_version(message: &Value) -> Option<&str> {
    message.get("params")?.get("_meta")?.get(META_VERSION)?.as_str()
}

/// The reply to `tools/list` (modern replies also say how long they may be cached).
pub fn list_reply(id: &Value, modern: bool, output_schema: &dyn Fn(Tool) -> Value) -> Value {
    let mut list = tools_list(output_schema);
    if modern {
        list["ttlMs"] = json!(LIST_TTL_MS);
        list["cacheScope"] = json!("public");
    }
    reply_for(id, list, modern)
}

/// A result for a request: modern results say `resultType: "complete"` and name the server.
pub fn reply_for(id: &Value, mut result: Value, modern: bool) -> Value {
    if modern {
        if let Some(o) = result.as_object_mut() {
            o.insert("resultType".into(), json!("complete"));
            let meta = o.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert("io.modelcontextprotocol/serverInfo".into(), server_info());
            }
        }
    }
    rpc_result(id, result)
}

fn server_info() -> Value {
    json!({ "name": "edgerag", "version": env!("CARGO_PKG_VERSION") })
}

const INSTRUCTIONS: &str = "Use repo.rag_search (or repo.rag_search_simple) to fetch code and docs relevant \
     to a question before answering; cite the returned paths and line spans. repo.grep finds exact \
     strings, repo.outline and repo.list_files show a file's or folder's structure without reading it. \
     repo.rag_index_status tells whether a repository is READY.";

/// The HTTP status of a reply to one request: modern-era protocol errors are `400`, an unknown
/// method of a modern request `404` (so a dual-era client tells us from a legacy server).
pub fn http_status(reply: &Value, modern: bool) -> u16 {
    match reply["error"]["code"].as_i64() {
        Some(HEADER_MISMATCH | UNSUPPORTED_PROTOCOL_VERSION) => 400,
        Some(METHOD_NOT_FOUND) if modern => 404,
        _ => 200,
    }
}

/// A modern request's transport headers against its body (`header(name)` reads a request header,
/// names case-insensitive): `MCP-Protocol-Version` must equal the `_meta` version, `Mcp-Method`
/// the method, and `Mcp-Name` the tool name of a `tools/call` (decoded first when sent as
/// `=?base64?…?=`, [`decode_header_value`]). The `HeaderMismatch` error reply
/// otherwise. Legacy requests (no modern `_meta`) are not checked.
pub fn check_headers(message: &Value, header: &dyn Fn(&str) -> Option<String>) -> Result<(), Value> {
    let Some(version) = modern_version(message) else { return Ok(()) };
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or("");
    let mut wanted = vec![("MCP-Protocol-Version", version), ("Mcp-Method", method)];
    if method == "tools/call" {
        wanted.push(("Mcp-Name", message["params"]["name"].as_str().unwrap_or("")));
    }
    for (name, body) in wanted {
        let value = match header(name) {
            Some(v) if name == "Mcp-Name" => match decode_header_value(&v) {
                Ok(decoded) => Some(decoded),
                Err(e) => {
                    return Err(rpc_error(
                        &id,
                        HEADER_MISMATCH,
                        format!("Header mismatch: {name} header {e}"),
                    ))
                }
            },
            Some(v) => Some(v.trim().to_string()),
            None => None,
        };
        match value {
            None => {
                return Err(rpc_error(
                    &id,
                    HEADER_MISMATCH,
                    format!("Header mismatch: the {name} header is missing"),
                ))
            }
            Some(value) if value != body => {
                return Err(rpc_error(
                    &id,
                    HEADER_MISMATCH,
                    format!(
                        "Header mismatch: {name} header value '{value}' does not match body value '{body}'"
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Opening and closing markers of a header value sent Base64-encoded (2026-07-28: a value that is
/// not printable ASCII, has leading or trailing whitespace, or itself looks like this form).
const BASE64_PREFIX: &str = "=?base64?";
const BASE64_SUFFIX: &str = "?=";

/// A header value as the body carries it: `=?base64?{standard Base64 of the UTF-8 bytes}?=`
/// decoded (the markers are lowercase, exactly), any other value as sent, surrounding whitespace
/// trimmed. A value in the encoded form whose payload is not Base64 of UTF-8 is an error.
pub fn decode_header_value(raw: &str) -> Result<String, String> {
    use base64::Engine as _;
    let value = raw.trim();
    let Some(payload) = value.strip_prefix(BASE64_PREFIX).and_then(|v| v.strip_suffix(BASE64_SUFFIX)) else {
        return Ok(value.to_string());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(|e| format!("value '{value}' is not valid Base64: {e}"))?;
    String::from_utf8(bytes).map_err(|_| format!("value '{value}' does not decode to UTF-8"))
}

pub fn rpc_result(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

pub fn rpc_error(id: &Value, code: i64, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

/// A successful tool result: the JSON as text (for any client) and as `structuredContent`.
pub fn tool_result(structured: &Value) -> Value {
    json!({
        "content": [{ "type": "text", "text": structured.to_string() }],
        "structuredContent": structured,
        "isError": false
    })
}

/// A failed tool call (reported inside the result, so the model sees it): the stable error code
/// and message, like the HTTP API's error body.
pub fn tool_error(code: &str, message: &str) -> Value {
    let body = json!({ "error": { "code": code, "message": message } });
    json!({ "content": [{ "type": "text", "text": body.to_string() }], "structuredContent": body, "isError": true })
}

/// Decide what one message means.
pub fn step(message: &Value) -> Step {
    let Some(obj) = message.as_object() else {
        return Step::Reply(rpc_error(&Value::Null, INVALID_REQUEST, "a JSON-RPC message must be an object"));
    };
    let id = obj.get("id").cloned();
    let method = obj.get("method").and_then(Value::as_str);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        let id = id.filter(|i| i.is_string() || i.is_number()).unwrap_or(Value::Null);
        return Step::Reply(rpc_error(&id, INVALID_REQUEST, "`jsonrpc` must be \"2.0\""));
    }
    let Some(method) = method else {
        // A client's response (to something we never sent) needs no answer; anything else that
        // is neither a request nor a notification is an invalid request, said out loud.
        return match (id, obj.contains_key("result") || obj.contains_key("error")) {
            (_, true) => Step::NoReply,
            (Some(id), false) if id.is_string() || id.is_number() => {
                Step::Reply(rpc_error(&id, INVALID_REQUEST, "missing `method`"))
            }
            _ => Step::Reply(rpc_error(
                &Value::Null,
                INVALID_REQUEST,
                "neither a request nor a notification: missing `method`",
            )),
        };
    };
    let Some(id) = id else { return Step::NoReply }; // notifications (initialized, cancelled, ...)
    if !(id.is_string() || id.is_number()) {
        return Step::Reply(rpc_error(&Value::Null, INVALID_REQUEST, "`id` must be a string or a number"));
    }
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    let modern = match modern_version(message) {
        Some(v) if MODERN_VERSIONS.contains(&v) => true,
        // A request in the modern shape asking for a version we do not serve: name the ones we do.
        Some(v) if method != "initialize" => {
            let mut supported: Vec<&str> = MODERN_VERSIONS.to_vec();
            supported.extend(PROTOCOL_VERSIONS);
            return Step::Reply(json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": UNSUPPORTED_PROTOCOL_VERSION,
                    "message": "Unsupported protocol version",
                    "data": { "supported": supported, "requested": v }
                }
            }));
        }
        _ => false,
    };
    match method {
        "server/discover" => Step::Reply(reply_for(
            &id,
            json!({
                "supportedVersions": MODERN_VERSIONS,
                "capabilities": { "tools": {} },
                "instructions": INSTRUCTIONS,
                "ttlMs": LIST_TTL_MS,
                "cacheScope": "public"
            }),
            true,
        )),
        "initialize" => {
            let asked = params["protocolVersion"].as_str().unwrap_or("");
            let version =
                PROTOCOL_VERSIONS.iter().find(|v| **v == asked).copied().unwrap_or(PROTOCOL_VERSIONS[0]);
            Step::Reply(rpc_result(
                &id,
                json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": { "listChanged": false } },
                    "serverInfo": server_info(),
                    "instructions": INSTRUCTIONS
                }),
            ))
        }
        // Removed by the modern revision; kept for handshake-era clients.
        "ping" if !modern => Step::Reply(rpc_result(&id, json!({}))),
        "tools/list" => Step::ListTools { id, modern },
        "tools/call" => {
            let Some(name) = params["name"].as_str() else {
                return Step::Reply(rpc_error(&id, INVALID_PARAMS, "tools/call needs params.name"));
            };
            let Some(tool) = Tool::from_name(name) else {
                return Step::Reply(rpc_error(&id, INVALID_PARAMS, format!("unknown tool `{name}`")));
            };
            let arguments = match params.get("arguments") {
                None | Some(Value::Null) => json!({}),
                Some(a @ Value::Object(_)) => a.clone(),
                Some(_) => {
                    return Step::Reply(rpc_error(&id, INVALID_PARAMS, "params.arguments must be an object"))
                }
            };
            Step::Call { id, tool, arguments, modern }
        }
        "resources/list" if !modern => Step::Reply(rpc_result(&id, json!({ "resources": [] }))),
        "prompts/list" if !modern => Step::Reply(rpc_result(&id, json!({ "prompts": [] }))),
        other => Step::Reply(rpc_error(&id, METHOD_NOT_FOUND, format!("method `{other}` is not supported"))),
    }
}

/// `repoOwner`/`repoName` (or `owner`/`name`) of a `repo.rag_index_status` call; `Ok(None)` lists
/// every repository.
pub fn index_status_args(arguments: &Value) -> Result<Option<(String, String)>, String> {
    let obj = arguments.as_object().ok_or("arguments must be an object")?;
    for key in obj.keys() {
        if !matches!(key.as_str(), "repoOwner" | "repoName" | "owner" | "name") {
            return Err(format!("unknown argument `{key}` (accepted: repoOwner, repoName)"));
        }
    }
    match named_repo(obj, RepoKeys::STATUS) {
        (Some(o), Some(n)) => Ok(Some((o, n))),
        (None, None) => Ok(None),
        _ => Err("give both repoOwner and repoName, or neither to list every repository".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_negotiates_the_version() {
        let Step::Reply(r) = step(
            &json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}),
        ) else {
            panic!("expected a reply")
        };
        assert_eq!(r["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(r["result"]["serverInfo"]["name"], "edgerag");
        let Step::Reply(r) = step(
            &json!({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}}),
        ) else {
            panic!("expected a reply")
        };
        assert_eq!(r["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
        assert_eq!(r["id"], "a");
    }

    #[test]
    fn lists_every_tool_with_an_object_schema() {
        let list = tools_list(&|_| json!({"type": "object"}));
        let tools = list["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "repo.rag_search",
                "repo.rag_search_simple",
                "repo.rag_search_global",
                "repo.rag_search_simple_global",
                "repo.rag_index_status",
                "repo.find_symbol",
                "repo.symbol_references",
                "repo.read_file_range",
                "repo.list_files",
                "repo.outline",
                "repo.grep",
                "repo.map",
                "repo.impact"
            ]
        );
        for t in tools {
            assert_eq!(t["inputSchema"]["type"], "object", "{}", t["name"]);
            assert!(t["inputSchema"].get("$schema").is_none());
            assert!(t["title"].as_str().is_some_and(|s| !s.is_empty()), "{}", t["name"]);
            assert_eq!(t["outputSchema"]["type"], "object", "{}", t["name"]);
            let a = &t["annotations"];
            assert_eq!(
                (&a["readOnlyHint"], &a["idempotentHint"], &a["openWorldHint"]),
                (&json!(true), &json!(true), &json!(false))
            );
        }
        assert!(tools[0]["inputSchema"]["properties"].get("rawQuery").is_some());
        assert_eq!(tools[0]["inputSchema"]["required"], json!(["rawQuery"]));
    }

    #[test]
    fn navigation_tool_schemas_come_from_the_argument_types() {
        let list = tools_list(&|_| json!({"type": "object"}));
        let schema = |name: &str| {
            list["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).unwrap()["inputSchema"]
                .clone()
        };
        let find = schema("repo.find_symbol");
        assert_eq!(find["required"], json!(["repoOwner", "repoName", "name"]));
        assert_eq!(find["properties"]["limit"]["maximum"], 200);
        assert!(find["properties"]["kind"].is_object());
        let refs = schema("repo.symbol_references");
        assert_eq!(refs["required"], json!(["repoOwner", "repoName", "id"]));
        // The enum is inlined (no `$ref` a client would have to resolve) and lists every direction
        // the type accepts.
        let text = refs.to_string();
        assert!(!text.contains("$ref"), "{text}");
        for d in ["callers", "callees", "implementers", "importers", "referencers", "referenced"] {
            assert!(text.contains(&format!("\"{d}\"")), "{d} missing from {text}");
            let parsed: ReferencesQuery = serde_json::from_value(json!({ "direction": d })).unwrap();
            assert!(parsed.direction.is_some());
        }
        let range = schema("repo.read_file_range");
        assert_eq!(range["required"], json!(["repoOwner", "repoName", "path", "start", "end"]));
        assert_eq!(range["properties"]["start"]["minimum"], 1);
        for s in [find, refs, range] {
            assert_eq!(s["additionalProperties"], false);
        }
    }

    #[test]
    fn calls_notifications_and_errors() {
        assert_eq!(
            step(
                &json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"repo.rag_search_simple","arguments":{"rawQuery":"x"}}})
            ),
            Step::Call {
                id: json!(7),
                tool: Tool::Search(SearchMode::Simple),
                arguments: json!({"rawQuery":"x"}),
                modern: false
            }
        );
        assert_eq!(step(&json!({"jsonrpc":"2.0","method":"notifications/initialized"})), Step::NoReply);
        assert_eq!(step(&json!({"jsonrpc":"2.0","id":3,"result":{}})), Step::NoReply);
        let code = |m: Value| match step(&m) {
            Step::Reply(r) => r["error"]["code"].as_i64(),
            _ => None,
        };
        assert_eq!(
            code(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}})),
            Some(INVALID_PARAMS)
        );
        assert_eq!(
            code(
                json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"repo.rag_search","arguments":[1]}})
            ),
            Some(INVALID_PARAMS)
        );
        assert_eq!(
            code(json!({"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"})),
            Some(METHOD_NOT_FOUND)
        );
        assert_eq!(code(json!({"jsonrpc":"1.0","id":1,"method":"ping"})), Some(INVALID_REQUEST));
        assert_eq!(code(json!({"jsonrpc":"2.0","id":{"x":1},"method":"ping"})), Some(INVALID_REQUEST));
        assert_eq!(code(json!([1])), Some(INVALID_REQUEST));
        assert_eq!(code(json!({"jsonrpc":"2.0","id":1,"method":"ping"})), None);
    }

    #[test]
    fn a_message_that_is_neither_request_nor_notification_is_an_invalid_request() {
        let code = |m: Value| match step(&m) {
            Step::Reply(r) => (r["error"]["code"].as_i64(), r["id"].clone()),
            Step::NoReply => (None, Value::Null),
            Step::Call { .. } | Step::ListTools { .. } => (Some(0), Value::Null),
        };
        assert_eq!(code(json!({"jsonrpc":"2.0"})), (Some(INVALID_REQUEST), Value::Null));
        assert_eq!(code(json!({"jsonrpc":"2.0","params":{}})), (Some(INVALID_REQUEST), Value::Null));
        assert_eq!(code(json!({})), (Some(INVALID_REQUEST), Value::Null));
        assert_eq!(code(json!({"jsonrpc":"1.0","method":"ping"})), (Some(INVALID_REQUEST), Value::Null));
        assert_eq!(code(json!({"jsonrpc":"2.0","id":[1]})), (Some(INVALID_REQUEST), Value::Null));
        assert_eq!(code(json!({"jsonrpc":"2.0","id":5})), (Some(INVALID_REQUEST), json!(5)));
        // A client's response still gets no answer.
        assert_eq!(
            code(json!({"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"x"}})),
            (None, Value::Null)
        );
    }

    #[test]
    fn results_and_status_args() {
        let r = tool_result(&json!({"a": 1}));
        assert_eq!(r["content"][0]["text"], "{\"a\":1}");
        assert_eq!(r["isError"], false);
        let e = tool_error("INDEX_NOT_READY", "wait");
        assert_eq!(e["isError"], true);
        assert_eq!(e["structuredContent"]["error"]["code"], "INDEX_NOT_READY");
        assert_eq!(
            index_status_args(&json!({"repoOwner":"a","name":"b"})),
            Ok(Some(("a".into(), "b".into())))
        );
        assert_eq!(index_status_args(&json!({})), Ok(None));
        assert!(index_status_args(&json!({"repoOwner":"a"})).is_err());
        assert!(index_status_args(&json!({"x":1})).is_err());
    }

    #[test]
    fn repository_tools_take_the_repository_apart_from_their_own_arguments() {
        let (owner, name, rest) =
            repo_tool_args(&json!({"repoOwner":"acme","repoName":"app","name":"slugify"})).unwrap();
        assert_eq!((owner.as_str(), name.as_str()), ("acme", "app"));
        assert_eq!(rest, json!({"name":"slugify"}));
        assert!(repo_tool_args(&json!({"repoOwner":"acme","name":"slugify"})).is_err());
    }

    fn modern(id: Value, method: &str, params: Value) -> Value {
        let mut params = params;
        params["_meta"] = json!({
            META_VERSION: "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    #[test]
    fn server_discover_lists_the_modern_versions_and_capabilities() {
        let Step::Reply(r) = step(&modern(json!("d"), "server/discover", json!({}))) else {
            panic!("a reply")
        };
        let result = &r["result"];
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
        assert!(result["capabilities"]["tools"].is_object());
        assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "edgerag");
        assert_eq!(result["cacheScope"], "public");
        assert!(result["ttlMs"].as_u64().is_some());
    }

    #[test]
    fn a_modern_request_for_an_unknown_version_names_the_supported_ones() {
        let mut m = modern(json!(1), "tools/list", json!({}));
        m["params"]["_meta"][META_VERSION] = json!("1900-01-01");
        let Step::Reply(r) = step(&m) else { panic!("a reply") };
        assert_eq!(r["error"]["code"], UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(r["error"]["data"]["requested"], "1900-01-01");
        assert_eq!(r["error"]["data"]["supported"][0], "2026-07-28");
        assert!(r["error"]["data"]["supported"].as_array().unwrap().contains(&json!("2025-11-25")));
        assert_eq!(http_status(&r, true), 400);
    }

    #[test]
    fn modern_requests_are_served_without_a_handshake_and_results_say_complete() {
        assert_eq!(
            step(&modern(json!(2), "tools/list", json!({}))),
            Step::ListTools { id: json!(2), modern: true }
        );
        let list = list_reply(&json!(2), true, &|_| json!({"type": "object"}));
        assert_eq!(list["result"]["resultType"], "complete");
        assert_eq!(list["result"]["cacheScope"], "public");
        let legacy = list_reply(&json!(2), false, &|_| json!({"type": "object"}));
        assert!(legacy["result"].get("resultType").is_none());
        let call = step(&modern(json!(3), "tools/call", json!({"name": "repo.outline", "arguments": {}})));
        assert!(matches!(call, Step::Call { tool: Tool::Outline, modern: true, .. }), "{call:?}");
        // `ping` is gone in the modern revision: an unknown method, 404 on HTTP.
        let Step::Reply(r) = step(&modern(json!(4), "ping", json!({}))) else { panic!("a reply") };
        assert_eq!((r["error"]["code"].as_i64(), http_status(&r, true)), (Some(METHOD_NOT_FOUND), 404));
        assert_eq!(http_status(&r, false), 200);
        // A handshake-era client still negotiates the newest legacy version.
        let Step::Reply(r) = step(
            &json!({"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}),
        ) else {
            panic!("a reply")
        };
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    }

    #[test]
    fn modern_headers_must_match_the_body() {
        let call = modern(json!(1), "tools/call", json!({"name": "repo.grep"}));
        let headers = |version: &'static str, method: &'static str, name: Option<&'static str>| {
            move |h: &str| match h {
                "MCP-Protocol-Version" => Some(version.to_string()),
                "Mcp-Method" => Some(method.to_string()),
                "Mcp-Name" => name.map(str::to_string),
                _ => None,
            }
        };
        assert_eq!(check_headers(&call, &headers("2026-07-28", "tools/call", Some("repo.grep"))), Ok(()));
        for bad in [
            headers("2025-11-25", "tools/call", Some("repo.grep")),
            headers("2026-07-28", "tools/list", Some("repo.grep")),
            headers("2026-07-28", "tools/call", Some("repo.outline")),
            headers("2026-07-28", "tools/call", None),
        ] {
            let err = check_headers(&call, &bad).unwrap_err();
            assert_eq!(err["error"]["code"], HEADER_MISMATCH);
            assert_eq!(http_status(&err, true), 400);
        }
        // 2026-07-28: a value may arrive Base64-encoded, and is decoded before it is compared.
        let encoded = |name: &'static str| headers("2026-07-28", "tools/call", Some(name));
        assert_eq!(check_headers(&call, &encoded("=?base64?cmVwby5ncmVw?=")), Ok(()));
        for bad in [
            "=?base64?cmVwby5vdXRsaW5l?=",
            "=?base64?not base64!?=",
            "=?base64?/w==?=",
            "=?BASE64?cmVwby5ncmVw?=",
        ] {
            let err = check_headers(&call, &encoded(bad)).unwrap_err();
            assert_eq!(err["error"]["code"], HEADER_MISMATCH, "{bad}");
        }
        // A tool name that is not header-safe is only ever compared decoded.
        let odd = modern(json!(2), "tools/call", json!({"name": " café ="}));
        let sent = |h: &str| match h {
            "MCP-Protocol-Version" => Some("2026-07-28".to_string()),
            "Mcp-Method" => Some("tools/call".to_string()),
            "Mcp-Name" => Some("=?base64?IGNhZsOpID0=?=".to_string()),
            _ => None,
        };
        assert_eq!(check_headers(&odd, &sent), Ok(()));
        assert_eq!(decode_header_value("  repo.grep "), Ok("repo.grep".to_string()));
        assert_eq!(
            decode_header_value("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
            Ok("=?base64?literal?=".to_string())
        );
        // Handshake-era requests carry no such headers and are not checked.
        let legacy = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
        assert_eq!(check_headers(&legacy, &|_| None), Ok(()));
    }
}
