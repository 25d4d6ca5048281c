#!/usr/bin/env bash
# Measures a new user's first hour: the README's two commands on a fresh clone, each timed, plus
# how many crates the second one compiles again (0 when dev-dependencies change no features),
# and the sizes of the binaries they built. Prints the numbers the README quotes.
#
#   scripts/first-hour.sh [REPO]     # REPO: what to clone (default: this checkout's repository)
#
# The clone gets its own target directory, so the build is cold; crates already in ~/.cargo are
# not downloaded again (a first-ever build also downloads them, which this does not count).
# ../shared is linked beside the clone, as CI lays it out, for the tests that read it.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
repo="${1:-$here}"
work="$(mktemp -d "${TMPDIR:-/tmp}/karpenter-capi-first-hour.XXXXXX")"
trap 'rm -rf "$work"' EXIT

git clone --quiet "$repo" "$work/kubectl-karpenter-capi"
if [ -d "$here/../shared" ]; then
    ln -s "$(cd "$here/../shared" && pwd)" "$work/shared"
fi
cd "$work/kubectl-karpenter-capi"
commit="$(git rev-parse --short HEAD)"
export CARGO_TERM_COLOR=never
unset CARGO_TARGET_DIR

# Seconds (one decimal) that "$@" takes; its stderr goes to $log. A failing command is reported
# with the end of its log, and the script goes on to print what it measured.
status=0
timed() {
    local start end rc=0
    start=$(date +%s.%N)
    "$@" >"$work/out" 2>"$log" || rc=$?
    end=$(date +%s.%N)
    if [ "$rc" -ne 0 ]; then
        status=$rc
        { echo "FAILED ($rc): $*"; tail -n 40 "$work/out" "$log"; } >&2
    fi
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }'
}

log="$work/run.log"
run_s=$(timed cargo run -- simulate)
run_crates=$(grep -c '^ *Compiling ' "$log" || true)
log="$work/test.log"
test_s=$(timed cargo test)
test_crates=$(grep -c '^ *Compiling ' "$log" || true)
# Registry crates (name and version) the second command compiles that the first had compiled
# already. The workspace's own packages (a path in parentheses) are left out: the second command
# compiles their test targets, which is no rebuild.
compiled() { grep '^ *Compiling ' "$1" | grep -v ' (/' | awk '{print $2, $3}' | sort -u || true; }
rebuilt=$(comm -12 <(compiled "$work/run.log") <(compiled "$work/test.log") | tr '\n' ' ')
# Test results go to standard output; a missing count is 0, not the end of the script.
passed=$({ grep -Eo '[0-9]+ passed' "$work/out" || true; } | awk '{s += $1} END {print s + 0}')
failed=$({ grep -Eo '[0-9]+ failed' "$work/out" || true; } | awk '{s += $1} END {print s + 0}')
size=$(du -k target/debug/kubectl-karpenter_capi | cut -f1)
target_mb=$(du -sm target | cut -f1)

cat <<REPORT
first hour on a fresh clone of $commit ($(nproc) cores, $(uname -m), $(rustc --version | cut -d' ' -f2))
  cargo run -- simulate   ${run_s} s   (${run_crates} crates compiled)
  cargo test              ${test_s} s   (${test_crates} crates compiled; ${passed} tests passed, ${failed} failed)
  dependencies compiled again by cargo test: ${rebuilt:-none}
  debug binary ${size} KB; target/ ${target_mb} MB
REPORT
exit "$status"
