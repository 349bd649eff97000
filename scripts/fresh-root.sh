#!/usr/bin/env bash
# Runs a command on a clean clone of this checkout's committed HEAD inside a brand-new
# Debian 12 root, the way a new user's machine starts: nothing installed beyond a minimal
# Debian ("important" priority), no ~/.cache. A set-up step the project forgot fails here
# even when the machine that runs this has the package from earlier work.
#
#   scripts/fresh-root.sh                      # runs: scripts/normlab.sh test
#   scripts/fresh-root.sh scripts/normlab.sh package
#   NORMLAB_KEEP_ROOT=1 scripts/fresh-root.sh  # keep the root afterwards to look inside
#   NORMLAB_ROOT_OUT=DIR scripts/fresh-root.sh ...  # DIR appears as /out inside the root
#
# Needs root (chroot and mounts) and mmdebstrap (installed if missing). The minimal root is
# built once and kept as a tarball in $NORMLAB_ROOT_CACHE (default /var/cache/normlab-root);
# each run unpacks a new copy. This machine's package-registry settings are copied in.
# Exit status: the command's.
set -euo pipefail

say() { printf '\033[1mfresh-root:\033[0m %s\n' "$*" >&2; }
[ "$(id -u)" = 0 ] || { say "needs root (chroot, mount)"; exit 2; }
checkout=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)
[ $# -gt 0 ] || set -- scripts/normlab.sh test

cache=${NORMLAB_ROOT_CACHE:-/var/cache/normlab-root}
pristine=$cache/bookworm-important.tar
if [ ! -s "$pristine" ]; then
  if ! command -v mmdebstrap >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
  fi
  mkdir -p "$cache"
  say "building a minimal Debian 12 root (once)"
  mmdebstrap --quiet --mode=root --variant=important bookworm "$pristine.partial.tar"
  mv "$pristine.partial.tar" "$pristine"
fi

root=$(mktemp -d /var/tmp/normlab-root.XXXXXX)
mounts=(proc sys dev)
cleanup() {
  for m in out "${mounts[@]}"; do umount -R "$root/$m" 2>/dev/null || true; done
  if grep -q " $root/" /proc/mounts; then  # never delete through a mount
    say "mounts remain under $root; left in place"
  elif [ -n "${NORMLAB_KEEP_ROOT:-}" ]; then say "root kept at $root"
  else rm -rf "$root"; fi
}
trap cleanup EXIT
tar -xf "$pristine" -C "$root"

# How this machine reaches the package registries (mirrors, proxies, certificates).
cp /etc/resolv.conf "$root/etc/resolv.conf"
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
  : > "$root/etc/apt/sources.list"
fi
for f in /etc/apt/apt.conf.d/*; do
  case $(basename "$f") in 01autoremove|70debconf) ;; *) cp "$f" "$root/etc/apt/apt.conf.d/" ;; esac
done
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/pip.conf"
env | grep -E '^(PIP_|https?_proxy=|HTTPS?_PROXY=|no_proxy=|NO_PROXY=)' > "$root/etc/normlab-root.env" || true
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then  # before the root has its own CA bundle
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/host-ca.crt"
  sed -i 's#^cert *=.*#cert = /etc/host-ca.crt#' "$root/etc/pip.conf" 2>/dev/null || true
  sed -i '/^PIP_CERT=/d' "$root/etc/normlab-root.env"
  printf 'PIP_CERT=/etc/host-ca.crt\nSSL_CERT_FILE=/etc/host-ca.crt\n' >> "$root/etc/normlab-root.env"
fi

mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
for dir in $(printf '%s\n' "${PIP_FIND_LINKS:-}" | tr ' ' '\n'); do  # local wheel folders pip is told about
  if [ -d "$dir" ]; then mkdir -p "$root$dir" && mount --bind "$dir" "$root$dir" && mounts+=("${dir#/}"); fi
done
if [ -n "${NORMLAB_ROOT_OUT:-}" ]; then
  mkdir -p "$NORMLAB_ROOT_OUT" "$root/out" && mount --bind "$NORMLAB_ROOT_OUT" "$root/out"
fi

git clone -q "$checkout" "$root/root/normlab"
printf '%q ' "$@" > "$root/root/command"
cat > "$root/root/run" <<'EOF'
#!/bin/bash
set -a; . /etc/normlab-root.env; set +a
export HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cd /root/normlab && eval "$(cat /root/command)"
EOF
chmod +x "$root/root/run"

say "running '$*' on a clean clone of $(git -C "$checkout" rev-parse --short HEAD) in a new Debian 12 root"
start=$(date +%s)
set +e
env -i "$(command -v chroot)" "$root" /root/run
status=$?
set -e
say "exit $status after $(( $(date +%s) - start )) s"
exit $status
