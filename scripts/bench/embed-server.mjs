// The HTTP layer of scripts/bench/embed-server.sh: POST /v1/embeddings to a running embedding server
// with batches of 1, 8, 32 texts of ≈ 250 word pieces (the texts of
// crates/embed-server/benches/embed.rs, same generator), what the worker sees end to end.
//
// usage: node embed-server.mjs PORT [WORDS]  (WORDS default 181 ≈ 250 word pieces)
const [port, words = 181] = process.argv.slice(2).map(Number);
const WORDS = ('the index stores vectors for each chunk query returns nearest neighbours parse config ' +
  'file error handler retry queue message batch worker request response token embedding model cosine ' +
  'similarity function struct impl async await let mut self return match Some None Result Ok Err fn pub').split(' ');
const MASK = (1n << 64n) - 1n;

function chunkText(seed, count) {
  let x = (BigInt(seed) * 0x9e3779b97f4a7c15n + 1n) & MASK;
  const out = [];
  for (let i = 0; i < count; i++) {
    x ^= (x << 13n) & MASK;
    x ^= x >> 7n;
    x ^= (x << 17n) & MASK;
    out.push(WORDS[Number(x % BigInt(WORDS.length))]);
    if (i % 12 === 11) out.push(';');
  }
  return out.join(' ');
}

for (const batch of [1, 8, 32]) {
  const rounds = batch === 32 ? 2 : batch === 8 ? 4 : 10;
  const input = Array.from({ length: batch }, (_, i) => chunkText(i, words));
  const post = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input, model: 'all-MiniLM-L6-v2' }),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
    return res.json();
  };
  const warm = await post();
  const tokens = warm.usage.prompt_tokens / batch;
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) await post();
  const ms = (performance.now() - t0) / rounds;
  console.log(`  batch ${String(batch).padStart(2)}: ${ms.toFixed(1)} ms/request, ${(batch * 1000 / ms).toFixed(1)} texts/s (${tokens.toFixed(0)} tokens/text)`);
}
