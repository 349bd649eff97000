#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs what is missing, builds, then
#   scripts/normlab.sh launch   starts the desktop app
#   scripts/normlab.sh test     runs the whole test suite
#   scripts/normlab.sh cli ...  runs normlab-cli with the given arguments
#   scripts/normlab.sh setup    only installs and builds
#   scripts/normlab.sh package  builds the .deb and .tar.gz into build/packages/
#   scripts/normlab.sh bookshelf  installs the bookshelf corpus's Debian packages and builds it
# Idempotent: packages already there, the cached LibTorch and an up-to-date build are reused.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TORCH_VERSION=$(cat "$root/cmake/torch.version")
# CUDA's crt/ headers, which cuda_runtime.h includes and the torch wheel's CUDA packages
# leave out: the one file that includes LibTorch's CUDA headers needs them
# (core/device/cuda_graph_capture.cpp). The CUDA 13.0 of torch 2.11.0's cu130 wheels.
CUDA_CRT_VERSION=13.0.88
cache=${XDG_CACHE_HOME:-$HOME/.cache}/normlab
torch_venv=$cache/torch-$TORCH_VERSION  # cmake/NormLabTorch.cmake looks here
preset=release

say() { printf '\033[1mnormlab:\033[0m %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

install_packages() {
  local wanted=(build-essential cmake pkg-config git
    qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev libxkbcommon-dev
    nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libsentencepiece-dev libopenblas-dev
    libcurl4-openssl-dev libssl-dev libarchive-dev
    bible-kjv xvfb xauth python3 python3-venv
    clang-format-14  # the style check (.clang-format)
    help2man appstream desktop-file-utils dpkg-dev)  # man pages, metadata checks, packaging
  local missing=()
  for package in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return
  say "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# LibTorch is the C++ library inside the PyPI torch wheel (CUDA build); one copy in the
# user's cache serves every clone.
install_libtorch() {
  [ -f "$torch_venv/.complete" ] && return
  say "installing LibTorch $TORCH_VERSION (PyPI torch wheel with its CUDA libraries, about 4 GB) into $torch_venv"
  rm -rf "$torch_venv"
  mkdir -p "$cache"
  python3 -m venv "$torch_venv"
  "$torch_venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir "torch==$TORCH_VERSION" numpy
  touch "$torch_venv/.complete"
}

# Its own step, so that a LibTorch installed before it was needed gains it too.
install_cuda_headers() {
  local stamp=$torch_venv/.cuda-crt-$CUDA_CRT_VERSION
  [ -f "$stamp" ] && return
  say "installing CUDA's crt headers $CUDA_CRT_VERSION into $torch_venv"
  "$torch_venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir "nvidia-cuda-crt==$CUDA_CRT_VERSION"
  touch "$stamp"
}

build() {
  install_packages
  install_libtorch
  install_cuda_headers
  cd "$root"
  # The stamp is written only after a configure that succeeded, so a failed or interrupted
  # one is retried next time instead of trusted; later changes re-run CMake from the build.
  local stamp=build/$preset/.configured
  if [ ! -f "$stamp" ]; then
    say "configuring ($preset)"
    cmake --preset "$preset" >/dev/null
    touch "$stamp"
  fi
  say "building ($preset)"
  cmake --build --preset "$preset"
}

command=${1:-launch}
[ $# -gt 0 ] && shift
case $command in
  setup) build ;;
  test)
    build
    say "running the tests"
    ctest --preset "$preset" -j2 "$@" ;;
  launch)
    build
    exec "$root/build/$preset/app/normlab" "$@" ;;
  cli)
    build >&2
    exec "$root/build/$preset/app/normlab-cli" "$@" ;;
  bookshelf)
    # Not part of every set-up: its dictionaries pull in dictd, a dictionary server, which a
    # user who never trains on the bookshelf need not run. The packages are normlab-cli's list.
    build
    cli=$root/build/$preset/app/normlab-cli
    read -r -a packages <<<"$("$cli" corpora --packages bookshelf)"
    missing=()
    for package in "${packages[@]}"; do
      dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
      say "installing the bookshelf's Debian packages: ${missing[*]}"
      as_root apt-get update -qq
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
    exec "$cli" corpora --build bookshelf ;;
  package)
    build
    say "packaging"
    cpack --preset "$preset"
    ls -l "$root"/build/packages/normlab[-_]* ;;
  *) echo "usage: scripts/normlab.sh [launch|test|cli ARGS...|setup|package|bookshelf]" >&2; exit 2 ;;
esac
