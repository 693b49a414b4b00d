// The wasm32 / native throughput ratio of one family (scripts/bench/wasm.sh), from the JSON lines
// both sides print.
//
//   node scripts/bench/wasm-ratio.mjs NATIVE_JSON WASM_JSON
const [n, w] = process.argv.slice(2).map((s) => JSON.parse(s));
const same = n.chunks === w.chunks ? 'chunk count' : 'CHUNK COUNT DIFFERS';
console.log(`ratio wasm/native = ${(w.mbPerSec / n.mbPerSec).toFixed(2)} (${w.mbPerSec.toFixed(2)} vs ${n.mbPerSec.toFixed(2)} MB/s, same ${same})`);
