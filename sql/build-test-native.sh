#!/usr/bin/env bash
# Builds the native peer of the Arrow C Device Data Interface tests (src/test/native/*.c) into
# OUT_DIR/libgpudf_device_array_peer.so. It needs gcc and the JDK's JNI headers, not CUDA: the
# library loads libcuda at run time. Without gcc it says so and exits 0 (the GPU test that loads
# it then fails, naming the missing library; CPU builds never load it).
#   build-test-native.sh SRC_DIR OUT_DIR JAVA_HOME
set -euo pipefail
SRC=$1; OUT=$2; JDK=$3
[ -d "$JDK/include" ] || JDK=$(dirname "$JDK")
if ! command -v gcc >/dev/null 2>&1 || [ ! -f "$JDK/include/jni.h" ]; then
  echo "[gpudf] gcc or jni.h not found: the native test peer is not built" >&2
  exit 0
fi
mkdir -p "$OUT"
target="$OUT/libgpudf_device_array_peer.so"
if [ -f "$target" ] && [ -z "$(find "$SRC" "$0" -newer "$target" | head -n 1)" ]; then
  exit 0
fi
gcc -O2 -Wall -Werror -shared -fPIC -I"$JDK/include" -I"$JDK/include/linux" -o "$target" "$SRC"/*.c -ldl
