#!/usr/bin/env bash
# Measures a new user's first hour: the README's two commands on a fresh clone, each timed, plus
# how many crates the second one compiles again (0 when dev-dependencies change no features),
# and the sizes of the binaries they built. Prints the numbers the README quotes.
# Then the first day, with the binary the clone built: `init` for the seed's two-cluster topology
# (Cluster API in a separate management cluster) into a directory, `kubectl kustomize` of the
# three bases it writes (the CRD base's upstream URLs pointed at ../shared/fixtures/crds, as
# offline as CI), and `doctor -f` on everything they build: no error allowed.
#
#   scripts/first-hour.sh [REPO]             # REPO: what to clone (default: this checkout's repository)
#   scripts/first-hour.sh --day-only [REPO]  # only build the binary and run the first day
#
# With --day-only, FIRST_DAY_TARGET_DIR=DIR builds the fresh clone into DIR (an existing build
# cache: dependencies are reused, the clone's own crates compile again); the timed first hour
# always builds cold.
#
# The clone gets its own target directory, so the build is cold; crates already in ~/.cargo are
# not downloaded again (a first-ever build also downloads them, which this does not count).
# ../shared is linked beside the clone, as CI lays it out, for the tests that read it.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
day_only=0
if [ "${1:-}" = "--day-only" ]; then
    day_only=1
    shift
fi
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

if [ "$day_only" -eq 0 ]; then
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
    # `timed` runs in a subshell: a failed test run is counted here.
    if [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then status=1; fi
    size=$(du -k target/debug/kubectl-karpenter_capi | cut -f1)
    target_mb=$(du -sm target | cut -f1)

    cat <<REPORT
first hour on a fresh clone of $commit ($(nproc) cores, $(uname -m), $(rustc --version | cut -d' ' -f2))
  cargo run -- simulate   ${run_s} s   (${run_crates} crates compiled)
  cargo test              ${test_s} s   (${test_crates} crates compiled; ${passed} tests passed, ${failed} failed)
  dependencies compiled again by cargo test: ${rebuilt:-none}
  debug binary ${size} KB; target/ ${target_mb} MB
REPORT
else
    log="$work/build.log"
    if [ -n "${FIRST_DAY_TARGET_DIR:-}" ]; then
        export CARGO_TARGET_DIR="$FIRST_DAY_TARGET_DIR"
    fi
    build_s=$(timed cargo build --bin kubectl-karpenter_capi)
    echo "first day on a fresh clone of $commit: cargo build ${build_s} s"
fi

# The first day: the seed's two-cluster topology, offline. A failing step is reported with its
# output and the script goes on to the next.
day="$work/day"
bin="${CARGO_TARGET_DIR:-$PWD/target}/debug/kubectl-karpenter_capi"
fixtures="$work/shared/fixtures/crds"
mkdir -p "$day"
step() {
    local name=$1
    shift
    if "$@" >"$day/$name.out" 2>"$day/$name.err"; then
        return 0
    fi
    status=1
    { echo "FAILED: $*"; tail -n 40 "$day/$name.out" "$day/$name.err"; } >&2
    return 1
}
init_r="FAILED" kustomize_r="FAILED" doctor_r="FAILED"
if step init "$bin" init -n capi-ovh --cluster-name capi-ovh --kubernetes-version v1.36.1 \
    --infrastructure-kind openstack --machine-image ubuntu-2404-noble \
    --flavor c3-4:cpu=2,memory=4G,price=0.05,zone=nova \
    --flavor c3-8:cpu=4,memory=8G,price=0.10,zone=nova \
    --flavor c3-16:cpu=8,memory=16G,price=0.20,zone=nova \
    --management-kubeconfig "$day/mks.kubeconfig" --yes --output-dir "$day/setup"; then
    files=$(grep -c . "$day/setup/.karpenter-capi-init" || true)
    if grep -q "assuming a self-hosted" "$day/init.err"; then
        status=1
        echo "FAILED: init assumed a self-hosted cluster despite --management-kubeconfig" >&2
    elif grep -q "karpenter-capi-management-kubeconfig" "$day/setup/workload/"*-deployment-*.yaml; then
        init_r="ok ($((files - 2)) files; the controller reads the management kubeconfig from its Secret)"
    else
        status=1
        echo "FAILED: the Deployment does not read the management kubeconfig" >&2
    fi
fi
if [ -d "$fixtures" ] && [ -f "$day/setup/crds/kustomization.yaml" ]; then
    # The CRD base names the upstream files at pinned tags; offline, each is the fixture of
    # that file, copied beside the kustomization (kustomize loads nothing outside its root).
    mkdir -p "$day/crds-offline"
    sed -E 's#https://[^"]*/([^/"]+\.yaml)#\1#' "$day/setup/crds/kustomization.yaml" \
        >"$day/crds-offline/kustomization.yaml"
    for f in $(grep -Eo '[a-z0-9.-]+_[a-z0-9]+\.yaml' "$day/crds-offline/kustomization.yaml"); do
        cp "$fixtures/$f" "$day/crds-offline/"
    done
    if step kustomize-crds kubectl kustomize "$day/crds-offline" &&
        step kustomize-management kubectl kustomize "$day/setup/management" &&
        step kustomize-workload kubectl kustomize "$day/setup/workload"; then
        for b in crds management workload; do
            cat "$day/kustomize-$b.out"
            echo "---"
        done >"$day/built.yaml"
        objects=$(grep -c '^kind:' "$day/built.yaml" || true)
        kustomize_r="ok ($objects objects)"
        if step doctor "$bin" doctor -f "$day/built.yaml"; then
            summary=$(grep -E '^[0-9]+ error\(s\)' "$day/doctor.out" || true)
            case "$summary" in
                "0 error(s)"*) doctor_r="ok ($summary)" ;;
                *)
                    status=1
                    doctor_r="FAILED ($summary)"
                    ;;
            esac
        fi
    fi
elif [ ! -d "$fixtures" ]; then
    echo "FAILED: no CRD fixtures at $fixtures (../shared beside the repository)" >&2
    status=1
fi
cat <<DAY
first day (the seed's two-cluster topology, offline)
  init --management-kubeconfig ... --output-dir setup   ${init_r}
  kubectl kustomize (CRDs from the fixtures), management, workload   ${kustomize_r}
  doctor -f on what they build   ${doctor_r}
DAY
exit "$status"
