// The keyword index's path and name columns hold a camelCase path's or name's words beside it
// (`chunks.path_terms`, `chunks.symbol_terms`), as FTS5 already cuts snake_case ones; and an index
// made before that (its triggers indexed `path` and `symbol_name` as they are) is taken over by
// the next write without a stale posting: its rows keep what they were indexed with until they
// are written again.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { keywordTable, sqlitePath, startEdgerag, startHashEmbedder } from './harness.mjs';

const NS = 'repo:acme/camel';
const T = keywordTable(NS);
let embed;
let er;
let dir;

const files = (order) => [
  { path: 'src/orderEntry.ts', content: order },
  { path: 'src/billing/invoiceMath.ts', content: 'export function computeLineTotal(qty: number, price: number): number {\n  return qty * price;\n}\n' },
  { path: 'src/plain_names.py', content: 'def parse_order_line(text):\n    """Split a line."""\n    return text.split(",")\n' },
];
const FIRST = 'export function formatReceiptTotal(total: number): string {\n  return `total ${total} zanzibar`;\n}\n';
const SECOND = 'export function formatReceiptTotal(total: number): string {\n  return `total ${total} quokka`;\n}\n';

/** Asks FTS5 and the in-memory copy the same queries: both must agree and the copy must answer. */
async function sameAsFts5(queries) {
  const r = await er.request('POST', '/__test/search/keyword-copies', { body: { namespaces: [NS], queries, limit: 20 } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.mismatches, []);
  assert.ok(r.body.answeredByCopy > 0, `the copy answered (its token counts are FTS5's): ${r.text}`);
  return r.body.hits;
}

const nameMatches = async (word) => (await er.d1(`SELECT rowid FROM ${T} WHERE ${T} MATCH ?`, `symbol_name : ${word}`)).length;
const pathMatches = async (word) => (await er.d1(`SELECT rowid FROM ${T} WHERE ${T} MATCH ?`, `path : ${word}`)).length;
const anyMatches = async (word) => (await er.d1(`SELECT rowid FROM ${T} WHERE ${T} MATCH ?`, word)).length;

async function restart() {
  const keep = process.env.EDGERAG_E2E_KEEP;
  process.env.EDGERAG_E2E_KEEP = '1';
  await er.stop();
  if (keep === undefined) delete process.env.EDGERAG_E2E_KEEP;
  else process.env.EDGERAG_E2E_KEEP = keep;
}

before(async () => {
  embed = await startHashEmbedder();
  er = await startEdgerag({ vars: { OPENAI_BASE_URL: embed.url, KEYWORD_INDEX_QUIET_MS: '0' } });
  dir = er.persistDir;
});

after(async () => {
  await er?.stop();
  await embed?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("a camelCase path's and name's words are in their weighted columns, snake_case ones as before", async () => {
  await er.indexFiles('acme/camel', files(FIRST));
  const rows = await er.d1(
    'SELECT path, symbol_name, path_terms, symbol_terms FROM chunks WHERE namespace = ? AND symbol_name IS NOT NULL ORDER BY path',
    NS,
  );
  const by = Object.fromEntries(rows.map((r) => [r.symbol_name, r]));
  assert.equal(by.formatReceiptTotal.symbol_terms, 'formatReceiptTotal format receipt total');
  assert.equal(by.formatReceiptTotal.path_terms, 'src/orderEntry.ts order entry');
  assert.equal(by.parse_order_line.symbol_terms, null, 'FTS5 already cuts a snake_case name');
  assert.equal(by.parse_order_line.path_terms, null);
  assert.equal(await nameMatches('receipt'), 1);
  assert.equal(await nameMatches('formatreceipttotal'), 1, 'the whole name still matches');
  assert.ok((await pathMatches('entry')) >= 1);
  assert.ok((await sameAsFts5(['format the receipt total', 'order entry', 'compute line total', 'parse order line'])) > 0);
});

test('an index made before takes the new triggers at the next write, with no stale posting', async () => {
  await restart();
  // The namespace as an older build left it: rows without terms, indexed as they are, by the
  // triggers of that time.
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(sqlitePath(dir));
  const lit = `'${NS}'`;
  db.exec(`DROP TRIGGER ${T}_insert; DROP TRIGGER ${T}_delete; DROP TRIGGER ${T}_update;
    INSERT INTO ${T} (${T}) VALUES ('delete-all');
    UPDATE chunks SET path_terms = NULL, symbol_terms = NULL WHERE namespace = ${lit};
    INSERT INTO ${T} (rowid, search_text, path, symbol_name) SELECT rowid, search_text, path, symbol_name FROM chunks WHERE namespace = ${lit};
    DELETE FROM keyword_snapshots WHERE namespace = ${lit};
    CREATE TRIGGER ${T}_ins AFTER INSERT ON chunks WHEN new.namespace = ${lit} BEGIN
      INSERT INTO ${T} (rowid, search_text, path, symbol_name) VALUES (new.rowid, new.search_text, new.path, new.symbol_name); END;
    CREATE TRIGGER ${T}_del AFTER DELETE ON chunks WHEN old.namespace = ${lit} BEGIN
      INSERT INTO ${T} (${T}, rowid, search_text, path, symbol_name) VALUES ('delete', old.rowid, old.search_text, old.path, old.symbol_name); END;
    CREATE TRIGGER ${T}_upd AFTER UPDATE OF search_text, path, symbol_name ON chunks WHEN old.namespace = ${lit} BEGIN
      INSERT INTO ${T} (${T}, rowid, search_text, path, symbol_name) VALUES ('delete', old.rowid, old.search_text, old.path, old.symbol_name);
      INSERT INTO ${T} (rowid, search_text, path, symbol_name) VALUES (new.rowid, new.search_text, new.path, new.symbol_name); END;`);
  db.close();
  er = await startEdgerag({ persistDir: dir, vars: { OPENAI_BASE_URL: embed.url, KEYWORD_INDEX_QUIET_MS: '0' } });
  assert.equal(await nameMatches('receipt'), 0, 'the older index holds the name as one token');
  assert.ok((await sameAsFts5(['format the receipt total', 'order entry'])) > 0, 'rows without terms are read as they were indexed');

  // One file changed: its old rows leave through the new delete trigger, which reads what they
  // were indexed with; its new rows come in with their terms.
  await er.indexFiles('acme/camel', files(SECOND));
  const triggers = (await er.d1("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'chunks' AND name LIKE ?", `${T}_%`))
    .map((r) => r.name.slice(T.length + 1))
    .sort();
  assert.deepEqual(triggers, ['delete', 'insert', 'update']);
  assert.equal(await anyMatches('zanzibar'), 0, 'no posting of the replaced rows is left');
  assert.equal(await anyMatches('quokka'), 1);
  assert.equal(await nameMatches('receipt'), 1, 'the rewritten row has its words in the name column');
  assert.ok((await sameAsFts5(['format the receipt total', 'order entry', 'compute line total', 'quokka'])) > 0);

  await restart();
  const check = new DatabaseSync(sqlitePath(dir));
  // FTS5's own check of its index (postings against its document sizes).
  check.exec(`INSERT INTO ${T} (${T}) VALUES ('integrity-check')`);
  check.close();
  er = await startEdgerag({ persistDir: dir, vars: { OPENAI_BASE_URL: embed.url, KEYWORD_INDEX_QUIET_MS: '0' } });
});
