// The embedding server over HTTP (driven by scripts/bench/embed-server.sh): texts/s at batches of
// 1, 8 and 32 chunks of ≈ 200 tokens.
//
//   node scripts/bench/embed-server.mjs PORT
const port = process.argv[2];
const words = 'the index stores vectors for each chunk query returns nearest neighbours parse config file error handler retry queue message batch worker request response token embedding model cosine similarity function struct impl async await'.split(' ');
const text = (seed) => { let x = seed * 2654435761 % 4294967296 + 1; const w = []; for (let i = 0; i < 150; i++) { x = (x * 1103515245 + 12345) % 2147483648; w.push(words[x % words.length]); if (i % 12 === 11) w.push(';'); } return w.join(' '); };
for (const batch of [1, 8, 32]) {
  const rounds = batch === 32 ? 3 : batch === 8 ? 5 : 10;
  const input = Array.from({ length: batch }, (_, i) => text(i + 1));
  const post = () => fetch(`http://127.0.0.1:${port}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input, model: 'all-MiniLM-L6-v2' }) }).then((r) => r.json());
  const warm = await post();
  const tokens = warm.usage.prompt_tokens / batch;
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) await post();
  const ms = (performance.now() - t0) / rounds;
  console.log(`batch ${String(batch).padStart(2)}: ${ms.toFixed(1)} ms/request, ${(batch * 1000 / ms).toFixed(1)} texts/s (${tokens.toFixed(0)} tokens/text)`);
}
