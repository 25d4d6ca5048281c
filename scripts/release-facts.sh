#!/usr/bin/env bash
# Prints the README's packaging facts for a release build: the sizes of the plugin and its
# completion helper, and how long `--help` takes (best and median of 200 runs, directly and
# through kubectl when it is on the PATH).
#
#   scripts/release-facts.sh [TARGET_DIR]   # default: ./target; builds `--release` if missing
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-target}"
plugin="$dir/release/kubectl-karpenter_capi"
helper="$dir/release/kubectl_complete-karpenter_capi"
if [ ! -x "$plugin" ] || [ ! -x "$helper" ]; then
    CARGO_TARGET_DIR="$dir" cargo build --release --locked --bins
fi

# Best and median wall time, in ms, of 200 runs of "$@".
times_ms() {
    local i start end
    for i in $(seq 200); do
        start=$(date +%s%N)
        "$@" >/dev/null 2>&1
        end=$(date +%s%N)
        echo $(((end - start) / 1000))
    done | sort -n | awk '{a[NR] = $1} END {printf "%.1f ms at best, %.1f ms median", a[1] / 1000, a[int((NR + 1) / 2)] / 1000}'
}

kib() { echo $(($(stat -c %s "$1") / 1024)); }
echo "release binaries in $dir, checkout at $(git rev-parse --short HEAD) ($(uname -m), $(rustc --version | cut -d' ' -f2))"
echo "  plugin $(kib "$plugin") KiB, completion helper $(kib "$helper") KiB"
echo "  --help: $(times_ms "$plugin" --help)"
if command -v kubectl >/dev/null; then
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    ln -s "$(cd "$(dirname "$plugin")" && pwd)/$(basename "$plugin")" "$tmp/kubectl-karpenter_capi"
    echo "  kubectl karpenter-capi --help: $(PATH="$tmp:$PATH" times_ms kubectl karpenter-capi --help)"
    echo "  kubectl version --client: $(times_ms kubectl version --client)"
fi
