// Plain BM25 baselines shared by the answer benchmarks (scripts/bench/answers.mjs,
// scripts/bench/swebench.mjs): the tokenizer (camelCase and snake_case split, the whole identifier
// kept too, a short stop list), Okapi BM25 (k1 1.2, b 0.75) over in-memory documents, and the files
// of a tree the baselines read (source in a known language, and prose / configuration).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { languageOf, listFiles } from './answers-questions.mjs';

const STOP = new Set('a an and are as at be by for from has have if in into is it its of on or that the this to was were will with when which not no can should would than then there these those do does we you your our'.split(' '));
export function tokens(text) {
  const out = [];
  for (const word of text.match(/[A-Za-z0-9_]+/g) ?? []) {
    const parts = word
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .split(/[_\s]+/)
      .filter(Boolean);
    for (const p of parts) {
      const t = p.toLowerCase();
      if (t.length > 1 && !STOP.has(t)) out.push(t);
    }
    if (parts.length > 1) out.push(word.toLowerCase());
  }
  return out;
}

export class Bm25 {
  constructor(docs, k1 = 1.2, b = 0.75) {
    this.docs = docs.map((d) => {
      const tf = new Map();
      for (const t of tokens(d.text)) tf.set(t, (tf.get(t) ?? 0) + 1);
      return { ...d, tf, len: [...tf.values()].reduce((a, c) => a + c, 0) };
    });
    this.df = new Map();
    for (const d of this.docs) for (const t of d.tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
    this.avg = this.docs.reduce((a, d) => a + d.len, 0) / Math.max(1, this.docs.length);
    Object.assign(this, { k1, b });
  }
  search(query, k = 100) {
    const q = [...new Set(tokens(query))];
    const N = this.docs.length;
    const scored = [];
    for (let i = 0; i < N; i++) {
      const d = this.docs[i];
      let s = 0;
      for (const t of q) {
        const f = d.tf.get(t);
        if (!f) continue;
        const df = this.df.get(t);
        const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5));
        s += (idf * f * (this.k1 + 1)) / (f + this.k1 * (1 - this.b + (this.b * d.len) / this.avg));
      }
      if (s > 0) scored.push([i, s]);
    }
    scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    return scored.slice(0, k).map(([i]) => i);
  }
}

export function sourceFiles(dir) {
  return listFiles(dir)
    .filter((p) => languageOf(p) || /\.(md|rst|txt|toml|json|ya?ml)$/.test(p))
    .map((path) => ({ path, text: readFileSync(join(dir, path), 'utf8') }))
    .filter((f) => f.text.length < 1_000_000 && !f.text.includes('\0'));
}
