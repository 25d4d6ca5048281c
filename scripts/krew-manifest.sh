#!/usr/bin/env bash
# Fills the krew manifest template (plugins/karpenter-capi.yaml) from the release archives: the
# version, the GitHub repository and each platform archive's sha256. Refuses a missing archive and
# any placeholder left unfilled, so a half-filled manifest is never printed.
#
#   scripts/krew-manifest.sh VERSION REPOSITORY DIST_DIR > karpenter-capi.yaml
#       VERSION     without the leading v (Cargo.toml's version), e.g. 0.1.0
#       REPOSITORY  owner/name on GitHub
#       DIST_DIR    holds kubectl-karpenter_capi-v<VERSION>-<target>.tar.gz for the four targets
#
# .github/workflows/release.yml runs it; tests/it/packaging.rs runs it on fake archives.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -ne 3 ]; then
    echo "usage: scripts/krew-manifest.sh VERSION REPOSITORY DIST_DIR" >&2
    exit 2
fi
version="$1" repository="$2" dist="$3"
case "$version" in
v*) echo "krew-manifest: VERSION $version: give it without the leading v" >&2; exit 2 ;;
esac

sha256() {
    if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

text="$(cat plugins/karpenter-capi.yaml)"
text="${text//@VERSION@/$version}"
text="${text//@REPOSITORY@/$repository}"
for pair in LINUX_AMD64=x86_64-unknown-linux-musl LINUX_ARM64=aarch64-unknown-linux-musl \
    DARWIN_AMD64=x86_64-apple-darwin DARWIN_ARM64=aarch64-apple-darwin; do
    platform="${pair%%=*}" target="${pair#*=}"
    archive="$dist/kubectl-karpenter_capi-v$version-$target.tar.gz"
    if [ ! -f "$archive" ]; then
        echo "krew-manifest: $archive is missing (the $platform archive)" >&2
        exit 1
    fi
    text="${text//@SHA256_${platform}@/$(sha256 "$archive")}"
done
if left="$(grep -nE '@[A-Z0-9_]+@' <<<"$text")"; then
    echo "krew-manifest: placeholders left unfilled:" >&2
    echo "$left" >&2
    exit 1
fi
printf '%s\n' "$text"
