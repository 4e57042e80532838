# One image for every runpod-gpu action, holding one static multi-call program,
# /runpod-gpu-actions: every actions/<role>/action.yml runs it with `entrypoint:
# /runpod-gpu-actions` and `args: [<role>]`, and the role runs the action whose room is
# actions/<role>/ (actions.All). One program carries the Go runtime, TLS,
# go-github and YAML once instead of once per action. The image also carries the
# pod-side CUDA proof, /cuda-smoke, with /cuda-smoke.sha256: the release publishes exactly
# these bytes as release assets, and the provision role embeds their URL and SHA-256 so a
# pod can verify what it downloads. The Serverless lane's Go worker, /serverless-worker
# with /serverless-worker.sha256, is carried and published the same way; the serverless
# role embeds its URL and SHA-256, and the template's handler checks the download against it.
#
# GitHub runs Docker actions as root with the workspace as the working directory, so the
# final stage sets neither USER nor WORKDIR.

# golang:1.26.8-bookworm, pinned by the digest public Dockerfiles record for that tag; the
# digest was not re-checked against the registry (no registry access where this was written).
# Fully qualified (docker.io/library/…): buildah and podman refuse a short name unless the
# machine configures a search registry.
ARG GO_IMAGE=docker.io/library/golang:1.26.8-bookworm@sha256:dc9ad6c05acc7a88e5b71bde60a5fe3bd4b9f0db209011711b464107438a8107

# Build on the builder's own platform and cross-compile: every binary is pure Go.
FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS build
# Set by BuildKit from --platform (declared without a value so BuildKit fills them in).
ARG TARGETOS
ARG TARGETARCH
# VERSION is the release tag (v1.2.3); it names the User-Agent and the proof's release URL.
ARG VERSION=dev
ARG REPOSITORY=org/runpod-gpu
ARG PROOF_URL=https://github.com/${REPOSITORY}/releases/download/${VERSION}/cuda-smoke
ARG WORKER_URL=https://github.com/${REPOSITORY}/releases/download/${VERSION}/serverless-worker

COPY go.mod go.sum /src/
RUN go -C /src mod download
COPY . /src

# The proof runs on RunPod's x86-64 pods whatever platform this image is for, so it is always
# linux/amd64. It is cgo-free but dynamically linked on purpose: purego loads libcuda.so.1
# through the system's dynamic loader at run time.
RUN CGO_ENABLED=0 GOOS=linux GOARCH=amd64 \
      go build -C /src -trimpath -buildvcs=false -ldflags "-s -w" -o /out/cuda-smoke ./pkg/cmd/cuda-smoke \
 && cd /out && sha256sum cuda-smoke > cuda-smoke.sha256

# The Serverless worker runs in RunPod's x86-64 image, so it is linux/amd64 too, and links
# like the proof (it runs the same proof in-process through purego).
RUN CGO_ENABLED=0 GOOS=linux GOARCH=amd64 \
      go build -C /src -trimpath -buildvcs=false -ldflags "-s -w" -o /out/serverless-worker ./pkg/cmd/serverless-worker \
 && cd /out && sha256sum serverless-worker > serverless-worker.sha256

# The one program for every action; a new action adds its role to actions.All, not
# a line here. The release's assets reach provision and serverless through -X defaults.
RUN set -eu; \
    proof_sha256=$(cut -d' ' -f1 /out/cuda-smoke.sha256); \
    worker_sha256=$(cut -d' ' -f1 /out/serverless-worker.sha256); \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
      go build -C /src -trimpath -buildvcs=false \
        -ldflags "-s -w -X github.com/org/runpod-gpu/pkg/version.Version=${VERSION} -X github.com/org/runpod-gpu/actions/provision.defaultProofURL=${PROOF_URL} -X github.com/org/runpod-gpu/actions/provision.defaultProofSHA256=${proof_sha256} -X github.com/org/runpod-gpu/actions/serverless.defaultWorkerURL=${WORKER_URL} -X github.com/org/runpod-gpu/actions/serverless.defaultWorkerSHA256=${worker_sha256}" \
        -o /out/runpod-gpu-actions ./pkg/cmd/runpod-gpu-actions; \
    mkdir -m 1777 /out/tmp; \
    cp /usr/local/go/lib/time/zoneinfo.zip /out/zoneinfo.zip

FROM scratch
# HTTPS to RunPod, GitHub and the registry needs the CA bundle; /tmp and the time zone
# database are what a Go program expects from an operating system image.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/ /
ENV ZONEINFO=/zoneinfo.zip
