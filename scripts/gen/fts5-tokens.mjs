// Writes, for every code point from U+0080 to U+3FFFF (surrogates excepted), the tokens SQLite
// FTS5's `unicode61 remove_diacritics 2` makes of "q<c>z <c>", as JSON {codePoint: [token, …]}
// (node:sqlite's SQLite). Read by scripts/gen/fts5-chars.sh.
import { writeFileSync } from 'node:fs';

const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/gen/fts5-tokens.mjs OUT.json');
const emit = process.emitWarning;
process.emitWarning = (w, ...rest) => (String(w).includes('SQLite') ? undefined : emit.call(process, w, ...rest));
const { DatabaseSync } = await import('node:sqlite');
const db = new DatabaseSync(':memory:');
db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
const insert = db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
db.exec('BEGIN');
for (let cp = 0x80; cp <= 0x3ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const c = String.fromCodePoint(cp);
  insert.run(cp, `q${c}z ${c}`);
}
db.exec('COMMIT');
const tokens = {};
for (const r of db.prepare('SELECT doc, term FROM v ORDER BY doc, "offset"').iterate()) (tokens[r.doc] ??= []).push(r.term);
const { version } = db.prepare('SELECT sqlite_version() AS version').get();
writeFileSync(out, JSON.stringify({ sqlite: version, tokens }));
