# The controller image `init` names (ghcr.io/karpenter-capi/kubectl-karpenter-capi:<version>).
#
# Two ways to build it, one file:
#
#   docker build -t ghcr.io/karpenter-capi/kubectl-karpenter-capi:v0.1.0 .
#       From source, for the builder's own architecture (amd64 or arm64): stage `build` makes the
#       same fully static binary as scripts/static-build.sh (glibc linked statically on the gnu
#       target of `uname -m`), the last stage is that one file on an empty base.
#
#   docker buildx build --platform linux/amd64,linux/arm64 --target release \
#       --build-context binaries=dist/image -t ghcr.io/karpenter-capi/kubectl-karpenter-capi:v0.1.0 .
#       What .github/workflows/release.yml runs: the static musl binaries the release built and
#       checksummed (dist/image/<amd64|arm64>/kubectl-karpenter_capi), one per platform. Nothing
#       runs inside the image build, so no emulation is needed for the foreign architecture.
#
# Either way the image runs as the numeric UID/GID the Deployment's securityContext sets
# (runAsUser/runAsGroup 65532) and needs no libc, no /etc and no CA bundle on disk: the API
# server's CA comes from the ServiceAccount mount or the kubeconfig. scripts/static-build.sh runs
# the binary in an empty root as 65532 to prove it. Linted by scripts/lint-release.sh (hadolint).
ARG RUST_VERSION=1.95
FROM docker.io/library/rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
# The commit for `version`, when the build context has no .git (see .dockerignore).
ARG GIT_COMMIT=""
ENV KARPENTER_CAPI_GIT_COMMIT=${GIT_COMMIT}
RUN target="$(uname -m)-unknown-linux-gnu" \
 && RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --locked --release --target "$target" --bin kubectl-karpenter_capi \
 && cp "target/$target/release/kubectl-karpenter_capi" /kubectl-karpenter_capi

# The release image: a prebuilt static binary per platform from the `binaries` build context.
FROM scratch AS release
ARG TARGETARCH
# `binaries` is a named build context (--build-context), not a stage: hadolint cannot know it.
# hadolint ignore=DL3022
COPY --from=binaries ${TARGETARCH}/kubectl-karpenter_capi /kubectl-karpenter_capi
USER 65532:65532
ENTRYPOINT ["/kubectl-karpenter_capi"]
CMD ["run"]

# The default (last) stage: the binary built from source above.
FROM scratch
COPY --from=build /kubectl-karpenter_capi /kubectl-karpenter_capi
USER 65532:65532
ENTRYPOINT ["/kubectl-karpenter_capi"]
CMD ["run"]
