#!/usr/bin/env bash
# What each speed twin gains on the commands people run (the figures in benches/whole_process.rs,
# "What the speed twins gain"): instruction counts under valgrind's callgrind of one release build
# in which each twin can be bypassed, both sides in the same run. Not part of `.ci/run`: it builds
# a release binary (many minutes) and needs valgrind.
#
#   bash benches/twins.sh
#   AIDLC_TWINS_BINARY=/path/to/bypassable/aidlc bash benches/twins.sh   # skip the build
#
# The build is this commit with benches/twins_bypass.patch applied, in a scratch worktree: the
# patch adds `TWIN_OFF` (a comma-separated list of `pw`, the graph's writer, `seg`, the segment
# glob matcher, `qp`, the quick argument reader, `ys`, the YAML block subset reader), read once
# per process, which routes the compile, the glob match, the argument parse or the frontmatter
# read through the general path (js_json::pretty_json, globset's regex, clap, the general YAML
# parser). The shipped binary has no such switch. When the patch no longer applies,
# the script stops and says so: refresh the patch against the code it bypasses.
#
# Every run must exit 0, and the compile's outputs must be the same bytes with the writer or the
# YAML subset bypassed.
# The report (a Markdown table) goes to stdout, progress to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
repository=$(pwd)
if ! command -v valgrind >/dev/null 2>&1; then
    echo "benches/twins.sh: valgrind is not on PATH (Debian: apt-get install valgrind)" >&2
    exit 2
fi

scratch=$(mktemp -d)
worktree="$scratch/worktree"
cleanup() {
    git -C "$repository" worktree remove --force "$worktree" >/dev/null 2>&1 || true
    rm -rf "$scratch"
}
trap cleanup EXIT

if [ -n "${AIDLC_TWINS_BINARY:-}" ]; then
    binary=$AIDLC_TWINS_BINARY
else
    git worktree add --detach "$worktree" HEAD >&2
    if ! git -C "$worktree" apply "$repository/benches/twins_bypass.patch"; then
        echo "benches/twins.sh: benches/twins_bypass.patch no longer applies to this commit" >&2
        exit 2
    fi
    echo "building the bypassable binary (release)…" >&2
    (cd "$worktree" && cargo build --release --locked --bin aidlc >&2)
    binary="${CARGO_TARGET_DIR:-$worktree/target}/release/aidlc"
fi

# The variables that would point the binary at another project's folders.
layout_unset=()
for name in AIDLC_PROJECT_DIR CLAUDE_PROJECT_DIR AIDLC_SENSORS_DIR AIDLC_STAGES_DIR \
    AIDLC_AGENTS_DIR AIDLC_SCOPES_DIR AIDLC_RULES_DIR AIDLC_STAGE_GRAPH AIDLC_SCOPE_GRID; do
    layout_unset+=(-u "$name")
done

# Instructions of one run of the binary with TWIN_OFF=$1 in folder $2, arguments after that;
# stdin from $STDIN_FILE (or /dev/null).
instructions() {
    local off=$1 folder=$2
    shift 2
    local log="$scratch/callgrind.log"
    (cd "$folder" && env "${layout_unset[@]}" TWIN_OFF="$off" valgrind --tool=callgrind \
        --callgrind-out-file=/dev/null --log-file="$log" "$binary" "$@" \
        <"${STDIN_FILE:-/dev/null}" >/dev/null 2>&1) || {
        echo "benches/twins.sh: $* failed with TWIN_OFF=$off" >&2
        exit 1
    }
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log"
}

# A copy of the vendored 2.6.54 install with an intent at stage $2 and a one-section $3, and the
# hook's PostToolUse payload for a write of it.
install_copy() {
    local root=$1 stage=$2 deliverable=$3 record=aidlc/spaces/default/intents/260901-bench
    cp -a tests/fixtures/reference-installs/2.6.54 "$root"
    mkdir -p "$root/$record" "$(dirname "$root/$deliverable")"
    printf '# AI-DLC State Tracking\n\n## Current Status\n- **Current Stage**: %s\n' "$stage" \
        >"$root/$record/aidlc-state.md"
    printf '# Requirements\n\n## Scope\n\nOne section only.\n' >"$root/$deliverable"
    printf '{"tool_name":"Write","tool_input":{"file_path":"%s"}}' "$root/$deliverable" \
        >"$root/.bench-payload.json"
    # As in whole_process's hook rows: one fire first, so the hook finds the clone's shard.
    (cd "$root" && "$binary" compile --force >/dev/null 2>&1 &&
        "$binary" engine sensor fire required-sections --stage "$stage" \
            --output-path "$deliverable" >/dev/null 2>&1)
}

requirements=aidlc/spaces/default/intents/260901-bench/inception/requirements-analysis/requirements.md
statement=aidlc/spaces/default/intents/260901-bench/ideation/intent-capture/intent-statement.md
install_copy "$scratch/one" requirements-analysis "$requirements"
install_copy "$scratch/three" intent-capture "$statement"
mkdir "$scratch/default"
(cd "$scratch/default" && "$binary" init >/dev/null 2>&1 && "$binary" compile >/dev/null 2>&1)

graph=.claude/tools/data/stage-graph.json
grid=.claude/tools/data/scope-grid.json
for project in default one; do
    cp "$scratch/$project/$graph" "$scratch/graph" && cp "$scratch/$project/$grid" "$scratch/grid"
    for off in pw ys; do
        (cd "$scratch/$project" && TWIN_OFF=$off "$binary" compile --force >/dev/null 2>&1)
        cmp "$scratch/$project/$graph" "$scratch/graph" &&
            cmp "$scratch/$project/$grid" "$scratch/grid"
    done
done

# One row: the command, the twin, instructions with it and through the general path.
row() {
    local name=$1 twin=$2 off=$3 folder=$4
    shift 4
    local with without
    # The general path first: each hook run adds rows to the ledger the next one reads, so any
    # bias is against the twin.
    without=$(instructions "$off" "$folder" "$@")
    with=$(instructions "" "$folder" "$@")
    awk -v name="$name" -v twin="$twin" -v with="$with" -v without="$without" 'BEGIN {
        printf "| %s | %s | %.2f M | %.2f M | %+.0f %% |\n", name, twin, with / 1e6, without / 1e6,
            (without / with - 1) * 100 }'
}

echo "| command | twin | with it | general path | cost of the general path |"
echo "| --- | --- | --- | --- | --- |"
row "\`aidlc compile --force\`, default framework" "\`pretty_writer\`" pw "$scratch/default" \
    compile --force
row "\`aidlc compile --force\`, default framework" "YAML block subset" ys "$scratch/default" \
    compile --force
row "\`aidlc compile --force\`, 2.6.54 install" "YAML block subset" ys "$scratch/one" \
    compile --force
STDIN_FILE="$scratch/one/.bench-payload.json" row "hook, matching write" "glob \`segments\`" seg \
    "$scratch/one" engine hook run-sensors
STDIN_FILE="$scratch/three/.bench-payload.json" row "hook, three document sensors" \
    "glob \`segments\`" seg "$scratch/three" engine hook run-sensors
STDIN_FILE="$scratch/one/.bench-payload.json" row "hook, matching write" "\`quick_parse\`" qp \
    "$scratch/one" engine hook run-sensors
STDIN_FILE="$scratch/three/.bench-payload.json" row "hook, three document sensors" \
    "\`quick_parse\`" qp "$scratch/three" engine hook run-sensors
row "\`engine sensor fire required-sections\`" "\`quick_parse\`" qp "$scratch/one" \
    engine sensor fire required-sections --stage requirements-analysis \
    --output-path "$requirements"
echo
echo "\`aidlc --version\`: $(instructions "" "$scratch/one" --version) instructions."
