#!/usr/bin/env node
'use strict';
// The `aidlc` command of the npm package: find the binary of this platform's optional
// dependency (@aidlc-engine/cli-<os>-<cpu>[-musl]) and run it with the same arguments, stdin,
// stdout and stderr, then exit as it exited (the same status, or the same signal).

const { spawn } = require('node:child_process');
const os = require('node:os');

const { PLATFORMS, currentPlatform, currentDescription, describe, resolveBinary } = require('../lib/platform.js');

function fail(lines) {
  process.stderr.write(lines.map((line) => `${line}\n`).join(''));
  process.exit(2);
}

const entry = currentPlatform();
if (entry === null) {
  fail([
    `error: aidlc has no prebuilt binary for this platform: ${currentDescription()}`,
    `  the npm package is built for: ${PLATFORMS.map((p) => describe(p.os, p.cpu, p.libc)).join(', ')}`,
    '  help: build it from source with cargo instead: `cargo install --locked --path .` in a clone of the aidlc repository',
  ]);
}

let binary;
try {
  binary = resolveBinary(entry);
} catch (error) {
  fail([
    `error: the aidlc binary for ${currentDescription()} is not installed: ${entry.package} is missing (${error.code ?? error.message})`,
    '  help: npm skips optional dependencies with --omit=optional (or --no-optional); reinstall aidlc without it,',
    `        or with npm install ${entry.package}`,
  ]);
}

const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });

// Ctrl-C reaches the whole foreground process group, so aidlc has its SIGINT already: the
// launcher only waits, and exits as aidlc does (aidlc records its interrupted fires first).
// SIGTERM and SIGHUP are usually sent to this process alone (a hook runner's timeout), so they
// are passed on.
process.on('SIGINT', () => {});
for (const signal of ['SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
  });
}

child.on('error', (error) => {
  fail([`error: cannot run ${binary}: ${error.message}`]);
});

child.on('exit', (code, signal) => {
  if (signal !== null) {
    // Die of the same signal, so the caller sees what it would have seen without the launcher.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (os.constants.signals[signal] ?? 0)), 1000).unref();
    return;
  }
  process.exit(code ?? 1);
});
