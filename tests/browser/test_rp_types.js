/*
 * test_rp_types.js - www/rp.d.ts checked by the real TypeScript compiler
 * (typescript from npm, in node_modules): types/example.ts, a website's use
 * of rp.js, must compile under --strict, and each of its @ts-expect-error
 * lines must be an error (a declaration too loose to catch the mistake
 * makes tsc fail with "Unused '@ts-expect-error' directive").
 */
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const TSC = path.join(__dirname, 'node_modules', 'typescript', 'bin', 'tsc');
if (!fs.existsSync(TSC)) {
  console.log('typescript missing (run tests/browser/setup.sh): skipping');
  process.exit(77);
}

const example = path.join(__dirname, 'types', 'example.ts');
const r = spawnSync(process.execPath, [TSC, '--noEmit', '--strict', '--target', 'es2017',
  '--lib', 'es2017,dom', '--module', 'esnext', '--moduleResolution', 'bundler', example],
{ encoding: 'utf8' });
const expected = (fs.readFileSync(example, 'utf8').match(/@ts-expect-error/g) || []).length;
const ok = r.status === 0 && expected >= 6;
console.log(r.stdout + r.stderr);
console.log(`${ok ? 'ok  ' : 'FAIL'} rp.d.ts: the example compiles, its ${expected} mistakes are caught`);
console.log(`${ok ? 1 : 0} passed, ${ok ? 0 : 1} failed`);
process.exit(ok ? 0 : 1);
