#!/usr/bin/env bash
# Make sure a Docker engine answers: install Debian's docker.io when dockerd is missing,
# start dockerd in the background when it is not running (no systemd needed), and wait
# for it. Used by .ci/run and the kind suite; a machine whose Docker already runs is left
# as it is.
#
# --kind also prepares the engine for kind's privileged node containers on a machine whose
# capability bounding set lacks CAP_SYS_RESOURCE (seen in some VMs: Docker asks for every
# capability for --privileged and runc fails with "unable to apply caps: operation not
# permitted"). It registers scripts/runc-bounded (runc, asking only for the capabilities
# the machine has) as Docker's default runtime. Where every capability is there it does
# nothing. It installs debootstrap too, which the local images are built with.
#
# Usage: scripts/docker-engine.sh [--kind]
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "docker-engine: $*" >&2; }
die() { echo "docker-engine: error: $*" >&2; exit 1; }

kind=0
case "${1:-}" in
  --kind) kind=1 ;;
  "") ;;
  *) die "usage: $0 [--kind]" ;;
esac

DOCKERD_LOG=${DOCKERD_LOG:-/var/log/reactorfed-dockerd.log}

if ! command -v dockerd >/dev/null 2>&1 && ! docker info >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || die "dockerd is not installed and this is not root: install Docker first"
  log "installing docker.io from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq docker.io >&2
fi

# The kind suite builds its base and node images locally with debootstrap (no registry is
# reachable); a fresh machine has Docker's package but not this one.
if [ $kind = 1 ] && ! command -v debootstrap >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || die "debootstrap is not installed and this is not root: apt-get install debootstrap"
  log "installing debootstrap from Debian (for the local base and node images)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq debootstrap >&2
fi

# Every capability the kernel offers that this machine's bounding set lacks.
missing_caps() {
  local last bnd
  last=$(cat /proc/sys/kernel/cap_last_cap)
  bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  python3 - "$last" "$bnd" <<'PY'
import sys
last, bnd = int(sys.argv[1]), int(sys.argv[2], 16)
print(" ".join(str(i) for i in range(last + 1) if not bnd >> i & 1))
PY
}

want_runtime=0
if [ $kind = 1 ] && [ -n "$(missing_caps)" ]; then want_runtime=1; fi

restart=0
if [ $want_runtime = 1 ]; then
  runtime="$PWD/scripts/runc-bounded"
  install -D -m 0755 "$runtime" /usr/local/lib/reactorfed/runc-bounded
  conf=/etc/docker/daemon.json
  mkdir -p /etc/docker
  python3 - "$conf" <<'PY' && restart=1 || true
import json, os, sys
path = sys.argv[1]
conf = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
runtimes = conf.setdefault("runtimes", {})
want = {"path": "/usr/local/lib/reactorfed/runc-bounded"}
if runtimes.get("runc-bounded") == want and conf.get("default-runtime") == "runc-bounded":
    sys.exit(1)  # already so: nothing to restart
runtimes["runc-bounded"] = want
conf["default-runtime"] = "runc-bounded"
json.dump(conf, open(path, "w"), indent=2)
PY
  [ $restart = 0 ] || log "registered runc-bounded as Docker's default runtime (missing capabilities: $(missing_caps))"
fi

if docker info >/dev/null 2>&1; then
  if [ $restart = 1 ]; then
    pid=$(pidof dockerd || true)
    [ -n "$pid" ] || die "Docker answers but no dockerd runs here; configure its runtime by hand"
    kill -HUP "$pid"  # dockerd reloads runtimes and default-runtime on SIGHUP
    sleep 1
  fi
  exit 0
fi

[ "$(id -u)" = 0 ] || die "no Docker engine answers and this is not root: start dockerd"
log "starting dockerd (log: $DOCKERD_LOG)"
# cgroupfs on a cgroup v1 machine without systemd; on cgroup v2, dockerd picks what fits.
nohup dockerd >>"$DOCKERD_LOG" 2>&1 </dev/null &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then log "dockerd is up"; exit 0; fi
  sleep 0.5
done
tail -n 20 "$DOCKERD_LOG" >&2 || true
die "dockerd did not answer within 30 s"
