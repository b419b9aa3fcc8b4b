#!/usr/bin/env bash
# Builds the project and packs it, with its test classes and the JUnit console launcher, into
# .gpu-bundle/ for a GPU host that has a CUDA driver but no JDK, no Maven and no network.
#   scripts/gpu-bundle.sh            (then, on the GPU host, from the repository root:)
#   bash .gpu-bundle/run org.junit.platform.console.ConsoleLauncher execute --scan-classpath --include-tag gpu
#   bash .gpu-bundle/run dev.gpudf.bench.TransferBenchmark
# Both profiles come in two parts, as Arrow Dataset's native reader does not fit the device's
# 64 MiB carry with the rest: .gpu-bundle (Arrow Dataset without its library) and
# .gpu-bundle-natives (that library, Linux x86-64, stripped). Carry .gpu-bundle-natives in one
# call and .gpu-bundle in the next, on the same warm machine: `bash scripts/gpu-run.sh tests` (or
# files) puts the library in place. scripts/gpu-bundle.sh --files packs the benchmarks over
# Parquet files instead of the tests (no tests, no server). scripts/gpu-bundle.sh --spark packs the
# Spark plugin with Spark and its tests, on a Java 17 runtime (Spark 4.0's), in one part:
#   GPU_BUNDLE_DIR=/tmp/spark-bundle bash .gpu-bundle/run dev.gpudf.spark.SparkTpchBench ...
# GPUDF_SHARED points at the shared/ folder holding gpu-bundle/pack.sh (default ../shared).
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${GPUDF_SHARED:-../shared}
JUNIT_CONSOLE=org.junit.platform:junit-platform-console-standalone:1.14.1
profile=${1:-tests}
case "$profile" in
  tests) modules=columnar,kernels,formats,sql,flight-server,benchmarks,integration-tests; scope=test ;;
  --files) modules=columnar,kernels,formats,sql,benchmarks; scope=runtime ;;
  --spark) modules=columnar,kernels,formats,spark; scope=test ;;
  *) echo "usage: scripts/gpu-bundle.sh [--files|--spark]" >&2; exit 2 ;;
esac
mvn -q -B -DskipTests install -DskipTests
rm -f */target/cp.txt
mvn -q -B dependency:build-classpath -Dmdep.includeScope=$scope -Dmdep.outputFile=target/cp.txt -pl $modules
mvn -q -B dependency:copy -Dartifact=$JUNIT_CONSOLE -DoutputDirectory=target/junit
# modules resolve some artifacts to different versions (jackson 2.18.3 and 2.18.4): one
# classpath keeps the highest of each, as a mix of versions fails at run time
cp=$(for f in */target/cp.txt; do cat "$f"; echo; done | tr ':' '\n' | grep -v -E '/(gpudf-[a-z-]+|junit-[a-z-]+|opentest4j|apiguardian-api)-[^/]*\.jar$' \
  | grep . | sort -u | awk -F/ '{v=$(NF-1); f=$NF; sub(v, "", f); k=$0; sub("/" v "/[^/]*$", "", k); print k "/" f "\t" v "\t" $0}' \
  | sort -t$'\t' -k1,1 -k2,2V | awk -F'\t' '{last[$1]=$3} END {for (k in last) print last[k]}' | sort | paste -sd:)
for m in ${modules//,/ }; do
  [ -d "$m/target/classes" ] && cp="$m/target/classes:$cp"
  [ "$scope" = test ] && [ -d "$m/target/test-classes" ] && cp="$m/target/test-classes:$cp"
done
[ "$scope" = test ] && cp="$cp:$(ls target/junit/*.jar)"
# the Spark tests read TPC-H's data and query text from the SQL module's classes, not its dependencies
[ "$profile" = --spark ] && cp="sql/target/classes:$cp"
# pack.sh re-creates each jar with a fresh manifest, which breaks signed jars (Janino's): their
# signature files are dropped from a copy. DuckDB (the TPC-H peer of the sql tests) ships
# natives for four platforms in one 84 MB jar; the GPU host needs only linux_amd64. The SQLite
# corpus keeps only its test/select*.test files there.
mkdir -p target/slim
# Left out, as no GPU test or benchmark needs them and the bundle must stay under the device's
# 64 MiB carry limit: the Flight SQL JDBC driver (43 MB, CPU tests only), Testcontainers with its
# Docker client, other platforms' TLS natives. Arrow Dataset keeps its classes in both profiles;
# its library (Parquet, 78 MB of natives for four platforms) goes into the second part. The
# --files profile also leaves out the Flight server's stack (gRPC, Netty's HTTP/2 and TLS,
# protobuf) and the CLI's shell, which a benchmark in one process does not load.
out='flight-sql-jdbc-driver|testcontainers|docker-java-[a-z-]+'
if [ "$profile" = --files ]; then
  out="$out|flight-core|flight-sql|grpc-[a-z-]+|protobuf-java(-util)?"
  out="$out|proto-google-common-protos|netty-codec-http2?|netty-codec-socks|netty-handler-proxy|netty-tcnative-[a-z-]+"
  out="$out|httpclient5|httpcore5(-h2)?|jline|picocli"
fi
# Spark in one process keeps its UI's and history's store in memory: RocksDB's 72 MB library is not loaded
[ "$profile" = --spark ] && out="$out|rocksdbjni"
# other platforms' libraries inside jars (Spark's zstd, Snappy and LevelDB ship them all)
others='\.(dylib|jnilib|dll)$|/(aarch64|arm|armv6|armv7|ppc64|ppc64le|s390x|loongarch64|riscv64|i386|x86|linux32|ppc)/[^/]*\.so$'
# the folder the second part's library is unpacked into on the GPU host (scripts/gpu-run.sh):
# first on the classpath, so pack.sh names it 001-gpu-natives
rm -rf target/gpu-natives && mkdir -p target/gpu-natives
echo "Arrow Dataset's native library goes here (scripts/gpu-run.sh)" > target/gpu-natives/README
cp="$(pwd)/target/gpu-natives:$cp"
cp=$(echo "$cp" | tr ':' '\n' | grep -v -E "/($out)-[^/]*\\.jar\$|/netty-tcnative-boringssl-static-[^/]*-(osx|windows|linux-aarch_64)[^/]*\\.jar\$" | paste -sd:)
rm -rf .gpu-bundle-natives
for jar in $(echo "$cp" | tr ':' '\n' | grep '\.jar$'); do
  drop=$(unzip -Z1 "$jar" | grep -E "^META-INF/[^/]*\\.(SF|RSA|DSA|EC)\$|^libduckdb_java\\.so_(osx|windows|linux_arm64)|^test/(random|index|evidence)/|^arrow_dataset_jni/.*\\.(so|dylib|dll)\$|$others" || true)
  [ -n "$drop" ] || continue
  slim=$(pwd)/target/slim/$(basename "$jar")
  cp "$jar" "$slim" && echo "$drop" | xargs zip -q -d "$slim"
  # Arrow Dataset's library goes into the second part; DuckDB's loses its symbol table (grep reads
  # the whole listing: -q stops at the first match, and pipefail then counts unzip's SIGPIPE as a
  # failure, which once left the library out and stopped the packing)
  tmp=$(mktemp -d)
  if unzip -Z1 "$jar" | grep '^arrow_dataset_jni/x86_64/libarrow_dataset_jni\.so$' > /dev/null; then
    (cd "$tmp" && unzip -q "$jar" arrow_dataset_jni/x86_64/libarrow_dataset_jni.so \
      && strip --strip-unneeded arrow_dataset_jni/x86_64/libarrow_dataset_jni.so)
    mkdir -p .gpu-bundle-natives && tar -C "$tmp" -cf - arrow_dataset_jni | xz -6 -T0 > .gpu-bundle-natives/arrow-dataset.tar.xz
  elif unzip -Z1 "$slim" | grep '^libduckdb_java\.so_linux_amd64$' > /dev/null; then
    (cd "$tmp" && unzip -q "$slim" libduckdb_java.so_linux_amd64 && strip --strip-unneeded libduckdb_java.so_linux_amd64 \
      && zip -q "$slim" libduckdb_java.so_linux_amd64)
  fi
  rm -rf "$tmp"
  cp=${cp//$jar/$slim}
done
if [ "$profile" != --spark ] && [ ! -f .gpu-bundle-natives/arrow-dataset.tar.xz ]; then
  echo "no Arrow Dataset library for Linux x86-64 was found on the classpath" >&2; exit 1
fi
rm -rf .gpu-bundle
bash "$SHARED/gpu-bundle/pack.sh" .gpu-bundle "$cp"
if [ "$profile" = --spark ]; then
  # Spark's jars (500 MB unpacked) do not fit one 64 MiB carry: the runtime and the largest jars go into
  # .gpu-bundle-natives (carried in the call before, on the same machine; scripts/gpu-run.sh spark unpacks it)
  tmp=$(mktemp -d)
  mkdir -p "$tmp/app" "$tmp/part2" .gpu-bundle-natives
  tar -xJf .gpu-bundle/app.tar.xz -C "$tmp/app"
  find "$tmp/app" -maxdepth 1 -regextype egrep -regex '.*/[0-9]+-(hadoop-client-runtime|hadoop-client-api|icu4j|spark-core_2\.13)-[^/]*\.jar' \
    -exec mv {} "$tmp/part2/" \;
  tar -C "$tmp/app" -cf - . | xz -6 -T0 > .gpu-bundle/app.tar.xz
  tar -C "$tmp/part2" -cf - . | xz -6 -T0 > .gpu-bundle-natives/spark-jars.tar.xz
  # Spark 4.0 runs on Java 17 or 21, and Hadoop's login needs jdk.security.auth, which pack.sh's runtime leaves out;
  # Spark starts executors with --add-modules=jdk.incubator.vector, and a runtime without it starts none
  rm -f .gpu-bundle/jre.tar.xz
  "/usr/lib/jvm/java-17-openjdk-amd64/bin/jlink" \
    --add-modules java.se,jdk.unsupported,jdk.security.auth,jdk.management,jdk.crypto.ec,jdk.zipfs,jdk.incubator.vector \
    --strip-debug --no-header-files --no-man-pages --output "$tmp/jre"
  tar -C "$tmp" -cf - jre | xz -6 -T0 > .gpu-bundle-natives/jre.tar.xz
  rm -rf "$tmp"
fi
du -sh .gpu-bundle
[ -d .gpu-bundle-natives ] && du -sh .gpu-bundle-natives
# the GPU host has no git, and a .git it keeps from an earlier call can be stale: the bundle says what it was built from
{ git rev-parse HEAD; git diff --quiet HEAD || echo "(with uncommitted changes)"; } | paste -sd' ' > .gpu-bundle/COMMIT
