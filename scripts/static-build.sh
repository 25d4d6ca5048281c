#!/usr/bin/env bash
# Builds the fully static x86_64 binary the container image ships (glibc linked statically:
# `-C target-feature=+crt-static` on the gnu target, since the musl target cannot be installed on
# every build machine) and proves it needs nothing from the host: it runs `version` and
# `simulate` (built-in scenario and a file) in an empty root directory, as the numeric non-root
# UID/GID the controller Deployment's securityContext uses, with an empty environment.
#
#   scripts/static-build.sh            # builds into $CARGO_TARGET_DIR (default: target/), then runs
#
# The UID is read from crates/karpenter-capi-core/templates/workload/deployment.yaml.j2 (runAsUser), so the two cannot drift.
# As root the empty root is entered with `chroot --userspec`; otherwise with an unprivileged user
# namespace (`unshare --map-user/--map-group --root`), which needs no privilege.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-gnu
bin=kubectl-karpenter_capi
uid="$(sed -n 's/^ *runAsUser: *\([0-9][0-9]*\) *$/\1/p' crates/karpenter-capi-core/templates/workload/deployment.yaml.j2 | head -n1)"
gid="$(sed -n 's/^ *runAsGroup: *\([0-9][0-9]*\) *$/\1/p' crates/karpenter-capi-core/templates/workload/deployment.yaml.j2 | head -n1)"
if [ -z "$uid" ] || [ -z "$gid" ]; then
    echo "static-build: no numeric runAsUser/runAsGroup in crates/karpenter-capi-core/templates/workload/deployment.yaml.j2" >&2
    exit 2
fi

export CARGO_TERM_COLOR=never
start=$(date +%s)
RUSTFLAGS="-C target-feature=+crt-static" cargo build --locked --release --target "$target" --bin "$bin"
end=$(date +%s)
out="${CARGO_TARGET_DIR:-target}/$target/release/$bin"

# Static: no program interpreter and no shared libraries needed.
if readelf -l "$out" | grep -q 'Requesting program interpreter'; then
    echo "static-build: $out has a program interpreter (dynamically linked)" >&2
    exit 1
fi
if readelf -d "$out" | grep -q '(NEEDED)'; then
    echo "static-build: $out needs shared libraries:" >&2
    readelf -d "$out" | grep '(NEEDED)' >&2
    exit 1
fi

# The empty root: the binary, one scenario file and the runtime's default devices, nothing else
# (no /etc, /tmp, /proc, libc).
root="$(mktemp -d "${TMPDIR:-/tmp}/karpenter-capi-root.XXXXXX")"
trap 'rm -rf "$root"' EXIT
cp "$out" "$root/$bin"
cp crates/karpenter-capi-core/scenarios/default.yaml "$root/scenario.yaml"
chmod 0755 "$root" "$root/$bin"
chmod 0644 "$root/scenario.yaml"
# The character devices every OCI runtime puts in a container's /dev, even on `FROM scratch`
# (runtime-spec "Default Devices"): the binary's hash seeds read /dev/urandom (a static glibc
# binary has no dlsym'd getrandom, so the getrandom crate falls back to the file). Only root
# can create them; without them `version` still runs and `simulate` aborts on the seed.
if [ "$(id -u)" = 0 ]; then
    mkdir -m 0755 "$root/dev"
    mknod -m 0666 "$root/dev/null" c 1 3
    mknod -m 0666 "$root/dev/zero" c 1 5
    mknod -m 0666 "$root/dev/random" c 1 8
    mknod -m 0666 "$root/dev/urandom" c 1 9
fi

# Resolved before the environment is emptied (env -i leaves no PATH; chroot is in /usr/sbin).
chroot_bin="$(command -v chroot || true)"
unshare_bin="$(command -v unshare || true)"
in_empty_root() {
    if [ "$(id -u)" = 0 ] && [ -n "$chroot_bin" ]; then
        env -i "$chroot_bin" --userspec="$uid:$gid" "$root" "/$bin" "$@"
    else
        env -i "$unshare_bin" --user --map-user="$uid" --map-group="$gid" --root="$root" "/$bin" "$@"
    fi
}

echo "== built in $((end - start)) s: $(stat -c %s "$out") bytes ($(du -h "$out" | cut -f1)), static"
echo "== empty root $root: $(find "$root" -mindepth 1 | sed "s|$root||" | sort | tr '\n' ' ')"
echo "== as uid $uid gid $gid: version"
in_empty_root version
echo "== as uid $uid gid $gid: simulate (built-in scenario)"
in_empty_root simulate
echo "== as uid $uid gid $gid: simulate -f /scenario.yaml -o wide"
in_empty_root simulate -f /scenario.yaml -o wide
echo "== ok"
