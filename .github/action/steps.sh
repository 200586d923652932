#!/usr/bin/env bash
# The shell steps of the aidlc GitHub Action (`action.yml` at the repository root), one
# function per step, chosen by the first argument:
#
#   steps.sh fingerprint   the build cache's path and key (outputs `path` and `key`)
#   steps.sh install       install aidlc with cargo (unless the cache restored it) or npm
#   steps.sh run           run `aidlc <args>` and record its exit status (output `exit-code`)
#
# Every input arrives in an environment variable (`action.yml` never expands `${{ }}` inside a
# script), so an input's text can never become shell code. The action runs this file with
# bash, as `bash "$AIDLC_ACTION_PATH/.github/action/steps.sh" STEP`; `tests/it/install.rs`
# runs it the same way, with fake `cargo`, `npm` and `aidlc` programs.
set -euo pipefail

# `.exe` on a Windows runner, where cargo installs `aidlc.exe`; nothing elsewhere.
executable_suffix() {
  if [ "${RUNNER_OS:-}" = "Windows" ]; then
    printf '.exe'
  fi
}

# Where `cargo install` puts aidlc on the runner images (`CARGO_HOME` is `~/.cargo` there).
cargo_installed_binary() {
  printf '%s/.cargo/bin/aidlc%s' "$HOME" "$(executable_suffix)"
}

# Inputs: AIDLC_ACTION_PATH (this action's source), AIDLC_VERSION.
# Outputs: `path`, the installed binary as actions/cache reads it (`~` is its home folder), and
# `key`: `version-<version>` when a version is named, else a hash of the files the build reads,
# so that a cached build is reused exactly while its source is unchanged.
fingerprint() {
  local sum key
  if command -v sha256sum >/dev/null 2>&1; then
    sum=(sha256sum)
  else
    sum=(shasum -a 256)
  fi
  if [ -n "${AIDLC_VERSION:-}" ]; then
    key="version-$AIDLC_VERSION"
  else
    key="source-$(cd "$AIDLC_ACTION_PATH" && find Cargo.toml Cargo.lock src -type f -print0 | LC_ALL=C sort -z | xargs -0 "${sum[@]}" | "${sum[@]}" | cut -c1-32)"
  fi
  {
    echo "path=~/.cargo/bin/aidlc$(executable_suffix)"
    echo "key=$key"
  } >>"$GITHUB_OUTPUT"
}

# Inputs: AIDLC_INSTALL (`cargo` or `npm`), AIDLC_VERSION, AIDLC_ACTION_PATH,
# AIDLC_ACTION_REPOSITORY (owner/name, for `cargo install --git`), AIDLC_CACHE_HIT (the
# restore step's `cache-hit`), GITHUB_SERVER_URL.
install() {
  local version
  case "${AIDLC_INSTALL:-}" in
    cargo)
      if [ "${AIDLC_CACHE_HIT:-}" = "true" ] && "$(cargo_installed_binary)" --version >/dev/null 2>&1; then
        echo "aidlc restored from the cache"
      elif [ -n "${AIDLC_VERSION:-}" ]; then
        cargo install --locked --git "${GITHUB_SERVER_URL:-https://github.com}/$AIDLC_ACTION_REPOSITORY" --tag "v$AIDLC_VERSION" aidlc
      else
        cargo install --locked --path "$AIDLC_ACTION_PATH"
      fi
      ;;
    npm)
      version="${AIDLC_VERSION:-}"
      if [ -z "$version" ]; then
        version="$(node -p 'require(process.argv[1]).version' "$AIDLC_ACTION_PATH/npm/aidlc/package.json")"
      fi
      npm install --global --no-audit --no-fund "aidlc@$version"
      ;;
    *)
      echo "::error title=aidlc action::install must be cargo or npm, not '${AIDLC_INSTALL:-}'"
      exit 2
      ;;
  esac
  aidlc --version
}

# Inputs: AIDLC_ARGS. Output: `exit-code`, aidlc's exit status, which is also this step's.
#
# `args` is split on whitespace, newlines included, so a multi-line `args:` (a YAML block
# scalar) is one command over several lines; there is no shell quoting, and `read` does no
# globbing, so `*` reaches aidlc as it is.
run() {
  local arguments=() status=0
  IFS=$' \t\n' read -r -d '' -a arguments <<<"${AIDLC_ARGS:-}" || true
  if [ "${#arguments[@]}" -eq 0 ]; then
    echo "::error title=aidlc action::args holds only whitespace: name the aidlc command to run, or leave args empty to only install aidlc"
    echo "exit-code=2" >>"$GITHUB_OUTPUT"
    exit 2
  fi
  aidlc "${arguments[@]}" || status=$?
  echo "exit-code=$status" >>"$GITHUB_OUTPUT"
  exit "$status"
}

case "${1:-}" in
  fingerprint) fingerprint ;;
  install) install ;;
  run) run ;;
  *)
    echo "::error title=aidlc action::unknown step '${1:-}': expected fingerprint, install or run"
    exit 2
    ;;
esac
