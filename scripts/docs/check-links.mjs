#!/usr/bin/env node
// Checks every internal link of the built book (target/book, `mdbook build`): each `href` /
// `src` to another page of the book must name a file that exists, and its `#fragment` an `id` on
// that page. External links (http:, https:, mailto:) are not fetched: the check needs no network.
//
//   node scripts/docs/check-links.mjs [BOOK_DIR]
//
// Exit status 1 with one line per broken link (page, target, why).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const book = resolve(process.argv[2] || join(root, 'target', 'book'));

function htmlFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...htmlFiles(p));
    else if (name.endsWith('.html')) out.push(p);
  }
  return out;
}

// mdBook's own pages (print view, 404, search, table of contents) and its theme's assets link to
// one another in ways that are not ours to check.
const OWN = new Set(['print.html', '404.html', 'toc.html']);
const idsCache = new Map();
function idsOf(file) {
  if (!idsCache.has(file)) {
    const html = readFileSync(file, 'utf8');
    idsCache.set(file, new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => decode(m[1]))));
  }
  return idsCache.get(file);
}
const decode = (s) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

if (!existsSync(join(book, 'index.html'))) {
  console.error(`check-links: no built book in ${book} (run mdbook build first)`);
  process.exit(2);
}
const broken = [];
let checked = 0;
for (const page of htmlFiles(book)) {
  const rel = relative(book, page);
  if (OWN.has(rel)) continue;
  const html = readFileSync(page, 'utf8');
  // Only the page's own content: mdBook's chrome (sidebar, navigation) comes from SUMMARY.md,
  // which mdBook itself checks.
  const start = html.indexOf('<main>');
  const end = html.indexOf('</main>');
  const main = start >= 0 && end > start ? html.slice(start, end) : html;
  for (const m of main.matchAll(/\s(?:href|src)="([^"]*)"/g)) {
    const target = decode(m[1]);
    if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, mailto:, data:, …
    checked++;
    const [pathPart, fragment] = target.split('#');
    const file = pathPart ? resolve(dirname(page), decodeURIComponent(pathPart)) : page;
    const exists = existsSync(file) && statSync(file).isFile()
      ? file
      : existsSync(join(file, 'index.html')) ? join(file, 'index.html') : null;
    if (!exists) {
      broken.push(`${rel}: ${target} — no such page (${relative(book, file)})`);
      continue;
    }
    if (fragment && exists.endsWith('.html') && !idsOf(exists).has(decodeURIComponent(fragment))) {
      broken.push(`${rel}: ${target} — no anchor #${fragment} in ${relative(book, exists)}`);
    }
  }
}
if (broken.length) {
  for (const b of broken) console.error(`check-links: ${b}`);
  console.error(`check-links: ${broken.length} broken of ${checked} internal links`);
  process.exit(1);
}
console.log(`check-links: ${checked} internal links, none broken`);
