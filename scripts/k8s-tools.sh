#!/usr/bin/env bash
# Build (once) and cache the Kubernetes binaries the e2e tests run against:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (all at
# K8S_VERSION), etcd, kwok/kwokctl and helm -- from Go modules only (the Go module
# proxy is the one source we need; no GitHub release downloads).
#
# k8s.io/kubernetes cannot be `go install`ed directly: its go.mod replaces the
# staging modules (k8s.io/api, k8s.io/apiserver, ...) with local paths. We build it
# from a small wrapper module that requires k8s.io/kubernetes and replaces every
# staging module with its published v0.Y.Z. etcd's server module does the same
# with ../api etc., so it gets a wrapper module too.
#
# Usage: scripts/k8s-tools.sh            build if needed; print the bin dir
#        scripts/k8s-tools.sh --bin-dir  only print the bin dir (no build)
#        scripts/k8s-tools.sh --stages   only print the path of kwok's stage config
#        scripts/k8s-tools.sh --check    exit 0 iff every binary is cached
#        scripts/k8s-tools.sh --go-mod NAME [MODULE VERSION]
#                                         print a wrapper module's go.mod that requires
#                                         Kubernetes (and MODULE), as the builds here do
# Cache: ${REACTORFED_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reactorfed/k8s}/<versions>/bin
# Idempotent; takes well under a second once cached.
set -euo pipefail

# v1.37.1, not v1.37.2: the module proxy serves v1.37.2's .info/.mod but answers 403 for its zip.
K8S_VERSION=${K8S_VERSION:-v1.37.1}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
STAGING_VERSION="v0.${K8S_VERSION#v1.}"

BASE=${REACTORFED_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reactorfed/k8s}
ROOT="$BASE/$K8S_VERSION-etcd$ETCD_VERSION-kwok$KWOK_VERSION-helm$HELM_VERSION"
BIN="$ROOT/bin"
BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok kwokctl helm)

STAGES="$ROOT/share/kwok-stages.yaml"  # kwok's "fast" node and pod stages, for `kwok --config`

all_cached() {
  local b
  for b in "${BINARIES[@]}"; do [ -x "$BIN/$b" ] || return 1; done
  [ -s "$STAGES" ]
}

beside_kubernetes() {  # name [module version]: a wrapper module's go.mod that requires Kubernetes (and the module)
  echo "module reactorfed.local/$1"
  echo
  echo "go 1.26.0"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  [ $# -lt 3 ] || echo "require $2 $3"
  echo
  echo "replace ("
  for m in api apiextensions-apiserver apimachinery apiserver cli-runtime client-go \
           cloud-provider cluster-bootstrap code-generator component-base component-helpers \
           controller-manager cri-api cri-client cri-streaming csi-translation-lib \
           dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator \
           kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics \
           mount-utils pod-security-admission sample-apiserver streaming; do
    echo "	k8s.io/$m => k8s.io/$m $STAGING_VERSION"
  done
  echo ")"
}

case "${1:-}" in
  --go-mod) shift; beside_kubernetes "$@"; exit 0 ;;
  --bin-dir) echo "$BIN"; exit 0 ;;
  --stages) echo "$STAGES"; exit 0 ;;
  --check) all_cached; exit $? ;;
  "") ;;
  *) echo "usage: $0 [--bin-dir|--stages|--check|--go-mod NAME [MODULE VERSION]]" >&2; exit 2 ;;
esac

if all_cached; then echo "$BIN"; exit 0; fi

command -v go >/dev/null 2>&1 || { echo "k8s-tools: Go is not installed; cannot build the control plane" >&2; exit 1; }
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS="${GOFLAGS:--p=2} -trimpath" CGO_ENABLED=0
mkdir -p "$BIN" "$ROOT/src"
log() { echo "k8s-tools: $*" >&2; }
# Serialise concurrent invocations (two test runs at once).
exec 9>"$ROOT/.lock"
flock 9
if all_cached; then echo "$BIN"; exit 0; fi

# --- Kubernetes components -------------------------------------------------
need_k8s=0
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do [ -x "$BIN/$b" ] || need_k8s=1; done
if [ $need_k8s = 1 ]; then
  src="$ROOT/src/kubernetes"; mkdir -p "$src"
  beside_kubernetes k8s-tools > "$src/go.mod"
  pkgs=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
        k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  log "building ${pkgs[*]##*/} $K8S_VERSION (staging modules at $STAGING_VERSION; slow the first time)"
  (cd "$src" && go build -mod=mod -ldflags "$ldflags" -o "$src/out/" "${pkgs[@]}" >&2)
  for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do mv "$src/out/$b" "$BIN/$b"; done
fi

# --- etcd --------------------------------------------------------------------
if [ ! -x "$BIN/etcd" ]; then
  src="$ROOT/src/etcd"; mkdir -p "$src"
  cat > "$src/go.mod" <<MOD
module reactorfed.local/etcd

go 1.26.0

require (
	go.etcd.io/etcd/api/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/v3 $ETCD_VERSION
	go.etcd.io/etcd/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/server/v3 $ETCD_VERSION
)
MOD
  cat > "$src/main.go" <<'GO'
// Command etcd is etcd's server, built from go.etcd.io/etcd/server/v3.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  log "building etcd $ETCD_VERSION"
  (cd "$src" && go build -mod=mod -ldflags "-s -w" -o "$src/etcd" . >&2)
  mv "$src/etcd" "$BIN/etcd"
fi

# --- kwok, kwokctl, helm ----------------------------------------------------------
# Not `go install pkg@version`: that probes every path prefix (.../cmd/kwok, .../cmd) on
# the proxy, and a proxy answering 403 instead of 404 makes it fail. A wrapper module
# that requires the module and builds its packages with -mod=mod asks only for modules.
# The wrapper's go.mod is the Kubernetes wrapper's, the tool required beside it: Go's minimal
# version selection then picks Kubernetes' versions of the libraries they share (client-go,
# apimachinery, grpc, ...; the tools ask for older or equal ones), so those packages come
# from the build cache instead of being compiled again at each tool's own versions.
build_wrapper() {  # name module version ldflags pkg...
  local name=$1 mod=$2 ver=$3 ldf=$4; shift 4
  local src="$ROOT/src/$name"; mkdir -p "$src"
  beside_kubernetes "$name" "$mod" "$ver" > "$src/go.mod"
  (cd "$src" && go build -mod=mod -ldflags "$ldf" -o "$src/out/" "$@" >&2)
  mv "$src"/out/* "$BIN/"
}
if [ ! -x "$BIN/kwok" ] || [ ! -x "$BIN/kwokctl" ]; then
  log "building kwok/kwokctl $KWOK_VERSION"
  build_wrapper kwok sigs.k8s.io/kwok "$KWOK_VERSION" \
    "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
    sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl
fi
if [ ! -x "$BIN/helm" ]; then
  log "building helm $HELM_VERSION"
  build_wrapper helm helm.sh/helm/v3 "$HELM_VERSION" \
    "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" helm.sh/helm/v3/cmd/helm
fi

if [ ! -s "$STAGES" ]; then
  # kwok needs its stages as config; take them from the module we built kwok from.
  kwok_src="$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage"
  if [ ! -d "$kwok_src" ]; then  # module cache cleaned since the build
    go mod download "sigs.k8s.io/kwok@$KWOK_VERSION" >&2
  fi
  mkdir -p "$ROOT/share"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"; cat "$kwok_src/$f"
  done > "$STAGES.tmp"
  mv "$STAGES.tmp" "$STAGES"
fi

all_cached || { log "some binaries are missing in $BIN"; exit 1; }
log "all binaries cached in $BIN"
echo "$BIN"
