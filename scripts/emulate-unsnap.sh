#!/usr/bin/env bash
# Runs parquet_decode.cu's Snappy warp code on this host, without a GPU: the lines between its
# [unsnap begin] and [unsnap end] markers are compiled with kernels/src/test/cuda/unsnap_emulation.cpp
# (32 threads as the lanes) and checked against libsnappy. Needs g++ 12+ and libsnappy-dev
# (`apt-get install libsnappy-dev`). Usage: scripts/emulate-unsnap.sh [blocks] (default 100).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -n '/\[unsnap begin\]/,/\[unsnap end\]/p' kernels/src/main/cuda/parquet_decode.cu > "$work/unsnap_section.inc"
[ -s "$work/unsnap_section.inc" ] || { echo "no [unsnap begin] ... [unsnap end] section in parquet_decode.cu" >&2; exit 1; }
g++ -O2 -std=c++20 -pthread -I"$work" -o "$work/emulate" kernels/src/test/cuda/unsnap_emulation.cpp -lsnappy
"$work/emulate" "${1:-100}"
