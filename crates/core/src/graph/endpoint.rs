//! HTTP handlers: routes declared by decorators / annotations / attributes (Flask, FastAPI,
//! Spring, actix, ASP.NET, NestJS), registered by calls (Express, Fastify, Gin, net/http, axum,
//! Django `path`, Laravel `Route::get`, Sinatra, Ktor), or implied by a file's place (Next.js
//! `app/**/route.ts` exporting `GET`, `POST`, …).
use tree_sitter::Node;

use super::lang::field;
use crate::chunk::code::grammar::text;

const VERBS: &[&str] = &["get", "post", "put", "delete", "patch", "head", "options"];

fn verb(lower: &str) -> Option<String> {
    VERBS.contains(&lower).then(|| lower.to_ascii_uppercase())
}

/// The first string literal in `s` (quotes `'`, `"` or `` ` ``).
fn first_string(s: &str) -> Option<String> {
    let start = s.find(['"', '\'', '`'])?;
    let quote = s[start..].chars().next()?;
    let rest = &s[start + 1..];
    let end = rest.find(quote)?;
    Some(rest[..end].to_string())
}

/// `(method, route)` declared by one decorator / annotation / attribute text, e.g.
/// `@app.get("/users/{id}")`, `@GetMapping("/x")`, `#[post("/x")]`, `[HttpGet("x")]`,
/// `@RequestMapping(value = "/x", method = RequestMethod.POST)`. A route on a type is the prefix
/// of its members' routes (the caller decides).
pub(crate) fn annotation_route(raw: &str) -> Option<(String, String)> {
    let s = raw.trim().trim_start_matches('@').trim_start_matches("#[").trim_start_matches('[');
    let s = s.trim_end_matches(']').trim();
    let (head, args) = match s.find('(') {
        Some(i) => (&s[..i], Some(&s[i..])),
        None => (s, None),
    };
    let name = head.rsplit(['.', ':']).next().unwrap_or(head).trim();
    let lower = name.to_ascii_lowercase();
    let route = args.and_then(first_string).unwrap_or_default();
    let method = if let Some(v) = verb(&lower) {
        args?;
        v
    } else if let Some(v) = lower.strip_suffix("mapping").and_then(verb) {
        v
    } else if let Some(v) = lower.strip_prefix("http").and_then(verb) {
        v
    } else if matches!(lower.as_str(), "requestmapping" | "route" | "api_route" | "controller") {
        if lower == "controller" && args.is_none() {
            return None;
        }
        let args = args.unwrap_or("");
        let upper = args.to_ascii_uppercase();
        VERBS
            .iter()
            .map(|v| v.to_ascii_uppercase())
            .find(|v| {
                upper.contains(&format!("REQUESTMETHOD.{v}"))
                    || upper.contains(&format!("'{v}'"))
                    || upper.contains(&format!("\"{v}\""))
            })
            .unwrap_or_else(|| "ANY".to_string())
    } else {
        return None;
    };
    Some((method, route))
}

/// Next.js app-router handlers: `app/…/route.ts` exporting `GET`, `POST`, ….
pub(crate) fn next_route(path: &str, name: &str) -> Option<(String, String)> {
    if !VERBS.contains(&name.to_ascii_lowercase().as_str()) || name != name.to_ascii_uppercase() {
        return None;
    }
    let file = path.rsplit('/').next()?;
    let stem = file.split('.').next()?;
    let ext_ok = [".ts", ".js", ".tsx", ".jsx", ".mjs"].iter().any(|e| file.ends_with(e));
    if stem != "route" || !ext_ok {
        return None;
    }
    let dir = path.strip_suffix(file)?.trim_end_matches('/');
    let rest = if let Some(i) = dir.find("/app/") { &dir[i + 4..] } else { dir.strip_prefix("app")? };
    let route: Vec<&str> = rest.split('/').filter(|p| !p.is_empty() && !p.starts_with('(')).collect();
    Some((name.to_string(), format!("/{}", route.join("/"))))
}

/// The argument nodes of a call, unwrapping `argument` wrappers.
fn arguments<'t>(call: Node<'t>) -> Vec<Node<'t>> {
    let args = field(call, "arguments").or_else(|| {
        let mut cursor = call.walk();
        let found = call
            .named_children(&mut cursor)
            .find(|c| c.kind().ends_with("arguments") || c.kind() == "argument_list");
        found
    });
    let Some(args) = args else { return Vec::new() };
    let mut cursor = args.walk();
    args.named_children(&mut cursor)
        .filter(|a| !a.kind().contains("comment"))
        .map(|a| {
            if matches!(a.kind(), "argument" | "value_argument") {
                a.named_child(0).unwrap_or(a)
            } else {
                a
            }
        })
        .collect()
}

fn is_string(node: Node<'_>) -> bool {
    let k = node.kind();
    k.contains("string") && !k.contains("template_substitution")
}

fn string_value(node: Node<'_>, src: &str) -> String {
    let t = text(node, src);
    first_string(t).unwrap_or_else(|| t.trim_matches(['"', '\'', '`']).to_string())
}

/// A route registered by a call: `app.get("/x", handler)`, `r.GET("/x", h)`,
/// `http.HandleFunc("GET /x", h)`, `.route("/x", get(h))`, `path("x/", view)`,
/// `Route::get('/x', [C::class, 'm'])`, `get '/x' do … end`, `get("/x") { … }`.
/// Returns the method, the route and the handlers named in the arguments.
pub(crate) fn call_route(call: Node<'_>, name: &str, src: &str) -> Option<(String, String, Vec<String>)> {
    let lower = name.to_ascii_lowercase();
    let lower = lower.strip_prefix("map").filter(|_| name.starts_with("Map")).unwrap_or(&lower);
    let known = verb(lower).is_some()
        || matches!(lower, "route" | "handle" | "handlefunc" | "path" | "re_path" | "all" | "any");
    if !known {
        return None;
    }
    let args = arguments(call);
    let first = *args.first().filter(|a| is_string(**a))?;
    let raw = string_value(first, src);
    let has_block = {
        let mut cursor = call.walk();
        let found = call
            .named_children(&mut cursor)
            .any(|c| c.kind().contains("lambda") || c.kind().contains("block"));
        found
    };
    if args.len() < 2 && !has_block {
        return None;
    }
    let (method, route) = match raw.split_once(' ') {
        Some((m, r)) if verb(&m.to_ascii_lowercase()).is_some() && r.starts_with('/') => {
            (m.to_ascii_uppercase(), r.to_string())
        }
        _ => {
            let django = matches!(lower, "path" | "re_path");
            if !raw.starts_with('/') && !django {
                return None;
            }
            let method = verb(lower).unwrap_or_else(|| {
                // axum: `.route("/x", get(list).post(create))` — the first verb named.
                args.iter().skip(1).find_map(|a| verb_in(*a, src)).unwrap_or_else(|| "ANY".to_string())
            });
            let route = if django && !raw.starts_with('/') { format!("/{raw}") } else { raw };
            (method, route)
        }
    };
    let mut handlers = Vec::new();
    for arg in args.iter().skip(1) {
        handler_names(*arg, src, 0, &mut handlers);
    }
    Some((method, route, handlers))
}

fn verb_in(node: Node<'_>, src: &str) -> Option<String> {
    let t = text(node, src);
    let head = t.split('(').next()?;
    let name = head.rsplit(['.', ':']).next()?.trim();
    verb(&name.to_ascii_lowercase())
}

/// Names of handler functions among a route call's arguments (identifiers, `a.b`, `C::m`, the
/// arguments of `get(h)`, `[C::class, 'm']`).
fn handler_names(node: Node<'_>, src: &str, depth: usize, out: &mut Vec<String>) {
    if depth > 3 {
        return;
    }
    let kind = node.kind();
    let t = text(node, src).trim();
    let plain = !t.is_empty()
        && t.len() < 120
        && t.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':' | '$'));
    if plain && !is_string(node) {
        out.push(t.to_string());
        return;
    }
    if kind.contains("array") {
        let parts: Vec<String> = {
            let mut cursor = node.walk();
            node.named_children(&mut cursor).map(|c| text(c, src).trim().to_string()).collect()
        };
        if let [class, method] = parts.as_slice() {
            if let Some(class) = class.strip_suffix("::class") {
                out.push(format!("{class}.{}", method.trim_matches(['"', '\''])));
            }
        }
        return;
    }
    if kind.contains("call") || kind.contains("invocation") {
        for arg in arguments(node) {
            handler_names(arg, src, depth + 1, out);
        }
        // `get(list).post(create)`: the receiver chain holds more calls.
        if let Some(f) = field(node, "function") {
            let mut cursor = f.walk();
            for c in f.named_children(&mut cursor) {
                if c.kind().contains("call") {
                    handler_names(c, src, depth + 1, out);
                }
            }
        }
    }
}
