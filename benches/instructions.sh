#!/usr/bin/env bash
# Instruction counts of the release `aidlc` binary under valgrind's callgrind, each beside
# `aidlc --version` and `cat` of the same inputs counted in the same run (benches/instructions.rs
# says what each case runs). Not part of `.ci/run`: it takes minutes and needs valgrind.
#
#   bash benches/instructions.sh                        # every case, 10,000 stages
#   AIDLC_BENCH_STAGES=1000 bash benches/instructions.sh
#   AIDLC_BENCH_CASES=version,default bash benches/instructions.sh
#   AIDLC_BENCH_BINARY=/path/to/other/aidlc bash benches/instructions.sh   # compare two builds
#
# The report (a Markdown table) goes to stdout, progress to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null 2>&1; then
    echo "benches/instructions.sh: valgrind is not on PATH (Debian: apt-get install valgrind)" >&2
    exit 2
fi
exec cargo bench --locked --bench instructions
