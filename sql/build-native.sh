#!/usr/bin/env bash
# Builds the C sources of SRC_DIR into the shared library TARGET (JNI; gcc and the JDK's headers,
# no CUDA: what needs the driver loads libcuda at run time). Two libraries are made this way:
# src/main/native (the Arrow C Device stream's callbacks, DeviceArrayStreams) into the classes,
# and src/test/native (the peer of the device array tests) into the test classes. Without gcc it
# says so and exits 0: the code that loads the library then fails, naming it.
#   build-native.sh SRC_DIR TARGET JAVA_HOME
set -euo pipefail
SRC=$1; target=$2; JDK=$3
[ -d "$JDK/include" ] || JDK=$(dirname "$JDK")
if ! command -v gcc >/dev/null 2>&1 || [ ! -f "$JDK/include/jni.h" ]; then
  echo "[gpudf] gcc or jni.h not found: $(basename "$target") is not built" >&2
  exit 0
fi
mkdir -p "$(dirname "$target")"
if [ -f "$target" ] && [ -z "$(find "$SRC" "$0" -newer "$target" | head -n 1)" ]; then
  exit 0
fi
gcc -O2 -Wall -Werror -shared -fPIC -I"$JDK/include" -I"$JDK/include/linux" -o "$target" "$SRC"/*.c -ldl
