#!/usr/bin/env bash
# Makes sure a container engine answers on this machine, for `suanli up` and the tests:
#   - uses Docker's or Podman's socket if one already answers;
#   - otherwise configures Podman for these machines and starts its Docker-compatible service;
#   - builds the local demo image (localhost/suanli/busybox:latest) when it is missing or older than
#     this script's, because no registry may be reachable: the `demo-http` and `demo-ssh` templates
#     and the tests run it.
# Prints the socket URL (unix:///...) on its last line. Run as root. Idempotent.
set -euo pipefail

podman_socket=/run/podman/podman.sock
demo_image=localhost/suanli/busybox:latest
demo_version=4  # the image's suanli.demo label; bump it when the image changes

answers() { curl -sf --max-time 2 --unix-socket "$1" http://engine/_ping >/dev/null 2>&1; }

socket=""
docker_host=${DOCKER_HOST:-}
for candidate in "${docker_host#unix://}" /var/run/docker.sock "$podman_socket"; do
  if [ -n "$candidate" ] && [ -S "$candidate" ] && answers "$candidate"; then
    socket=$candidate
    break
  fi
done

if [ -z "$socket" ]; then
  command -v podman >/dev/null || {
    echo "engine.sh: no Docker or Podman socket answers and podman is not installed;" \
      "run: sudo bash scripts/install-deps.sh" >&2
    exit 1
  }
  # Debian 12's Podman 4.3 in these sandboxes: crun rejects the hybrid cgroup layout (runc works),
  # systemd is not PID 1 (cgroupfs), and raising rlimits is forbidden (no default ulimits).
  conf=/etc/containers/containers.conf
  if ! grep -qs 'suanli' "$conf"; then
    mkdir -p /etc/containers
    [ -f "$conf" ] && cp "$conf" "$conf.before-suanli"
    cat >"$conf" <<'EOF'
# Written by suanli's scripts/engine.sh (the previous file, if any, is containers.conf.before-suanli).
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
EOF
  fi
  mkdir -p "$(dirname "$podman_socket")"
  rm -f "$podman_socket"
  setsid podman system service --time=0 "unix://$podman_socket" >/var/log/suanli-podman.log 2>&1 &
  for _ in $(seq 1 100); do
    answers "$podman_socket" && break
    sleep 0.1
  done
  answers "$podman_socket" || {
    echo "engine.sh: podman's service did not answer on $podman_socket; see /var/log/suanli-podman.log" >&2
    exit 1
  }
  socket=$podman_socket
fi

# The demo image: busybox (static) with a few applet links, and Dropbear (an SSH server) with the
# libraries it links, imported as a one-layer image. Root's home is /workspace, where pods mount their
# volume, so Dropbear reads the authorized_keys the agent writes there.
if ! curl -sf --unix-socket "$socket" "http://engine/images/$demo_image/json" 2>/dev/null |
  grep -q "\"suanli.demo\": *\"$demo_version\""; then
  busybox=$(command -v busybox || true)
  if [ -z "$busybox" ] || ! file -L "$busybox" 2>/dev/null | grep -q 'statically linked'; then
    busybox=/bin/busybox  # busybox-static installs it here
  fi
  [ -x "$busybox" ] || {
    echo "engine.sh: busybox is missing; run: sudo bash scripts/install-deps.sh" >&2
    exit 1
  }
  rootfs=$(mktemp -d)
  trap 'rm -rf "$rootfs"' EXIT
  mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/www" "$rootfs/workspace"
  cp "$busybox" "$rootfs/bin/busybox"
  for applet in sh ash cat echo env ls mkdir nc printf sleep httpd date id hostname wget sed; do
    ln -s busybox "$rootfs/bin/$applet"
  done
  echo '<h1>suanli demo pod</h1>' >"$rootfs/www/index.html"
  # The demo serverless worker (the demo-worker template).
  cp "$(dirname "$0")/demo-worker.sh" "$rootfs/bin/demo-worker"
  chmod 755 "$rootfs/bin/demo-worker"
  dropbear=/usr/sbin/dropbear  # dropbear-bin
  [ -x "$dropbear" ] || {
    echo "engine.sh: $dropbear is missing; run: sudo bash scripts/install-deps.sh" >&2
    exit 1
  }
  mkdir -p "$rootfs/usr/sbin" "$rootfs/etc/dropbear"
  cp "$dropbear" "$rootfs/usr/sbin/dropbear"
  for library in $(ldd "$dropbear" | grep -oE '/[^ ]+\.so[^ ]*'); do
    mkdir -p "$rootfs$(dirname "$library")"
    cp -L "$library" "$rootfs$library"
  done
  echo 'root:x:0:0:root:/workspace:/bin/sh' >"$rootfs/etc/passwd"
  echo 'root:x:0:' >"$rootfs/etc/group"
  echo '/bin/sh' >"$rootfs/etc/shells"
  changes=(--change 'ENV PATH=/bin:/usr/sbin' --change "LABEL suanli.demo=$demo_version")
  if command -v podman >/dev/null; then
    tar -C "$rootfs" -c . | podman import "${changes[@]}" - "$demo_image" >/dev/null 2>&1
  else
    tar -C "$rootfs" -c . | docker import "${changes[@]}" - "$demo_image" >/dev/null 2>&1
  fi
fi

echo "unix://$socket"
