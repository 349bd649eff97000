#!/usr/bin/env bash
# Builds the .deb here, then installs it with apt into a brand-new Debian 12 root (see
# scripts/fresh-root.sh) and uses it there as a user would: a short CPU training run with
# the default corpus, and the app opened under Xvfb. Nothing from the build or ~/.cache is
# visible inside, so a missing dependency or library fails here.
#   scripts/packaging-check.sh            (needs root, like fresh-root.sh)
set -euo pipefail

say() { printf '\033[1mpackaging-check:\033[0m %s\n' "$*"; }

if [ "${1:-}" = --inside ]; then  # runs in the new root; the packages are under /out
  deb=$(ls /out/normlab_*_amd64.deb)
  say "installing $(basename "$deb") ($(du -h "$deb" | cut -f1))"
  apt-get update -qq
  # xvfb, xauth and x11-utils only to open and find the window here; the package needs none.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" xvfb xauth x11-utils >/dev/null
  say "installed size: $(dpkg-query -W -f='${Installed-Size}' normlab) KiB"
  cd "$(mktemp -d)"
  [ ! -e "$HOME/.cache/normlab/torch-$(cat /root/normlab/cmake/torch.version)" ] || { say "a LibTorch cache is here"; exit 1; }
  normlab-cli --version
  normlab-cli train --scale cpu --steps 20 --out runs
  ls runs/*.json runs/*.csv >/dev/null
  say "opening the app under Xvfb"
  xvfb-run -a -s "-screen 0 1400x900x24" bash -c '
    normlab & app=$!
    sleep 15
    kill -0 $app || { echo "the app did not stay open"; exit 1; }
    xwininfo -root -tree | grep -q "\"NormLab" || { echo "no NormLab window"; xwininfo -root -tree; exit 1; }
    kill -TERM $app; wait $app' && say "the app opened and closed cleanly"
  ls /usr/share/man/man1/normlab-cli.1.gz /usr/share/metainfo/*.metainfo.xml >/dev/null
  exit 0
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/normlab.sh" package
NORMLAB_ROOT_OUT="$root/build/packages" "$root/scripts/fresh-root.sh" scripts/packaging-check.sh --inside
