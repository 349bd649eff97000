#!/usr/bin/env bash
# Builds the .deb and .tar.gz here, then installs the .deb with apt into a brand-new
# Debian 12 root (see scripts/fresh-root.sh) and uses it there as a user would: a short
# CPU training run with the default corpus, and the app opened under Xvfb. Nothing from
# the build or ~/.cache is visible inside, so a missing dependency or library fails here.
# Then, in the same root, Debian 12's lintian on the .deb (any error or warning fails; the
# packaging files say why for each one overridden) and packaging/check-bundle.sh on both
# packages: the copyright file covers every file they hold, the changelog is there, the
# bundled libraries are stripped.
#   scripts/packaging-check.sh                 (needs root, like fresh-root.sh)
#   scripts/packaging-check.sh --packages DIR  checks the packages already in DIR instead
#                                              of building them here (.ci/run)
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

  # After the user's checks, so that nothing lintian brings in can stand in for a
  # dependency the package forgot.
  say "lintian (Debian 12's) on $(basename "$deb")"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lintian >/dev/null
  lintian --version
  lintian --fail-on error,warning "$deb" 2> >(grep -v 'running with root privileges' >&2) ||
    { say "lintian reports errors or warnings (above)"; exit 1; }
  say "lintian: no errors, no warnings"
  unpacked=$(mktemp -d)
  dpkg-deb -x "$deb" "$unpacked/deb"
  /root/normlab/packaging/check-bundle.sh --stripped "$unpacked/deb/usr"
  tgz=$(ls /out/normlab-*-linux-x86_64.tar.gz)
  mkdir "$unpacked/tgz" && tar -xzf "$tgz" -C "$unpacked/tgz"
  /root/normlab/packaging/check-bundle.sh --stripped "$unpacked/tgz/$(basename "$tgz" .tar.gz)"
  rm -rf "$unpacked"
  exit 0
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "${1:-}" = --packages ]; then
  packages=$(cd "${2:?usage: scripts/packaging-check.sh [--packages DIR]}" && pwd)
else
  "$root/scripts/normlab.sh" package
  packages=$root/build/packages
fi
for pattern in 'normlab_*_amd64.deb' 'normlab-*-linux-x86_64.tar.gz'; do
  found=$(find "$packages" -maxdepth 1 -name "$pattern" | wc -l)
  [ "$found" = 1 ] || { say "expected one $pattern in $packages, found $found"; exit 1; }
done
NORMLAB_ROOT_OUT="$packages" "$root/scripts/fresh-root.sh" scripts/packaging-check.sh --inside
