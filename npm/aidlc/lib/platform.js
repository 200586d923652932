'use strict';
// Which per-platform package holds the aidlc binary for the machine Node runs on. The one
// table is platforms.json beside this file; the launcher (bin/aidlc.js) and the packer
// (npm/pack) both ask this module, so they cannot disagree.

const fs = require('node:fs');
const path = require('node:path');

const PLATFORMS = require('./platforms.json');

// glibc or musl on Linux (a binary linked against one does not run on the other); null elsewhere.
// The C library Node itself was loaded with answers it: reading /proc/self/maps costs well under
// a millisecond, where process.report.getReport() (the fallback) costs tens.
function currentLibc() {
  if (process.platform !== 'linux') {
    return null;
  }
  try {
    const maps = fs.readFileSync('/proc/self/maps', 'utf8');
    if (maps.includes('/ld-musl-') || maps.includes('/libc.musl-')) {
      return 'musl';
    }
    if (maps.includes('/libc.so.6')) {
      return 'glibc';
    }
  } catch {
    // No /proc: ask the diagnostic report instead.
  }
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
  return report?.header?.glibcVersionRuntime ? 'glibc' : 'musl';
}

// `linux-x64 (glibc)`, `darwin-arm64`: how messages name a machine.
function describe(os, cpu, libc) {
  return libc ? `${os}-${cpu} (${libc})` : `${os}-${cpu}`;
}

// The table's entry for this machine, or null when no package is built for it.
function currentPlatform() {
  const libc = currentLibc();
  return (
    PLATFORMS.find(
      (entry) => entry.os === process.platform && entry.cpu === process.arch && entry.libc === libc,
    ) ?? null
  );
}

function currentDescription() {
  return describe(process.platform, process.arch, currentLibc());
}

// The absolute path of the binary inside the installed platform package. Throws when the
// package is not installed (require.resolve's MODULE_NOT_FOUND).
function resolveBinary(entry, paths) {
  return require.resolve(path.posix.join(entry.package, entry.binary), paths ? { paths } : undefined);
}

module.exports = { PLATFORMS, currentPlatform, currentDescription, describe, resolveBinary };
