#!/usr/bin/env python3
"""Writes core/gpu_install/cuda_wheels.cpp: the wheels `normlab-cli gpu install` fetches.

They are exactly the wheels the source set-up's pip chose for torch==$(cmake/torch.version)
that hold shared libraries LibTorch's CUDA backend loads (torch itself and the nvidia-*
wheels), read from that virtual environment, with each file's name, size and SHA-256 from
the package index (PEP 691 JSON). Run it after changing cmake/torch.version and running
scripts/normlab.sh setup:  scripts/pin-cuda-wheels.py
"""
import json
import os
import pathlib
import sys
import urllib.request

root = pathlib.Path(__file__).resolve().parent.parent
version = (root / "cmake/torch.version").read_text().strip()
cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "normlab"
site = next((cache / f"torch-{version}" / "lib").glob("python3*/site-packages"))
index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")


def installed(dist_info):
    """(project name, version, wheel tag) of one installed distribution."""
    meta = dict(line.split(": ", 1) for line in (dist_info / "METADATA").read_text().splitlines()
                if ": " in line and not line.startswith(" "))
    tags = {line.split(": ", 1)[1] for line in (dist_info / "WHEEL").read_text().splitlines()
            if line.startswith("Tag: ")}
    return meta["Name"], meta["Version"], tags


def expanded_tags(filename):
    """The tags a wheel's name stands for: py3-none-a.b is py3-none-a and py3-none-b."""
    python, abi, platform = filename[:-len(".whl")].split("-")[-3:]
    return {f"{p}-{a}-{pl}" for p in python.split(".") for a in abi.split(".") for pl in platform.split(".")}


def index_file(name, version, tags):
    request = urllib.request.Request(f"{index}/{name.lower()}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    files = json.load(urllib.request.urlopen(request, timeout=60))["files"]
    prefix = f"{name.replace('-', '_')}-{version}-".lower()
    for f in files:
        if f["filename"].lower().startswith(prefix) and f["filename"].endswith(".whl") \
                and tags <= expanded_tags(f["filename"]):
            return f
    sys.exit(f"pin-cuda-wheels: no {name} {version} wheel tagged {sorted(tags)} on {index}")


wheels = []
for dist_info in sorted(site.glob("*.dist-info")):
    name, wheel_version, tags = installed(dist_info)
    if name != "torch" and not name.startswith("nvidia-"):
        continue
    f = index_file(name, wheel_version, tags)
    wheels.append((name, f["filename"], f["size"], f["hashes"]["sha256"]))
    print(f"{f['filename']}  {f['size'] / 1e6:.0f} MB", file=sys.stderr)

rows = "\n".join(f'      {{"{n}", "{fn}", {size}, "{sha}"}},' for n, fn, size, sha in wheels)
(root / "core/gpu_install/cuda_wheels.cpp").write_text(f"""// Written by scripts/pin-cuda-wheels.py from the source set-up's torch=={version}: edit that, not this.
#include "cuda_wheels.h"

namespace normlab {{

const std::vector<PinnedWheel>& cuda_wheels() {{
  // One wheel a line, as this script writes them.
  // clang-format off
  static const std::vector<PinnedWheel> wheels{{
{rows}
  }};
  // clang-format on
  return wheels;
}}

}}  // namespace normlab
""")
