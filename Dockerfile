# The controller image `init` names (ghcr.io/karpenter-capi/kubectl-karpenter-capi:<version>).
# Stage 1 builds the same fully static binary as scripts/static-build.sh (glibc linked statically on
# the gnu target); stage 2 is that one file on an empty base, run as the numeric UID/GID the
# Deployment's securityContext sets (runAsUser/runAsGroup 65532). The binary needs no libc, no
# /etc and no CA bundle on disk: the API server's CA comes from the ServiceAccount mount or the
# kubeconfig. scripts/static-build.sh runs that binary in an empty root as 65532 to prove it.
#
#   docker build -t ghcr.io/karpenter-capi/kubectl-karpenter-capi:v0.1.0 .
#
# Not built in this project's CI (no container engine or base images there).
ARG RUST_VERSION=1.95
FROM docker.io/library/rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
# The commit for `version`, when the build context has no .git (see .dockerignore).
ARG GIT_COMMIT=""
ENV KARPENTER_CAPI_GIT_COMMIT=${GIT_COMMIT}
RUN RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --locked --release --target x86_64-unknown-linux-gnu --bin kubectl-karpenter_capi \
 && cp target/x86_64-unknown-linux-gnu/release/kubectl-karpenter_capi /kubectl-karpenter_capi

FROM scratch
COPY --from=build /kubectl-karpenter_capi /kubectl-karpenter_capi
USER 65532:65532
ENTRYPOINT ["/kubectl-karpenter_capi"]
CMD ["run"]
