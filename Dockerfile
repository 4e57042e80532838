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
# final stage sets neither USER nor WORKDIR. The final stage is the action image and stays
# the last one: a build without --target builds it.
#
# A second image, the optional CUDA runner image (target runner-cuda), is what a pod can
# start from instead of the official runner image: the CUDA runtime, the GitHub Actions
# runner and the proof already inside, so nothing is downloaded for the proof in the paid
# window. The release builds and pushes it first and builds its digest into the actions
# (runner-image: cuda), so a lane that asks for it runs exactly that image.

# golang:1.26.8-bookworm, pinned by the digest public Dockerfiles record for that tag; the
# digest was not re-checked against the registry (no registry access where this was written).
# Fully qualified (docker.io/library/…): buildah and podman refuse a short name unless the
# machine configures a search registry.
ARG GO_IMAGE=docker.io/library/golang:1.26.8-bookworm@sha256:dc9ad6c05acc7a88e5b71bde60a5fe3bd4b9f0db209011711b464107438a8107
# The CUDA runner image's bases, pinned by the digests public files record for these tags
# (not re-checked against the registries, which are out of reach where this was written):
# NVIDIA's CUDA 12.8 runtime on Ubuntu 24.04, and the official runner image the runner is
# taken from.
ARG CUDA_IMAGE=docker.io/nvidia/cuda:12.8.1-runtime-ubuntu24.04@sha256:ebef3c171eeef0298e4eb2e4be843105edf3b8b0ac45e0b43acee358e8046867
ARG RUNNER_IMAGE=ghcr.io/actions/actions-runner:2.336.0@sha256:0cfdcc701ce933c6d243c6b0b2da767366dc9f2e99961d4c3754b0b78084cdda

# Build on the builder's own platform and cross-compile: every binary is pure Go. The
# proof and the worker (stage proof) depend on no build argument, so both images and the
# release assets hold the same bytes.
FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS proof
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
# a line here. The release's assets reach provision and serverless through -X defaults,
# and the pod images' digests reach runner-image: cuda and the default image the same way.
FROM proof AS build
# Set by BuildKit from --platform (declared without a value so BuildKit fills them in).
ARG TARGETOS
ARG TARGETARCH
# VERSION is the release tag (v1.2.3); it names the User-Agent and the proof's release URL.
ARG VERSION=dev
ARG REPOSITORY=org/runpod-gpu
ARG PROOF_URL=https://github.com/${REPOSITORY}/releases/download/${VERSION}/cuda-smoke
ARG WORKER_URL=https://github.com/${REPOSITORY}/releases/download/${VERSION}/serverless-worker
# name@sha256:… of the CUDA runner image the release pushed; empty in a development build,
# which then refuses runner-image: cuda.
ARG CUDA_RUNNER_IMAGE=
# name@sha256:… of the default pod image the release pushed (target runner); empty in a
# development build, whose pods start from the official runner image and download the proof.
ARG POD_IMAGE=
RUN set -eu; \
    proof_sha256=$(cut -d' ' -f1 /out/cuda-smoke.sha256); \
    worker_sha256=$(cut -d' ' -f1 /out/serverless-worker.sha256); \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
      go build -C /src -trimpath -buildvcs=false \
        -ldflags "-s -w -X github.com/org/runpod-gpu/pkg/version.Version=${VERSION} -X github.com/org/runpod-gpu/actions/provision.defaultProofURL=${PROOF_URL} -X github.com/org/runpod-gpu/actions/provision.defaultProofSHA256=${proof_sha256} -X github.com/org/runpod-gpu/actions/serverless.defaultWorkerURL=${WORKER_URL} -X github.com/org/runpod-gpu/actions/serverless.defaultWorkerSHA256=${worker_sha256} -X github.com/org/runpod-gpu/pkg/actionkit.defaultCUDARunnerImage=${CUDA_RUNNER_IMAGE} -X github.com/org/runpod-gpu/pkg/actionkit.defaultPodImage=${POD_IMAGE}" \
        -o /out/runpod-gpu-actions ./pkg/cmd/runpod-gpu-actions; \
    mkdir -m 1777 /out/tmp; \
    cp /usr/local/go/lib/time/zoneinfo.zip /out/zoneinfo.zip

# Only a stage to copy the runner from.
FROM ${RUNNER_IMAGE} AS actions-runner

# The default pod image (docker build --target runner; linux/amd64, as pods are): the official
# runner image unchanged plus one layer of about 3 MB, the proof at /opt/runpod-gpu/cuda-smoke
# where the startup script looks for it, so a default pod downloads nothing in the paid window.
# The release builds and pushes it before the action image and builds its digest into the
# actions as the configuration's default image (pkg/actionkit's defaultPodImage).
FROM actions-runner AS runner
COPY --from=proof /out/cuda-smoke /out/cuda-smoke.sha256 /opt/runpod-gpu/
# As the official image ends: the runner's non-root user (the startup script re-enters as root for the proof).
USER runner

# The optional CUDA runner image (docker build --target runner-cuda; linux/amd64, as pods
# are). What a custom pod image needs (README "The runner image"): the runner's run.sh in
# /home/runner, a non-root user "runner" with passwordless sudo (the startup script re-enters
# as root for the proof, then runs the runner as that user), bash, curl, sha256sum and
# mktemp; the proof at /opt/runpod-gpu/cuda-smoke saves its download.
FROM ${CUDA_IMAGE} AS runner-cuda
ARG DEBIAN_FRONTEND=noninteractive
# As the official runner image sets them.
ENV RUNNER_MANUALLY_TRAP_SIG=1 ACTIONS_RUNNER_PRINT_LOG_TO_STDOUT=1 ImageOS=ubuntu24
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl git jq sudo unzip \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 1001 --shell /bin/bash runner \
 && printf 'runner ALL=(ALL) NOPASSWD: ALL\n' > /etc/sudoers.d/runner \
 && chmod 0440 /etc/sudoers.d/runner
COPY --from=actions-runner --chown=1001:1001 /home/runner /home/runner
# The runner's own script installs what its .NET runtime needs (ICU, Kerberos, OpenSSL…).
RUN /home/runner/bin/installdependencies.sh && rm -rf /var/lib/apt/lists/*
COPY --from=proof /out/cuda-smoke /out/cuda-smoke.sha256 /opt/runpod-gpu/
USER runner
WORKDIR /home/runner

# The action image. This stage is also what `go run ./pkg/cmd/action-image` builds without a
# Docker daemon and verifies pushed images against (pkg/actionimage): keep it to COPY --from,
# ENV, ENTRYPOINT/CMD (exec form), USER and WORKDIR, which that builder follows.
FROM scratch
# HTTPS to RunPod, GitHub and the registry needs the CA bundle; /tmp and the time zone
# database are what a Go program expects from an operating system image.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/ /
ENV ZONEINFO=/zoneinfo.zip
# What every action.yml names as runs.entrypoint; set here too so the image runs the same
# program outside Actions (docker run IMAGE provision).
ENTRYPOINT ["/runpod-gpu-actions"]
