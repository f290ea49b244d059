#!/usr/bin/env bash
# Build the project's images (images/*.Dockerfile) with Docker.
#
# Users with a registry build them as docs/kubernetes.md shows: on the public Python image,
# with torch from PyTorch's CPU (runtime) or CUDA (runtime-gpu) index. On a machine that
# reaches no container registry (this project's test machines) there is no Python image
# to pull, so `--local` first builds a Debian bookworm base here with debootstrap (Python
# 3.11 from Debian, trusting the same CAs as the host) and builds on it; and since
# PyTorch's own index is not reachable there either, torch comes from PyPI (the CUDA build,
# with its NVIDIA libraries: a larger image).
#
# Usage: scripts/images.sh [--local] [--no-cache] [IMAGE...]
#          IMAGE: runtime, runtime-gpu, operator, rti (default: all four)
#        scripts/images.sh --base      only build (or reuse) the local base image
#        scripts/images.sh --print     print the tags that would be built
# Environment: TAG (default 0.1.0), DOCKER (default docker),
#   REACTORFED_IMAGE_CACHE (default ~/.cache/reactorfed/images: the base's rootfs tarball),
#   REACTORFED_BUILD_CACHE (default 16GB: what BuildKit's cache keeps after a build).
# Prints one line per image on stdout: "<tag> <seconds> <size bytes>".
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=${TAG:-0.1.0}
# BuildKit is needed (RUN --mount, per-Dockerfile .dockerignore). A client from Docker 23 on
# builds only through the buildx plugin; where that is missing, Debian's docker.io client
# (20.10, /usr/bin/docker) still builds with the engine's own BuildKit.
if [ -z "${DOCKER:-}" ]; then
  DOCKER=docker
  if ! docker buildx version >/dev/null 2>&1 && [ -x /usr/bin/docker ] \
     && /usr/bin/docker --version 2>/dev/null | grep -q ' 20\.10\.'; then
    DOCKER=/usr/bin/docker
  fi
fi
BASE_IMAGE=reactorfed-base:bookworm-py3.11
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${REACTORFED_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reactorfed/images}
log() { echo "images: $*" >&2; }
die() { echo "images: error: $*" >&2; exit 1; }

local_build=0 no_cache=() only_base=0 print=0 wanted=()
for arg in "$@"; do
  case "$arg" in
    --local) local_build=1 ;;
    --no-cache) no_cache=(--no-cache) ;;
    --base) only_base=1; local_build=1 ;;
    --print) print=1 ;;
    runtime|runtime-gpu|operator|rti) wanted+=("$arg") ;;
    *) die "unknown argument '$arg' (usage: $0 [--local] [--no-cache] [--base] [runtime|runtime-gpu|operator|rti]...)" ;;
  esac
done
[ ${#wanted[@]} -gt 0 ] || wanted=(runtime runtime-gpu operator rti)

tag_of() {
  case "$1" in
    runtime) echo "reactorfed-runtime:$TAG" ;;
    runtime-gpu) echo "reactorfed-runtime-gpu:$TAG" ;;
    operator) echo "ghcr.io/reactorfed/reactorfed-operator:$TAG" ;;
    rti) echo "reactorfed-rti:$TAG" ;;
  esac
}
if [ $print = 1 ]; then for i in "${wanted[@]}"; do tag_of "$i"; done; exit 0; fi

$DOCKER info >/dev/null 2>&1 || die "no Docker engine answers ('$DOCKER info' failed); start dockerd (scripts/docker-engine.sh does)"

# --- the local base image ------------------------------------------------------------
build_base() {
  if $DOCKER image inspect "$BASE_IMAGE" >/dev/null 2>&1; then return 0; fi
  command -v debootstrap >/dev/null 2>&1 || die "debootstrap is needed for the local base image (apt-get install debootstrap)"
  mkdir -p "$CACHE"
  local tarball="$CACHE/base-bookworm-py3.11.tar"
  if [ ! -s "$tarball" ]; then
    local root; root=$(mktemp -d /tmp/reactorfed-base.XXXXXX)
    log "debootstrap bookworm (minbase + python3) into $root"
    debootstrap --variant=minbase --include=python3,python3-venv,python-is-python3,ca-certificates \
      bookworm "$root" "$DEBIAN_MIRROR" >&2
    # trust what the host trusts (a TLS-intercepting egress proxy's CA, say)
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
      cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
      chroot "$root" update-ca-certificates >/dev/null
    fi
    chroot "$root" apt-get clean
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* "$root"/usr/share/man/*
    tar -C "$root" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$root"
  fi
  log "importing $BASE_IMAGE"
  # pip inside builds verifies against the system store (the host's CAs are in it), not certifi's
  $DOCKER import \
    -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
    -c 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    -c 'CMD ["python3"]' "$tarball" "$BASE_IMAGE" >/dev/null
}

if [ $local_build = 1 ]; then build_base; fi
[ $only_base = 0 ] || { echo "$BASE_IMAGE"; exit 0; }

args=()
if [ $local_build = 1 ]; then
  args+=(--build-arg "PYTHON_IMAGE=$BASE_IMAGE" --build-arg "TORCH_INDEX=https://pypi.org/simple")
fi
for image in "${wanted[@]}"; do
  tag=$(tag_of "$image")
  log "building $tag"
  start=$(date +%s)
  DOCKER_BUILDKIT=1 $DOCKER build "${no_cache[@]}" "${args[@]}" -f "images/$image.Dockerfile" -t "$tag" . >&2
  end=$(date +%s)
  size=$($DOCKER image inspect -f '{{.Size}}' "$tag")
  echo "$tag $((end - start)) $size"
done
# Each rebuild leaves the image it replaced dangling (GBs for the runtime images) and BuildKit
# keeps every stage it ever built: drop this project's dangling images, and bound the build
# cache (the newest entries stay, so the dependencies' layers are reused next time).
for image in "${wanted[@]}"; do
  title=$(tag_of "$image"); title=${title%%:*}; title=${title##*/}
  $DOCKER image prune -f --filter "label=org.opencontainers.image.title=$title" >/dev/null || true
done
$DOCKER builder prune -f --keep-storage "${REACTORFED_BUILD_CACHE:-16GB}" >/dev/null 2>&1 || true
