#!/usr/bin/env node
// Fails when a wasm module imports anything from `env`.
//
// rustc links wasm32 with --allow-undefined, so a C symbol the grammar build left unresolved
// (e.g. a header that declares but does not define it, or gcc used instead of clang) does not fail
// the build: it turns into an `env.*` import and the module only breaks when loaded. This check
// makes such a build fail loudly instead.
//
// usage: node scripts/wasm/check-imports.mjs <file.wasm>...
import { readFileSync } from "node:fs";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: check-imports.mjs <file.wasm>...");
  process.exit(2);
}
let bad = 0;
for (const file of files) {
  const module = new WebAssembly.Module(readFileSync(file));
  const imports = WebAssembly.Module.imports(module);
  const env = imports.filter((i) => i.module === "env");
  if (env.length > 0) {
    bad += env.length;
    console.error(`${file}: ${env.length} unresolved env import(s):`);
    for (const i of env) console.error(`  env.${i.name} (${i.kind})`);
  } else {
    const others = [...new Set(imports.map((i) => i.module))];
    console.log(`${file}: no env imports (${imports.length} imports${others.length ? " from " + others.join(", ") : ""})`);
  }
}
process.exit(bad > 0 ? 1 : 0);
