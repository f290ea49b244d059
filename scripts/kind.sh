#!/usr/bin/env bash
# A kind cluster from kind-config.yaml on a machine that reaches no container registry.
#
# A user with internet access runs `kind create cluster --config kind-config.yaml`
# (docs/kubernetes.md). Here nothing can be pulled, so this script builds, from Debian
# packages and Go modules, everything kind would otherwise download, and caches it:
#   * kind itself (Go module sigs.k8s.io/kind), kubeadm, kubelet, kubectl, kube-proxy,
#     the control plane (scripts/k8s-tools.sh), containerd, CoreDNS and
#     local-path-provisioner (Go modules), pause (gcc -static, from the Kubernetes module);
#   * a node image: a debootstrapped Debian bookworm with systemd, Debian's runc and CNI
#     plugins, containerd, kind's own base-image files (shipped in kind's module), the
#     binaries above, and the control-plane images preloaded into its containerd.
# kind's usual network plugin (kindnetd) cannot be built from what such a machine reaches,
# so the cluster is created with `disableDefaultCNI` and gets a plain routed network
# instead: the CNI ptp + host-local plugins on every node with its node's pod CIDR, and on
# every node a route to each other node's pod CIDR. NetworkPolicy is enforced by
# kindnetd's own policy engine run alone (kube-network-policies, Go module, a DaemonSet).
# DNS is kubeadm's CoreDNS; PVCs are served by local-path-provisioner (StorageClass
# "standard", as in kind's own node images).
#
# Usage:
#   scripts/kind.sh build             build (or reuse) the binaries and the node image
#   scripts/kind.sh create [--no-images]   create the cluster (building first if needed),
#                                     install the pod network, wait for the nodes, load
#                                     the project's images (scripts/images.sh --local builds them)
#   scripts/kind.sh load IMAGE...     load images into the cluster's nodes
#   scripts/kind.sh delete            delete the cluster
#   scripts/kind.sh kubeconfig        print the path of the cluster's kubeconfig
#   scripts/kind.sh bin-dir           print the directory of kind, kubectl, helm
#   scripts/kind.sh check             exit 0 iff kind and the node image are built
# Environment: KIND_CLUSTER (default: the name in kind-config.yaml, reactorfed),
#   KIND_CONFIG (default kind-config.yaml), REACTORFED_KIND_CACHE
#   (default ~/.cache/reactorfed/kind), GOFLAGS (default -p=2).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

KIND_VERSION=${KIND_VERSION:-v0.33.0}
K8S_VERSION=${K8S_VERSION:-v1.37.1}          # as scripts/k8s-tools.sh
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
COREDNS_MODULE_VERSION=${COREDNS_MODULE_VERSION:-}   # default: the tag kubeadm asks for
LOCAL_PATH_VERSION=${LOCAL_PATH_VERSION:-v0.0.30}
NETPOL_VERSION=${NETPOL_VERSION:-v0.8.0}    # sigs.k8s.io/kube-network-policies: kindnetd's policy engine, alone
STAGING_VERSION="v0.${K8S_VERSION#v1.}"
KIND_CONFIG=${KIND_CONFIG:-kind-config.yaml}
CLUSTER=${KIND_CLUSTER:-$(awk '/^name:/ {print $2; exit}' "$KIND_CONFIG")}
CLUSTER=${CLUSTER:-kind}

BASE=${REACTORFED_KIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reactorfed/kind}
ROOT="$BASE/kind$KIND_VERSION-k8s$K8S_VERSION-containerd$CONTAINERD_VERSION"
BIN="$ROOT/bin"
# The node image's tag changes with the part of this script that builds it (everything
# above "--- the cluster ---") and with the patch of kube-network-policies, so an edit
# there rebuilds it.
SCRIPT_HASH=$( (sed '/^# --- the cluster ---/q' "$0"; cat scripts/kind/netpol_xtqueue.go) | sha256sum | cut -c1-12)
NETPOL_BIN="$BIN/netpol-$SCRIPT_HASH"   # (its patch is in the hash)
NODE_BASE_IMAGE="reactorfed/kind-node-base:bookworm-$SCRIPT_HASH"
NODE_IMAGE="reactorfed/kind-node:$K8S_VERSION-$SCRIPT_HASH"
HELPER_IMAGE="$NODE_BASE_IMAGE"   # local-path-provisioner's helper pods need only sh and mkdir
LOCAL_PATH_IMAGE="reactorfed/local-path-provisioner:$LOCAL_PATH_VERSION"
NETPOL_IMAGE="reactorfed/kube-network-policies:$NETPOL_VERSION"
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS="${GOFLAGS:--p=2} -trimpath -buildvcs=false"
KIND_MOD_DIR=""

log() { echo "kind.sh: $*" >&2; }
die() { echo "kind.sh: error: $*" >&2; exit 1; }
timed() {  # label command...: run, and log how long it took
  local label=$1 start; shift; start=$(date +%s)
  "$@"
  log "$label took $(( $(date +%s) - start )) s"
}

need() { command -v "$1" >/dev/null 2>&1 || die "$1 is needed ($2)"; }

# --- binaries --------------------------------------------------------------------------
build_in() {  # src ldflags pkg...: build the packages in the wrapper module SRC, into BIN
  local src=$1 ldf=$2; shift 2
  (cd "$src" && CGO_ENABLED=0 go build -mod=mod -ldflags "$ldf" -o "$src/out/" "$@" >&2)
  mv "$src"/out/* "$BIN/"
}
build_wrapper() {  # name module version ldflags pkg...: a module that requires MODULE, built with -mod=mod
  local name=$1 mod=$2 ver=$3 ldf=$4; shift 4
  local src="$ROOT/src/$name"; mkdir -p "$src"
  printf 'module reactorfed.local/%s\n\ngo 1.26.0\n\nrequire %s %s\n' "$name" "$mod" "$ver" > "$src/go.mod"
  build_in "$src" "$ldf" "$@"
}

# A Kubernetes client (CoreDNS, local-path-provisioner) is built with
# Kubernetes' own versions of the libraries they share (scripts/k8s-tools.sh --go-mod: its
# wrapper's go.mod, the module required beside it), so that client-go, apimachinery, grpc
# and the rest come from the build cache scripts/k8s-tools.sh filled instead of being
# compiled again at each one's own, older versions.
go_mod_beside_kubernetes() {  # name module version src: write SRC/go.mod
  mkdir -p "$4"
  scripts/k8s-tools.sh --go-mod "$1" "$2" "$3" > "$4/go.mod"
}
build_client() {  # name module version ldflags pkg...: build_wrapper, beside Kubernetes
  local name=$1 mod=$2 ver=$3 ldf=$4; shift 4
  local src="$ROOT/src/$name"
  go_mod_beside_kubernetes "$name" "$mod" "$ver" "$src"
  build_in "$src" "$ldf" "$@"
}

# CoreDNS with the plugins a cluster's Corefile uses: kubeadm's (errors, health, ready,
# kubernetes, prometheus, forward, cache, loop, reload, loadbalance) and the ones people add
# to it (log, hosts, rewrite, template, k8s_external, autopath, ...), the way CoreDNS's own
# plugin.cfg selects them. Its default build also carries the cloud providers' zones
# (AWS, Azure, Google SDKs), etcd, dnstap, tracing and more: most of its compile time.
COREDNS_PLUGINS=(errors health ready kubernetes metrics forward cache loop reload loadbalance
  log hosts rewrite template k8s_external autopath any bind bufsize cancel chaos debug header
  local metadata minimal nsid pprof timeouts whoami acl dns64 file transfer)
build_coredns() {  # version
  local src="$ROOT/src/coredns" plugin
  rm -rf "$src"; mkdir -p "$src"
  go_mod_beside_kubernetes coredns github.com/coredns/coredns "$1" "$src"
  {
    printf '// CoreDNS with the plugins of scripts/kind.sh (COREDNS_PLUGINS); generated.\npackage main\n\nimport (\n'
    printf '\t"github.com/coredns/coredns/coremain"\n'
    for plugin in "${COREDNS_PLUGINS[@]}"; do
      printf '\t_ "github.com/coredns/coredns/plugin/%s"\n' "$plugin"
    done
    printf ')\n\nfunc main() { coremain.Run() }\n'
  } > "$src/main.go"
  (cd "$src" && CGO_ENABLED=0 go build -mod=mod -ldflags "-s -w" -o "$BIN/coredns" . >&2)
  # every plugin of kubeadm's Corefile must be in
  local listed; listed=$("$BIN/coredns" -plugins)
  for plugin in errors health ready kubernetes prometheus forward cache loop reload loadbalance; do
    grep -qw "$plugin" <<<"$listed" || { rm -f "$BIN/coredns"; die "the CoreDNS build lacks its $plugin plugin"; }
  done
}

build_netpol() {  # kube-network-policies, its queue verdicts through nft_compat (scripts/kind/netpol_xtqueue.go)
  local src="$ROOT/src/netpol" mod pkg
  rm -rf "$src"; mkdir -p "$src"
  # on its own versions: its containerd/nri does not build against Kubernetes' newer runtime-spec
  printf 'module reactorfed.local/netpol\n\ngo 1.26.0\n\nrequire sigs.k8s.io/kube-network-policies %s\n' "$NETPOL_VERSION" > "$src/go.mod"
  (cd "$src" && go mod download sigs.k8s.io/kube-network-policies >&2)
  mod="$(go env GOMODCACHE)/sigs.k8s.io/kube-network-policies@$NETPOL_VERSION"
  [ -f "$mod/pkg/networkpolicy/controller.go" ] || die "kube-network-policies' sources are not in its module ($mod)"
  # a patched copy of the module (Go neither overlays nor edits the module cache), required in its place
  cp -r "$mod" "$src/module"; chmod -R u+w "$src/module"; pkg="$src/module/pkg/networkpolicy"
  # every `queue` expression becomes xtQueue(...): the two in controller.go set the bypass
  # flag on a second line when --fail-open is given, the DNS agent's always bypasses
  perl -0pi -e 's/queue := &expr\.Queue\{Num: uint16\(c\.config\.QueueID\)\}\n\s*if c\.config\.FailOpen \{\n\s*queue\.Flag = expr\.QueueFlagBypass\n\s*\}/queue := xtQueue(uint16(c.config.QueueID), c.config.FailOpen)/g' \
    "$pkg/controller.go"
  perl -pi -e 's/&expr\.Queue\{Num: uint16\(n\.nfQueueID\), Flag: expr\.QueueFlagBypass\}/xtQueue(uint16(n.nfQueueID), true)/' \
    "$pkg/dnsagent.go"
  ! grep -q 'expr\.Queue' "$pkg/controller.go" "$pkg/dnsagent.go" \
    || die "kube-network-policies $NETPOL_VERSION has queue expressions the patch does not know"
  cp scripts/kind/netpol_xtqueue.go "$pkg/xtqueue.go"
  printf 'replace sigs.k8s.io/kube-network-policies => ./module\n' >> "$src/go.mod"
  # the module's main package is its cmd/ folder: the binary is named as upstream's image names it
  (cd "$src" && CGO_ENABLED=0 go build -mod=mod -ldflags "-s -w" -o "$NETPOL_BIN" sigs.k8s.io/kube-network-policies/cmd >&2)
}

build_binaries() {
  need go "Go >= 1.26 builds kind and the node's binaries"
  mkdir -p "$BIN"
  local k8s_bin; k8s_bin=$(scripts/k8s-tools.sh)
  for b in kubectl helm kube-apiserver kube-controller-manager kube-scheduler etcd; do
    [ -x "$BIN/$b" ] || cp "$k8s_bin/$b" "$BIN/$b"
  done
  if [ ! -x "$BIN/kind" ]; then
    log "building kind $KIND_VERSION"
    timed "kind" build_wrapper kind sigs.k8s.io/kind "$KIND_VERSION" "-s -w" sigs.k8s.io/kind
  fi
  if [ ! -x "$BIN/kubelet" ] || [ ! -x "$BIN/kubeadm" ] || [ ! -x "$BIN/kube-proxy" ]; then
    # the same wrapper module as scripts/k8s-tools.sh (its go.mod replaces the staging modules)
    local k8s_src; k8s_src="$(dirname "$k8s_bin")/src/kubernetes"
    [ -s "$k8s_src/go.mod" ] || die "scripts/k8s-tools.sh left no wrapper module in $k8s_src"
    local src="$ROOT/src/kubernetes"; mkdir -p "$src"
    cp "$k8s_src/go.mod" "$src/go.mod"; [ ! -f "$k8s_src/go.sum" ] || cp "$k8s_src/go.sum" "$src/go.sum"
    local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
    local ldflags="-s -w" p
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
      ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    log "building kubelet, kubeadm, kube-proxy $K8S_VERSION"
    (cd "$src" && timed "kubelet+kubeadm+kube-proxy" env CGO_ENABLED=0 go build -mod=mod -ldflags "$ldflags" -o "$src/out/" \
      k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubeadm k8s.io/kubernetes/cmd/kube-proxy >&2)
    mv "$src"/out/* "$BIN/"
  fi
  if [ ! -x "$BIN/containerd" ] || [ ! -x "$BIN/ctr" ] || [ ! -x "$BIN/containerd-shim-runc-v2" ]; then
    log "building containerd $CONTAINERD_VERSION"
    local cld="-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION"
    cld+=" -X github.com/containerd/containerd/v2/version.Revision=reactorfed"
    local src="$ROOT/src/containerd"; mkdir -p "$src"
    printf 'module reactorfed.local/containerd\n\ngo 1.26.0\n\nrequire github.com/containerd/containerd/v2 %s\n' "$CONTAINERD_VERSION" > "$src/go.mod"
    (cd "$src" && timed "containerd" env CGO_ENABLED=0 go build -mod=mod -tags "no_aufs no_zfs no_btrfs no_devmapper" \
      -ldflags "$cld" -o "$src/out/" github.com/containerd/containerd/v2/cmd/containerd \
      github.com/containerd/containerd/v2/cmd/ctr github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 >&2)
    mv "$src"/out/* "$BIN/"
  fi
  local coredns_tag; coredns_tag=$(kubeadm_image coredns); coredns_tag=${coredns_tag##*:}
  local coredns_version=${COREDNS_MODULE_VERSION:-$coredns_tag}
  if [ ! -x "$BIN/coredns" ]; then
    log "building coredns $coredns_version"
    timed "coredns" build_coredns "$coredns_version"
  fi
  if [ ! -x "$BIN/local-path-provisioner" ]; then
    log "building local-path-provisioner $LOCAL_PATH_VERSION"
    timed "local-path-provisioner" build_client local-path-provisioner github.com/rancher/local-path-provisioner \
      "$LOCAL_PATH_VERSION" "-s -w" github.com/rancher/local-path-provisioner
  fi
  if [ ! -x "$NETPOL_BIN" ]; then
    log "building kube-network-policies $NETPOL_VERSION"
    timed "kube-network-policies" build_netpol
  fi
  if [ ! -x "$BIN/pause" ]; then
    need gcc "the pause container is built with gcc -static"
    local pause_c; pause_c="$(go env GOMODCACHE)/k8s.io/kubernetes@$K8S_VERSION/build/pause/linux/pause.c"
    [ -f "$pause_c" ] || (cd "$ROOT/src/kubernetes" && go mod download "k8s.io/kubernetes@$K8S_VERSION" >&2)
    [ -f "$pause_c" ] || die "pause.c is not in the Kubernetes module ($pause_c)"
    gcc -Os -static -Wall -DVERSION="v3.10-reactorfed" -o "$BIN/pause" "$pause_c"
    strip "$BIN/pause"
  fi
}

kubeadm_image() {  # NAME: the image kubeadm asks for (registry.k8s.io/NAME:TAG)
  "$BIN/kubeadm" config images list --kubernetes-version "$K8S_VERSION" 2>/dev/null | grep "/$1:" | head -n 1
}

kind_module_dir() {
  if [ -z "$KIND_MOD_DIR" ]; then
    KIND_MOD_DIR="$(go env GOMODCACHE)/sigs.k8s.io/kind@$KIND_VERSION"
    [ -d "$KIND_MOD_DIR/images/base/files" ] || (cd "$ROOT/src/kind" && go mod download "sigs.k8s.io/kind@$KIND_VERSION" >&2)
    [ -d "$KIND_MOD_DIR/images/base/files" ] || die "kind's base-image files are not in its module ($KIND_MOD_DIR)"
  fi
  echo "$KIND_MOD_DIR"
}

# --- the node's base image: Debian + systemd + containerd + kind's base files -----------
build_node_base() {
  docker image inspect "$NODE_BASE_IMAGE" >/dev/null 2>&1 && return 0
  need debootstrap "apt-get install debootstrap"
  local tarball="$BASE/node-base-bookworm.tar"
  if [ ! -s "$tarball" ]; then
    local root; root=$(mktemp -d /tmp/reactorfed-kind-root.XXXXXX)
    log "debootstrap bookworm for the node image into $root"
    timed "debootstrap (node base)" debootstrap --variant=minbase \
      --include=systemd,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,bash,ca-certificates,jq,procps,runc,containernetworking-plugins,e2fsprogs \
      bookworm "$root" "$DEBIAN_MIRROR" >&2
    chroot "$root" apt-get clean
    rm -rf "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/*
    tar -C "$root" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$root"
  fi
  local files; files="$(kind_module_dir)/images/base/files"
  local ctx; ctx=$(mktemp -d /tmp/reactorfed-kind-ctx.XXXXXX)
  cp "$BIN/containerd" "$BIN/ctr" "$BIN/containerd-shim-runc-v2" "$ctx/"
  cp -r "$files" "$ctx/files"
  docker import "$tarball" reactorfed/kind-node-rootfs:bookworm >/dev/null
  # As kind's images/base/Dockerfile does, with Debian's runc and CNI plugins.
  cat > "$ctx/Dockerfile" <<'DOCKERFILE'
FROM reactorfed/kind-node-rootfs:bookworm
COPY files/usr/local/bin/ /usr/local/bin/
COPY files/kind/ /kind/
COPY files/etc/ /etc/
COPY containerd ctr containerd-shim-runc-v2 /usr/local/bin/
RUN chmod 0755 /usr/local/bin/* /kind /kind/bin /kind/bin/* \
 && find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete \
 && rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
          /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
          /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/* \
 && echo "ReadKMsg=no" >> /etc/systemd/journald.conf \
 && ln -sf /usr/lib/systemd/systemd /sbin/init \
 && systemctl enable kubelet.service containerd.service undo-mount-hacks.service \
 && systemctl mask systemd-binfmt.service \
 && mkdir -p /etc/kubernetes/manifests /opt/cni /etc/cni/net.d \
 && ln -sfn /usr/lib/cni /opt/cni/bin \
 && ctr oci spec \
    | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
    | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json \
 && sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' /etc/containerd/config.toml
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
DOCKERFILE
  # restrict_oom_score_adj: pod sandboxes may not lower their OOM score below containerd's
  # (a nested container cannot: "failed to update /proc/self/oom_score_adj: Permission denied")
  DOCKER_BUILDKIT=0 docker build -q -t "$NODE_BASE_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
}

# --- control-plane images, then the node image ------------------------------------------
build_images_tar() {  # OUT: docker save of every image the node preloads
  local out=$1 ctx; ctx=$(mktemp -d /tmp/reactorfed-kind-images.XXXXXX)
  local images=() name tag
  scratch_image() {  # TAG BINARY ENTRYPOINT-JSON
    local t=$1 b=$2 ep=$3 d; d="$ctx/$(echo "$t" | tr '/:' '__')"; mkdir -p "$d"
    cp "$BIN/$b" "$d/$b"
    printf 'FROM scratch\nCOPY %s /usr/local/bin/%s\nENV PATH=/usr/local/bin:/usr/bin:/bin\nENTRYPOINT %s\n' "$b" "$b" "$ep" > "$d/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q -t "$t" "$d" >/dev/null
    images+=("$t")
  }
  for name in kube-apiserver kube-controller-manager kube-scheduler etcd; do
    tag=$(kubeadm_image "$name"); [ -n "$tag" ] || die "kubeadm names no $name image"
    scratch_image "$tag" "$name" "[\"/usr/local/bin/$name\"]"
  done
  tag=$(kubeadm_image coredns); scratch_image "$tag" coredns '["/usr/local/bin/coredns"]'
  # containerd's sandbox image (kind's config) and the one kubeadm names, if another
  local sandbox; sandbox=$(awk -F'"' '/sandbox_image/ {print $2}' "$(kind_module_dir)/images/base/files/etc/containerd/config.toml")
  scratch_image "$sandbox" pause '["/usr/local/bin/pause"]'
  tag=$(kubeadm_image pause); if [ -n "$tag" ] && [ "$tag" != "$sandbox" ]; then docker tag "$sandbox" "$tag"; images+=("$tag"); fi
  scratch_image "$LOCAL_PATH_IMAGE" local-path-provisioner '["/usr/local/bin/local-path-provisioner"]'
  # kube-proxy needs iptables and conntrack: the node's own Debian base has them
  tag=$(kubeadm_image kube-proxy); mkdir -p "$ctx/kube-proxy"; cp "$BIN/kube-proxy" "$ctx/kube-proxy/"
  printf 'FROM %s\nCOPY kube-proxy /usr/local/bin/kube-proxy\nENTRYPOINT ["/usr/local/bin/kube-proxy"]\n' "$NODE_BASE_IMAGE" > "$ctx/kube-proxy/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx/kube-proxy" >/dev/null
  images+=("$tag" "$HELPER_IMAGE")
  # kube-network-policies programs nftables with the nft command: the node's Debian base has it
  mkdir -p "$ctx/netpol"; cp "$NETPOL_BIN" "$ctx/netpol/netpol"
  printf 'FROM %s\nCOPY netpol /bin/netpol\nENTRYPOINT ["/bin/netpol"]\n' "$NODE_BASE_IMAGE" > "$ctx/netpol/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t "$NETPOL_IMAGE" "$ctx/netpol" >/dev/null
  images+=("$NETPOL_IMAGE")
  docker save -o "$out" "${images[@]}"
  rm -rf "$ctx"
}

storage_manifest() {  # local-path-provisioner as kind's own node images deploy it, with local images
  cat <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: local-path-storage}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: local-path-provisioner-service-account, namespace: local-path-storage}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: local-path-provisioner-role, namespace: local-path-storage}
rules:
  - {apiGroups: [""], resources: [pods], verbs: [get, list, watch, create, patch, update, delete]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: local-path-provisioner-role}
rules:
  - {apiGroups: [""], resources: [nodes, persistentvolumeclaims, configmaps, pods, pods/log], verbs: [get, list, watch]}
  - {apiGroups: [""], resources: [persistentvolumes], verbs: [get, list, watch, create, patch, update, delete]}
  - {apiGroups: [""], resources: [events], verbs: [create, patch]}
  - {apiGroups: [storage.k8s.io], resources: [storageclasses], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: local-path-provisioner-bind, namespace: local-path-storage}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: local-path-provisioner-role}
subjects: [{kind: ServiceAccount, name: local-path-provisioner-service-account, namespace: local-path-storage}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: local-path-provisioner-bind}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: local-path-provisioner-role}
subjects: [{kind: ServiceAccount, name: local-path-provisioner-service-account, namespace: local-path-storage}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: local-path-provisioner, namespace: local-path-storage}
spec:
  replicas: 1
  selector: {matchLabels: {app: local-path-provisioner}}
  template:
    metadata: {labels: {app: local-path-provisioner}}
    spec:
      tolerations:
        - {key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}
      nodeSelector: {node-role.kubernetes.io/control-plane: ""}
      serviceAccountName: local-path-provisioner-service-account
      containers:
        - name: local-path-provisioner
          image: $LOCAL_PATH_IMAGE
          imagePullPolicy: Never
          command: [local-path-provisioner, start, --helper-image, $HELPER_IMAGE, --config, /etc/config/config.json]
          volumeMounts: [{name: config-volume, mountPath: /etc/config/}]
          env:
            - name: POD_NAMESPACE
              valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
            - {name: CONFIG_MOUNT_PATH, value: /etc/config/}
      volumes:
        - {name: config-volume, configMap: {name: local-path-config}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
---
apiVersion: v1
kind: ConfigMap
metadata: {name: local-path-config, namespace: local-path-storage}
data:
  config.json: |-
    {"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["/var/local-path-provisioner"]}]}
  setup: |-
    #!/bin/sh
    set -eu
    mkdir -m 0777 -p "\$VOL_DIR"
  teardown: |-
    #!/bin/sh
    set -eu
    rm -rf "\$VOL_DIR"
  helperPod.yaml: |-
    apiVersion: v1
    kind: Pod
    metadata: {name: helper-pod}
    spec:
      priorityClassName: system-node-critical
      tolerations: [{key: node.kubernetes.io/disk-pressure, operator: Exists, effect: NoSchedule}]
      containers:
        - {name: helper-pod, image: $HELPER_IMAGE, imagePullPolicy: Never}
YAML
}

build_node_image() {
  docker image inspect "$NODE_IMAGE" >/dev/null 2>&1 && return 0
  build_node_base
  local work; work=$(mktemp -d /tmp/reactorfed-kind-node.XXXXXX)
  log "building the control-plane images"
  timed "control-plane images" build_images_tar "$work/images.tar"
  storage_manifest > "$work/default-storage.yaml"
  local id="reactorfed-kind-build-$$"
  docker rm -f "$id" >/dev/null 2>&1 || true
  docker run -d --name "$id" --entrypoint sleep --security-opt seccomp=unconfined "$NODE_BASE_IMAGE" infinity >/dev/null
  # shellcheck disable=SC2064
  trap "docker rm -f $id >/dev/null 2>&1 || true; rm -rf $work" RETURN
  local b
  for b in kubeadm kubelet kubectl; do docker cp "$BIN/$b" "$id:/usr/bin/$b"; done
  docker exec "$id" sh -c "chown root:root /usr/bin/kubeadm /usr/bin/kubelet /usr/bin/kubectl \
    && chmod 0755 /usr/bin/kubeadm /usr/bin/kubelet /usr/bin/kubectl \
    && mkdir -p /kind/manifests && printf '%s' '$K8S_VERSION' > /kind/version"
  docker cp "$work/default-storage.yaml" "$id:/kind/manifests/default-storage.yaml"
  # preload the images into the node's containerd, as kind's node-image builder does
  docker exec "$id" sh -c 'nohup containerd >/tmp/containerd.log 2>&1 &'
  local i
  for i in $(seq 1 60); do docker exec "$id" ctr version >/dev/null 2>&1 && break; sleep 0.5; done
  docker exec -i "$id" ctr --namespace=k8s.io images import --all-platforms --no-unpack --digests - < "$work/images.tar" >&2
  docker exec "$id" sh -c 'pkill containerd; sleep 1; rm -rf /tmp/containerd.log'
  docker commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' "$id" "$NODE_IMAGE" >/dev/null
  log "node image $NODE_IMAGE built"
}

cmd_build() {
  need docker "a Docker engine runs kind's nodes (scripts/docker-engine.sh --kind starts one)"
  docker info >/dev/null 2>&1 || die "no Docker engine answers; scripts/docker-engine.sh --kind starts one"
  timed "binaries" build_binaries
  timed "node image" build_node_image
  # the node images of earlier versions of this script (1.9 GB each) go
  local old
  for old in $(docker images --format '{{.Repository}}:{{.Tag}}' reactorfed/kind-node) \
             $(docker images --format '{{.Repository}}:{{.Tag}}' reactorfed/kind-node-base); do
    case "$old" in "$NODE_IMAGE"|"$NODE_BASE_IMAGE") ;; *) docker rmi "$old" >/dev/null 2>&1 || true ;; esac
  done
}

# --- the cluster ---
kubectl_() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_PATH" "$@"; }
KUBECONFIG_PATH="$BASE/$CLUSTER.kubeconfig"

derived_config() {  # kind-config.yaml plus what this machine needs (no default CNI; cgroup v1)
  cat "$KIND_CONFIG"
  printf '\n# added by scripts/kind.sh: the node image has no kindnetd; a routed pod network is installed instead\n'
  printf 'networking:\n  disableDefaultCNI: true\n'
  if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
    printf 'kubeadmConfigPatches:\n  - |\n    kind: KubeletConfiguration\n    failCgroupV1: false\n'
  fi
}

install_pod_network() {
  local nodes node cidr ip other
  nodes=$("$BIN/kind" get nodes --name "$CLUSTER")
  declare -A CIDR IP
  for node in $nodes; do
    for _ in $(seq 1 120); do
      cidr=$(kubectl_ get node "$node" -o jsonpath='{.spec.podCIDR}' 2>/dev/null || true)
      [ -n "$cidr" ] && break; sleep 1
    done
    [ -n "$cidr" ] || die "node $node got no pod CIDR"
    CIDR[$node]=$cidr
    IP[$node]=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$node")
  done
  # the cluster's pod subnet: none of its addresses is ever routed off a node (Service IPs
  # are translated by kube-proxy before routing, or rejected when they have no endpoints)
  local subnets
  subnets=$(kubectl_ -n kube-system get configmap kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' \
    | awk '/podSubnet:/ {print $2}' | tr ',' ' ')
  for node in $nodes; do
    docker exec -i "$node" sh -c 'cat > /etc/cni/net.d/10-reactorfed.conflist' <<JSON
{
  "cniVersion": "0.4.0",
  "name": "reactorfed",
  "plugins": [
    {"type": "ptp", "ipMasq": false, "mtu": 1500,
     "ipam": {"type": "host-local", "dataDir": "/run/cni-ipam-state",
              "ranges": [[{"subnet": "${CIDR[$node]}"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
JSON
    for other in $nodes; do
      [ "$other" = "$node" ] || docker exec "$node" ip route replace "${CIDR[$other]}" via "${IP[$other]}"
    done
    # An address of this node's pod CIDR that no pod holds (a pod just deleted) is
    # unreachable at once (ICMP), instead of following the default route out of the node:
    # a connection to a stale pod IP fails fast and is retried, and nothing leaves the host.
    docker exec "$node" ip route replace unreachable "${CIDR[$node]}"
    [ -z "$subnets" ] || for s in $subnets; do docker exec "$node" ip route replace unreachable "$s"; done
  done
}

netpol_manifest() {  # kube-network-policies as its install.yaml deploys it, with the local image
  cat <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kube-network-policies}
rules:
  - {apiGroups: [""], resources: [pods, namespaces], verbs: [list, watch]}
  - {apiGroups: [networking.k8s.io], resources: [networkpolicies], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kube-network-policies}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kube-network-policies}
subjects: [{kind: ServiceAccount, name: kube-network-policies, namespace: kube-system}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: kube-network-policies, namespace: kube-system}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: kube-network-policies, namespace: kube-system, labels: {app: kube-network-policies}}
spec:
  selector: {matchLabels: {app: kube-network-policies}}
  template:
    metadata: {labels: {app: kube-network-policies}}
    spec:
      hostNetwork: true
      priorityClassName: system-node-critical
      tolerations: [{operator: Exists}]
      serviceAccountName: kube-network-policies
      containers:
        - name: kube-network-policies
          image: $NETPOL_IMAGE
          imagePullPolicy: Never
          args: [--hostname-override=\$(MY_NODE_NAME), --v=2, --nfqueue-id=98, --metrics-bind-address=127.0.0.1:9080]
          env:
            - name: MY_NODE_NAME
              valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
          volumeMounts:
            - {name: nri-plugin, mountPath: /var/run/nri}
            - {name: netns, mountPath: /var/run/netns, mountPropagation: HostToContainer}
          resources: {requests: {cpu: 50m, memory: 50Mi}}
          securityContext: {privileged: true, capabilities: {add: [NET_ADMIN]}}
      volumes:
        - {name: nri-plugin, hostPath: {path: /var/run/nri}}
        - {name: netns, hostPath: {path: /var/run/netns}}
YAML
}

install_netpol() {  # NetworkPolicy enforcement (nftables + nfqueue on every node), ready before any test pod
  netpol_manifest | kubectl_ apply -f - >&2
  kubectl_ -n kube-system rollout status daemonset/kube-network-policies --timeout=180s >&2
}

cmd_create() {
  local with_images=1
  [ "${1:-}" != --no-images ] || with_images=0
  cmd_build
  if "$BIN/kind" get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
    die "a kind cluster named $CLUSTER exists; delete it first (scripts/kind.sh delete)"
  fi
  local config; config=$(mktemp /tmp/reactorfed-kind-config.XXXXXX.yaml)
  derived_config > "$config"
  mkdir -p "$(dirname "$KUBECONFIG_PATH")"
  log "creating cluster $CLUSTER from $KIND_CONFIG with $NODE_IMAGE"
  timed "kind create cluster" "$BIN/kind" create cluster --name "$CLUSTER" --config "$config" --image "$NODE_IMAGE" \
    --kubeconfig "$KUBECONFIG_PATH" --retain >&2 || { rm -f "$config"; die "kind create cluster failed (nodes retained for a look: docker ps -a)"; }
  rm -f "$config"
  timed "pod network" install_pod_network
  timed "nodes Ready" kubectl_ wait --for=condition=Ready nodes --all --timeout=180s >&2
  timed "CoreDNS" kubectl_ -n kube-system rollout status deployment/coredns --timeout=180s >&2
  timed "network policies" install_netpol
  if [ $with_images = 1 ]; then
    local images=() tag
    for tag in $(scripts/images.sh --print); do
      docker image inspect "$tag" >/dev/null 2>&1 && images+=("$tag")
    done
    [ ${#images[@]} -eq 0 ] || timed "images" cmd_load "${images[@]}"
  fi
  log "cluster $CLUSTER is ready: export KUBECONFIG=$KUBECONFIG_PATH"
}

load_image() {  # IMAGE NODE...: what `kind load docker-image --nodes` does, streamed, keeping one copy
  # One `docker save` streams into every node's containerd at once (tee into one FIFO per
  # node): a multi-GB image is read once, not once per node. The layers' tarballs are
  # dropped once unpacked (--discard-unpacked-layers), so a node holds the image once.
  local image=$1 node fifo dir pids=() nodes=()
  shift
  dir=$(mktemp -d /tmp/reactorfed-kind-load.XXXXXX)
  for node in "$@"; do
    fifo="$dir/$node"; mkfifo "$fifo"
    docker exec -i "$node" ctr --namespace=k8s.io images import --all-platforms \
      --local --discard-unpacked-layers --snapshotter=overlayfs - <"$fifo" >/dev/null &
    pids+=($!); nodes+=("$node")
  done
  local fifos=("$dir"/*) save_rc=0 i failed=()
  docker save "$image" | tee "${fifos[@]}" >/dev/null || save_rc=$?
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${nodes[$i]}"); done
  rm -rf "$dir"
  [ $save_rc = 0 ] || die "docker save $image failed"
  [ ${#failed[@]} = 0 ] || die "loading $image into ${failed[*]} failed"
}

cmd_load() {
  # With no --nodes: pods run on the workers only (the control plane keeps its taint). The
  # project's images go where their pods run: runtime-gpu to the GPU-labelled workers, the
  # others to the rest.
  [ $# -gt 0 ] || die "usage: $0 load IMAGE..."
  local image gpu cpu nodes
  gpu=$(kubectl_ get nodes -l reactorfed.io/accelerator=nvidia -o name | sed 's|node/||' | xargs)
  cpu=$(kubectl_ get nodes -l '!reactorfed.io/accelerator,!node-role.kubernetes.io/control-plane' -o name | sed 's|node/||' | xargs)
  nodes_for() { case "$1" in reactorfed-runtime-gpu:*) echo "$gpu" ;; *) echo "$cpu" ;; esac; }
  # Each node unpacks its own copy (GBs for the runtime images) on Docker's disk, and holds
  # the layers' tarballs beside it until they are unpacked and collected (twice the image's
  # size at the peak, every image at once): check that it fits first, instead of failing
  # half-way with "no space left on device" in a node.
  local need=0 size root avail
  for image in "$@"; do
    size=$(docker image inspect -f '{{.Size}}' "$image" 2>/dev/null) \
      || die "no image $image in Docker (scripts/images.sh builds the project's)"
    nodes=$(nodes_for "$image")
    need=$((need + 2 * size * $(wc -w <<<"$nodes")))
  done
  root=$(docker info -f '{{.DockerRootDir}}' 2>/dev/null || echo /var/lib/docker)
  avail=$(df -B1 --output=avail "$root" | tail -n 1)
  if [ "$avail" -lt $((need + 2 * 1024 ** 3)) ]; then
    die "loading $* into the nodes needs about $((need / 1024 ** 3 + 2)) GB free where Docker keeps its data ($root), and $((avail / 1024 ** 3)) GB are; free some (docker image prune, docker builder prune)"
  fi
  # Every image at once: one node's import is a single stream that keeps neither the disk nor
  # the cores busy (measured on 2 cores: 636 s one after the other, 548 s at once).
  local pids=() names=() i failed=()
  for image in "$@"; do
    nodes=$(nodes_for "$image")
    # shellcheck disable=SC2086
    timed "loading $image into $nodes" load_image "$image" $nodes &
    pids+=($!); names+=("$image")
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
  [ ${#failed[@]} = 0 ] || die "loading ${failed[*]} failed (above)"
}

cmd_delete() {
  [ -x "$BIN/kind" ] || die "kind is not built ($BIN/kind); nothing to delete"
  "$BIN/kind" delete cluster --name "$CLUSTER" --kubeconfig "$KUBECONFIG_PATH" >&2
}

case "${1:-}" in
  build) cmd_build ;;
  create) shift; cmd_create "$@" ;;
  load) shift; cmd_load "$@" ;;
  delete) cmd_delete ;;
  kubeconfig) echo "$KUBECONFIG_PATH" ;;
  bin-dir) echo "$BIN" ;;
  check)  # exit 0 iff everything `create` needs is built
    for b in kind kubectl helm; do [ -x "$BIN/$b" ] || exit 1; done
    docker image inspect "$NODE_IMAGE" >/dev/null 2>&1 ;;
  *) die "usage: $0 build | create [--no-images] | load IMAGE... | delete | check | kubeconfig | bin-dir" ;;
esac
