#!/usr/bin/env node
// Writes docs/reference/http-api.md from the worker's router (src/routes/mod.rs: which routes
// exist) and the JSON Schemas in schemas/ (what each request and response holds, with the doc
// comments of the Rust types they are generated from).
//
//   node scripts/docs/http-api.mjs           rewrite the page
//   node scripts/docs/http-api.mjs --check   fail when the page is stale, when the router has a
//                                            route the table below does not describe, or when the
//                                            table names a route or a schema that does not exist
//
// The one hand-written part is ROUTES: a sentence per route and the schemas it takes and answers.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(root, 'docs', 'reference', 'http-api.md');

// `METHOD /path` (as derived from the router's match arms) → what it does, request, response.
const ROUTES = {
  'GET /health': ['version, embedder (provider, model, dims) and the vector index in use', null, 'health-response'],
  'POST /v1/chunk': ['stateless chunking: `{path, content, options?}` or `{files: [{path, content}], options?}`', 'chunk-request', 'chunk-response'],
  'GET /v1/me': ['who the bearer token is: `anonymous`, `api-token`, a key (its id) or a user signed in with GitHub (their login), and whether it may manage the deployment', null, 'who-am-i'],
  'GET /v1/repos': ['the repositories (namespaces) the caller may read, with their status', null, 'repos-response'],
  'POST /v1/repos/{owner}/{name}/index': ['fetch a GitHub repository tarball and index it; registers the repository for webhooks and scheduled syncs', 'index-request', 'job-accepted'],
  'POST /v1/repos/{owner}/{name}/files': ['upload `{files: [{path, content, tags?}], tags?}` or a `.tar.gz` body (`?tags=a,b`) and index it', 'upload-request', 'job-accepted'],
  'DELETE /v1/repos/{owner}/{name}/files': ['remove files: `{paths: [...]}`', 'delete-files-request', 'job-accepted'],
  'PUT /v1/repos/{owner}/{name}/documents/{path}': ['store one document (`{"text": …}` or a `text/plain` body); chunked parent/child after the debounce', 'put-document-request', 'document-accepted'],
  'GET /v1/repos/{owner}/{name}/documents/{path}': ['a document: version, dirty, hash, last chunking, parents and children', null, 'document'],
  'DELETE /v1/repos/{owner}/{name}/documents/{path}': ['remove the document, its parents, chunks and vectors', null, 'delete-document-response'],
  'GET /v1/repos/{owner}/{name}/settings': ['the repository\'s settings', null, 'repo-settings'],
  'PUT /v1/repos/{owner}/{name}/settings': ['`{"chunking": "flat" | "parent-child"}`: how Markdown and text files indexed afterwards are chunked', 'repo-settings', 'repo-settings'],
  'DELETE /v1/repos/{owner}/{name}': ['remove a repository\'s namespace entirely', null, 'delete-repo-response'],
  'GET /v1/repos/{owner}/{name}/status': ['job status, progress, ETA, attempts, last error, READY, recent jobs', null, 'repo-status'],
  'GET /v1/repos/{owner}/{name}/files': ['the indexed files', null, 'files-response'],
  'GET /v1/repos/{owner}/{name}/files/{path}/lines': ['exact lines of an indexed file (`?start=&end=`)', 'lines-query', 'file-lines-response'],
  'POST /v1/repos/{owner}/{name}/plans': ['start a per-node chunk plan run', 'plan-request', 'plan-run-response'],
  'GET /v1/repos/{owner}/{name}/plans/{run_id}': ['a plan run', null, 'plan-run-response'],
  'GET /v1/repos/{owner}/{name}/symbols': ['definitions by exact name or fqn (`?name=&kind=&path=&limit=`)', 'symbol-query', 'symbols-response'],
  'GET /v1/repos/{owner}/{name}/symbols/{id}': ['one symbol', null, 'symbol-response'],
  'GET /v1/repos/{owner}/{name}/symbols/{id}/references': ['a symbol\'s edges: callers, callees, implementers, importers, referencers, referenced', 'references-query', 'references-response'],
  'GET /v1/repos/{owner}/{name}/tree': ['indexed files under `?prefix=` or matching `?glob=`, of `?language=`, with size and lines, paged (MCP `repo.list_files`, [repository tools](../guide/repository-tools.md))', 'list-files-query', 'list-files-response'],
  'GET /v1/repos/{owner}/{name}/outline': ['a file\'s symbols as a tree, or a folder\'s files with their top-level symbols (`?path=`; MCP `repo.outline`)', 'outline-query', 'outline-response'],
  'POST /v1/repos/{owner}/{name}/grep': ['lines matching a literal or a regular expression, paged by cursor (a read; MCP `repo.grep`)', 'grep-request', 'grep-response'],
  'POST /v1/repos/{owner}/{name}/map': ['the most important files with their definitions, within `maxTokens` (a read; MCP `repo.map`)', 'map-request', 'map-response'],
  'POST /v1/repos/{owner}/{name}/impact': ['what a change touches: changed symbols, their users, endpoints, tests (a read; MCP `repo.impact`)', 'impact-request', 'impact-response'],
  'GET /v1/jobs/{id}': ['one job', null, 'job'],
  'POST /v1/search': ['search one repository (MCP `repo.rag_search`)', 'search-request', 'search-response'],
  'POST /v1/search/simple': ['only `rawQuery`; the last READY repository (MCP `repo.rag_search_simple`)', 'search-simple-request', 'search-response'],
  'POST /v1/search/global': ['search every READY repository the caller may read (MCP `repo.rag_search_global`)', 'search-global-request', 'search-response'],
  'POST /v1/search/simple-global': ['only `rawQuery`, every READY repository (MCP `repo.rag_search_simple_global`)', 'search-simple-request', 'search-response'],
  'POST /mcp': ['MCP over streamable HTTP (JSON-RPC 2.0): `server/discover`, `initialize`, `tools/list`, `tools/call` ([agent tools](../guide/agents.md))', null, null],
  'POST /v1/keys': ['admin: mint a scoped key `{name, scopes, namespaces}`; the token is in this answer only ([keys](../guide/keys.md))', null, null],
  'GET /v1/keys': ['admin: every key (id, name, scopes, patterns, created, revoked), never a secret', null, null],
  'DELETE /v1/keys/{id}': ['admin: revoke a key', null, null],
  'GET /v1/audit': ['admin: the write log, newest first (`?key=<id>&before=<id>&limit=<n>`)', null, null],
  'POST /v1/webhooks/github': ['GitHub push webhook, authenticated by `X-Hub-Signature-256` ([keeping repositories fresh](../guide/freshness.md))', null, 'webhook-response'],
  'GET /.well-known/oauth-protected-resource': ['sign-in: the MCP endpoint\'s protected-resource metadata (RFC 9728; [keys and sign-in](../guide/keys.md#signing-in-with-github))', null, null],
  'GET /.well-known/oauth-protected-resource/mcp': ['sign-in: the MCP endpoint\'s protected-resource metadata (RFC 9728)', null, null],
  'GET /.well-known/oauth-protected-resource/v1': ['sign-in: the HTTP API\'s protected-resource metadata (RFC 9728)', null, null],
  'GET /.well-known/oauth-authorization-server': ['sign-in: the authorization server\'s metadata (RFC 8414)', null, null],
  'POST /oauth/register': ['sign-in: dynamic client registration (RFC 7591, public clients only)', null, null],
  'GET /oauth/authorize': ['sign-in: the consent page of an authorization request (code + PKCE S256, `resource`)', null, null],
  'POST /oauth/authorize': ['sign-in: the consent form; continues to GitHub\'s sign-in', null, null],
  'GET /oauth/callback': ['sign-in: GitHub\'s redirect; sends a one-time code to the client', null, null],
  'POST /oauth/token': ['sign-in: codes (with the PKCE verifier) and refresh tokens for tokens (form-encoded; RFC 6749 errors)', null, null],
  'POST /oauth/revoke': ['sign-in: revoke an access or refresh token and its whole sign-in (RFC 7009)', null, null],
};

// Search modes the router accepts under `POST /v1/search/…` (src/routes/search.rs, `mode_for`).
function searchModes() {
  const src = readFileSync(join(root, 'src', 'routes', 'search.rs'), 'utf8');
  const body = src.slice(src.indexOf('fn mode_for'));
  const fn = body.slice(0, body.indexOf('\n}\n'));
  return [...fn.matchAll(/\[([^\]]*)\]\s*=>\s*Some/g)].map((m) =>
    m[1].split(',').map((s) => s.trim().replace(/"/g, '')).filter(Boolean));
}

// Every `("METHOD", ["seg", var, …])` arm of the router, as `METHOD /seg/{var}/…`.
function routerRoutes() {
  const src = readFileSync(join(root, 'src', 'routes', 'mod.rs'), 'utf8');
  const routes = [];
  for (const m of src.matchAll(/\("([A-Z]+)",\s*\[([^\]]*)\]\)/g)) {
    const [, method, segs] = m;
    const parts = [];
    let search = false;
    for (let seg of segs.split(',').map((s) => s.trim()).filter(Boolean)) {
      if (seg.startsWith('"')) parts.push(seg.slice(1, -1));
      else if (/^\w+ @ \.\.$/.test(seg)) {
        if (parts.join('/') === 'v1/search') search = true;
        else parts.push('{path}');
      } else if (seg === '..') continue;
      else parts.push(`{${seg}}`);
    }
    if (search) {
      for (const mode of searchModes()) routes.push(`${method} /${[...parts, ...mode].join('/')}`);
    } else routes.push(`${method} /${parts.join('/')}`);
  }
  return routes;
}

function loadSchemas() {
  const dir = join(root, 'schemas');
  const out = new Map();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.schema.json')).sort()) {
    out.set(file.replace(/\.schema\.json$/, ''), JSON.parse(readFileSync(join(dir, file), 'utf8')));
  }
  return out;
}

const oneLine = (s) => (s ?? '').replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|').trim();
const anchor = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

// A short type for a property: `string`, `integer?` (nullable), `[Chunk](#…)`, `array of string`.
function typeOf(schema, defAnchor) {
  if (!schema || schema === true) return 'any';
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop();
    return `[${name}](#${defAnchor(name)})`;
  }
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.enum) return schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  const alts = schema.anyOf || schema.oneOf;
  if (alts) {
    const nonNull = alts.filter((a) => a.type !== 'null');
    const t = nonNull.map((a) => typeOf(a, defAnchor)).join(' \\| ');
    return nonNull.length < alts.length ? `${t}?` : t;
  }
  let types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const nullable = types.includes('null');
  types = types.filter((t) => t !== 'null');
  let t = types.map((ty) => {
    if (ty === 'array') return `array of ${typeOf(schema.items, defAnchor)}`;
    if (ty === 'object' && schema.additionalProperties && schema.additionalProperties !== true && !schema.properties) {
      return `map of ${typeOf(schema.additionalProperties, defAnchor)}`;
    }
    return ty;
  }).join(' \\| ') || 'any';
  return nullable ? `${t}?` : t;
}

function fieldsTable(schema, defAnchor) {
  const lines = [];
  const props = schema.properties || {};
  const required = new Set(schema.required || []);
  if (Object.keys(props).length) {
    lines.push('| field | type | required | description |', '| --- | --- | --- | --- |');
    for (const [name, prop] of Object.entries(props)) {
      lines.push(`| \`${name}\` | ${typeOf(prop, defAnchor)} | ${required.has(name) ? 'yes' : ''} | ${oneLine(prop.description)} |`);
    }
    if (schema.additionalProperties === false) lines.push('', 'Unknown fields are refused (`400`).');
  }
  const alts = schema.oneOf || schema.anyOf;
  if (alts && !Object.keys(props).length) {
    lines.push('One of:', '');
    for (const alt of alts) {
      const desc = oneLine(alt.description);
      if (alt.properties) {
        lines.push(`- an object${desc ? ` — ${desc}` : ''}:`, '');
        lines.push(...fieldsTable(alt, defAnchor).map((l) => (l ? `  ${l}` : l)), '');
      } else lines.push(`- ${typeOf(alt, defAnchor)}${desc ? ` — ${desc}` : ''}`);
    }
  } else if (!Object.keys(props).length) {
    lines.push(`Type: ${typeOf(schema, defAnchor)}.`);
  }
  return lines;
}

function render() {
  const schemas = loadSchemas();
  const routes = routerRoutes();
  const problems = [];
  for (const r of routes) if (!ROUTES[r]) problems.push(`the router has ${r}, which ROUTES in scripts/docs/http-api.mjs does not describe`);
  for (const r of Object.keys(ROUTES)) if (!routes.includes(r)) problems.push(`ROUTES names ${r}, which the router does not have`);
  for (const [r, [, req, res]] of Object.entries(ROUTES)) {
    for (const s of [req, res]) if (s && !schemas.has(s)) problems.push(`${r} names schemas/${s}.schema.json, which does not exist`);
  }

  const out = [
    '# HTTP API reference',
    '',
    '<!-- Generated by scripts/docs/http-api.mjs from src/routes/mod.rs and schemas/; do not edit. -->',
    '',
    'JSON in, JSON out. Errors are always `{"error": {"code": "STABLE_CODE", "message": "…"}}` with a',
    '4xx status for bad input ([`error`](#error)). Writes need `Authorization: Bearer <token>` (the',
    '`API_TOKEN` secret, `dev-token` locally, or a [scoped key](../guide/keys.md)); so do reads on a',
    'deployment (locally, and where `PUBLIC_READS=true`, anyone may read). The JSON Schemas in `schemas/` at the root of the repository are',
    'the contract (generated from the Rust types; a test fails when they are stale); this page is',
    'rendered from them and from the router.',
    '',
    '## Routes',
    '',
    '| method | path | what | request | response |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (const r of routes) {
    const [what, req, res] = ROUTES[r] || ['', null, null];
    const [method, path] = r.split(' ');
    const link = (s) => (s ? `[\`${s}\`](#${anchor(s)})` : '');
    out.push(`| \`${method}\` | \`${path}\` | ${what.replace(/\|/g, '\\|')} | ${link(req)} | ${link(res)} |`);
  }
  out.push('', '## Schemas', '');

  // Definitions shared by several schemas are shown once; a name defined differently by two
  // schemas gets the schema's name in its anchor.
  const defs = new Map();
  for (const [stem, schema] of schemas) {
    for (const [name, def] of Object.entries(schema.$defs || {})) {
      const key = JSON.stringify(def);
      const seen = defs.get(name);
      if (!seen) defs.set(name, { def, key, stems: [stem], variants: [] });
      else if (seen.key === key) seen.stems.push(stem);
      else seen.variants.push({ stem, def });
    }
  }
  const defAnchorFor = (stem) => (name) => {
    const d = defs.get(name);
    if (d && d.variants.some((v) => v.stem === stem)) return `type-${anchor(name)}-${anchor(stem)}`;
    return `type-${anchor(name)}`;
  };
  for (const [stem, schema] of schemas) {
    out.push(`### ${stem}`, '');
    out.push(`\`schemas/${stem}.schema.json\` — **${schema.title || stem}**${schema.description ? `: ${oneLine(schema.description)}` : ''}`, '');
    out.push(...fieldsTable(schema, defAnchorFor(stem)), '');
  }
  out.push('## Types', '', 'The definitions the schemas above refer to.', '');
  for (const name of [...defs.keys()].sort()) {
    const d = defs.get(name);
    const entries = [{ id: `type-${anchor(name)}`, def: d.def, stem: d.stems[0] }, ...d.variants.map((v) => ({ id: `type-${anchor(name)}-${anchor(v.stem)}`, def: v.def, stem: v.stem }))];
    for (const e of entries) {
      out.push(`<a id="${e.id}"></a>`, '', `### ${name}${entries.length > 1 ? ` (${e.stem})` : ''}`, '');
      if (e.def.description) out.push(oneLine(e.def.description), '');
      out.push(...fieldsTable(e.def, defAnchorFor(e.stem)), '');
    }
  }
  return { text: out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n', problems };
}

const { text, problems } = render();
if (process.argv.includes('--check')) {
  let have = '';
  try { have = readFileSync(OUT, 'utf8'); } catch {}
  if (have !== text) problems.push('docs/reference/http-api.md is stale: run `node scripts/docs/http-api.mjs`');
  if (problems.length) {
    for (const p of problems) console.error(`http-api: ${p}`);
    process.exit(1);
  }
  console.log(`http-api: docs/reference/http-api.md is fresh (${Object.keys(ROUTES).length} routes)`);
} else {
  writeFileSync(OUT, text);
  for (const p of problems) console.error(`http-api: ${p}`);
  console.log(`http-api: wrote docs/reference/http-api.md`);
  if (problems.length) process.exit(1);
}
