#!/usr/bin/env bash
# `make bench`: every benchmark. Arguments go to each bench script (e.g. `--quick`);
# `BENCH="search code"` runs only those (names are the bench_<name>.py files).
#
# Wordle (textgyms vs TextArena vs GEM) runs in its own venv, because the peers pin their own
# dependencies:
# 1. creates the bench venv .venv-bench at the repo root (once),
# 2. installs the pinned peers (benchmarks/requirements-bench.txt) and textgyms (pip install -e .),
#    skipping both when nothing they depend on changed since the last run,
# 3. builds the offline NLTK data in benchmarks/.cache/nltk_data (once),
# 4. runs benchmarks/bench_wordle.py with NLTK_DATA pointing there.
# The family and ecosystem benchmarks (bench_<name>.py) run in the project's .venv, which
# `make bench` has set up with every extra and the peers they compare against.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-bench"
PY="$VENV/bin/python"
REQS="$ROOT/benchmarks/requirements-bench.txt"
CACHE="$ROOT/benchmarks/.cache"
STAMP_DIR="$VENV/.textgyms-bench"
FAILURES="$CACHE/install-failures.tsv"  # read by bench_wordle.py
export BENCH_INSTALL_FAILURES="$FAILURES"
export NLTK_DATA="$CACHE/nltk_data"
export PIP_DISABLE_PIP_VERSION_CHECK=1

log() { printf '==> %s\n' "$*"; }

fingerprint() {  # sha256 of the given files' contents
    cat "$@" | sha256sum | cut -d' ' -f1
}

ensure_venv() {
    if [[ -x "$PY" ]] && "$PY" -c 'import sys; assert sys.version_info >= (3, 10)' 2>/dev/null; then
        return
    fi
    local base="${PYTHON:-python3}"
    log "creating $VENV with $("$base" --version 2>&1)"
    rm -rf "$VENV"
    "$base" -m venv "$VENV"
}

install_if_changed() {  # name, fingerprint, command...; a failure is recorded, not fatal
    local name="$1" want="$2"; shift 2
    local stamp="$STAMP_DIR/${name//[^A-Za-z0-9._-]/_}"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        log "$name: already installed (skipping)"
        return
    fi
    log "$name: installing"
    local out
    if out="$("$@" 2>&1 </dev/null)"; then
        mkdir -p "$STAMP_DIR"
        printf '%s' "$want" > "$stamp"
    else
        printf '%s\n' "$out" | tail -n 20 >&2
        printf '%s\t%s\n' "$name" "$(printf '%s' "$out" | grep -v '^\s*$' | tail -n 1)" >> "$FAILURES"
        log "$name: INSTALL FAILED (recorded in $FAILURES; the benchmark goes on without it)"
    fi
}

install_requirements() {  # one pip call per line of requirements-bench.txt
    local req
    while IFS= read -r req; do
        req="${req%%#*}"; req="${req//[[:space:]]/}"
        [[ -z "$req" ]] && continue
        install_if_changed "$req" "$req" "$PY" -m pip install --quiet "$req"
    done < "$REQS"
}

wanted() {  # is benchmark $1 selected by $BENCH (default: all)?
    [[ -z "${BENCH:-}" ]] && return 0
    [[ " $BENCH " == *" $1 "* ]]
}

run_family_benches() {
    local script name
    for script in "$ROOT"/benchmarks/bench_*.py; do
        name="$(basename "$script" .py)"; name="${name#bench_}"
        [[ "$name" == wordle ]] && continue
        wanted "$name" || continue
        log "running benchmarks/bench_$name.py $*"
        "$ROOT/.venv/bin/python" "$script" "$@"
    done
}

run_wordle() {
    ensure_venv
    mkdir -p "$CACHE"
    : > "$FAILURES"
    install_requirements
    install_if_changed textgyms "$(fingerprint "$ROOT/pyproject.toml")" \
        "$PY" -m pip install --quiet -e "$ROOT"
    if "$PY" -c 'import torch' 2>/dev/null; then
        log "note: torch is present in $VENV (not needed by the Wordle benchmark)"
    fi
    log "offline NLTK data"
    "$PY" "$ROOT/benchmarks/build_nltk_data.py" "$NLTK_DATA" \
        || log "NLTK data NOT built: the peers will be reported as not measured"
    log "running benchmarks/bench_wordle.py $*"
    "$PY" "$ROOT/benchmarks/bench_wordle.py" "$@"
}

main() {
    cd "$ROOT"
    if wanted wordle; then run_wordle "$@"; fi
    run_family_benches "$@"
}

main "$@"
