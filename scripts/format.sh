#!/usr/bin/env bash
# Formats every .h and .cpp of the folders in cmake/NormLabLayers.cmake by .clang-format,
# with Debian 12's clang-format 14 (the version the style check, checks.code_is_formatted,
# uses: another version writes some lines differently).
#   scripts/format.sh
set -euo pipefail
cd "$(dirname "$0")/.."
exec cmake -DCLANG_FORMAT="$(command -v clang-format-14)" -DSOURCE_DIR="$PWD" -DFIX=ON \
  -P tests/checks/check_format.cmake
