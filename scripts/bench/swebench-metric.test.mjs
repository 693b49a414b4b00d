// The SWE-bench Lite benchmark's metric (scripts/bench/swebench-metric.mjs; run by the `docs` test
// step): the gold files of a patch, LocAgent's all-gold-files hit, and the 26 instances left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { EXCLUDED, allGoldRank, accuracy, hitAt, namedIn, patchFiles } from './swebench-metric.mjs';

test('the gold files are the files the patch edits, each once, in order', () => {
  const patch = [
    'diff --git a/pkg/models.py b/pkg/models.py',
    '--- a/pkg/models.py',
    '+++ b/pkg/models.py',
    '@@ -1 +1 @@',
    '-x',
    '+y',
    'diff --git a/pkg/new.py b/pkg/new.py',
    'new file mode 100644',
    '--- /dev/null',
    '+++ b/pkg/new.py',
    '@@ -0,0 +1 @@',
    '+diff --git a/not/a/header.py b/not/a/header.py',
    'diff --git a/pkg/models.py b/pkg/models.py',
  ].join('\n');
  assert.deepEqual(patchFiles(patch), ['pkg/models.py', 'pkg/new.py']);
});

test('a hit at k needs every gold file among the first k distinct files', () => {
  const answer = ['a.py', 'a.py', 'b.py', 'c.py', 'd.py'];
  assert.equal(hitAt(answer, ['b.py'], 1), false);
  assert.equal(hitAt(answer, ['b.py'], 3), true); // distinct: a, b, c
  assert.equal(hitAt(answer, ['a.py', 'd.py'], 3), false); // d is 4th
  assert.equal(hitAt(answer, ['a.py', 'd.py'], 5), true);
  // More gold files than k: the first k must all be gold (LocAgent's min(k, |gold|)).
  assert.equal(hitAt(answer, ['a.py', 'c.py'], 1), true);
  assert.equal(hitAt(answer, ['b.py', 'c.py'], 1), false);
  assert.equal(hitAt(answer, [], 5), false);
  assert.equal(allGoldRank(answer, ['a.py', 'd.py']), 4);
  assert.equal(allGoldRank(answer, ['a.py', 'x.py']), 0);
  const m = accuracy([{ files: answer, gold: ['b.py'], tokens: 10 }, { files: answer, gold: ['x.py'], tokens: 30 }]);
  assert.deepEqual([m['Acc@1'], m['Acc@3'], m.tokens, m.n], [0, 0.5, 20, 2]);
});

test('26 instances are left out, 274 of 300 remain', () => {
  assert.equal(EXCLUDED.size, 26);
  assert.ok(EXCLUDED.has('django__django-15902') && EXCLUDED.has('sympy__sympy-21614'));
});

test('a statement names a file by its path, its path from a package on, or its bare name', () => {
  const file = 'seaborn/_core/scales.py';
  assert.equal(namedIn('File "/usr/lib/site-packages/seaborn/_core/scales.py:351"', file), 'path');
  assert.equal(namedIn('see scales.py', file), 'name');
  assert.equal(namedIn('see test_scales.py', file), null);
});
