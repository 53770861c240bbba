'use strict';
// tests/private-tmp.js - spawn() for a server whose PAM runs under
// pam_wrapper (the demo does): through tests/private-tmp, which gives it a
// /tmp of its own (why: see there), keeping the directories directly under
// /tmp that the given paths live in.
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

function topOfTmp(p) {
  const m = /^\/tmp\/([^/]+)/.exec(path.resolve(p));
  return m && fs.existsSync('/tmp/' + m[1]) && fs.statSync('/tmp/' + m[1]).isDirectory()
    ? '/tmp/' + m[1] : null;
}

function spawnPrivateTmp(argv, keepPaths, opts) {
  const keep = [...new Set(keepPaths.concat([argv[0], __dirname]).map(topOfTmp)
    .filter(Boolean))];
  return spawn(path.join(__dirname, 'private-tmp'), keep.concat(['--'], argv), opts);
}

module.exports = { spawnPrivateTmp };
