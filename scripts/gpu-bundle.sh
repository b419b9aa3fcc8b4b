#!/usr/bin/env bash
# Builds the project and packs it, with its test classes and the JUnit console launcher, into
# .gpu-bundle/ for a GPU host that has a CUDA driver but no JDK, no Maven and no network.
#   scripts/gpu-bundle.sh            (then, on the GPU host, from the repository root:)
#   bash .gpu-bundle/run org.junit.platform.console.ConsoleLauncher execute --scan-classpath --include-tag gpu
#   bash .gpu-bundle/run dev.gpudf.bench.TransferBenchmark
# GPUDF_SHARED points at the shared/ folder holding gpu-bundle/pack.sh (default ../shared).
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${GPUDF_SHARED:-../shared}
JUNIT_CONSOLE=org.junit.platform:junit-platform-console-standalone:1.14.1
mvn -q -B -DskipTests install -DskipTests
mvn -q -B dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/cp.txt \
  -pl columnar,kernels,sql,flight-server,benchmarks,integration-tests
mvn -q -B dependency:copy -Dartifact=$JUNIT_CONSOLE -DoutputDirectory=target/junit
# modules resolve some artifacts to different versions (jackson 2.18.3 and 2.18.4): one
# classpath keeps the highest of each, as a mix of versions fails at run time
cp=$(for f in */target/cp.txt; do cat "$f"; echo; done | tr ':' '\n' | grep -v -E '/(gpudf-[a-z-]+|junit-[a-z-]+|opentest4j|apiguardian-api)-[^/]*\.jar$' \
  | grep . | sort -u | awk -F/ '{v=$(NF-1); f=$NF; sub(v, "", f); k=$0; sub("/" v "/[^/]*$", "", k); print k "/" f "\t" v "\t" $0}' \
  | sort -t$'\t' -k1,1 -k2,2V | awk -F'\t' '{last[$1]=$3} END {for (k in last) print last[k]}' | sort | paste -sd:)
for m in columnar kernels sql flight-server benchmarks integration-tests; do
  [ -d "$m/target/classes" ] && cp="$m/target/classes:$cp"
  [ -d "$m/target/test-classes" ] && cp="$m/target/test-classes:$cp"
done
cp="$cp:$(ls target/junit/*.jar)"
# pack.sh re-creates each jar with a fresh manifest, which breaks signed jars (Janino's): their
# signature files are dropped from a copy. DuckDB (the TPC-H peer of the sql tests) ships
# natives for four platforms in one 84 MB jar; the GPU host needs only linux_amd64. The SQLite
# corpus keeps only its test/select*.test files there.
mkdir -p target/slim
# Left out, as no GPU test or benchmark needs them and the bundle must stay under the device's
# 64 MiB carry limit: Arrow Dataset (Parquet, 78 MB of natives), the Flight SQL JDBC driver
# (43 MB, CPU tests only), Testcontainers with its Docker client, other platforms' TLS natives.
cp=$(echo "$cp" | tr ':' '\n' | grep -v -E '/(arrow-dataset|flight-sql-jdbc-driver|testcontainers|docker-java-[a-z-]+)-[^/]*\.jar$|/netty-tcnative-boringssl-static-[^/]*-(osx|windows|linux-aarch_64)[^/]*\.jar$' | paste -sd:)
for jar in $(echo "$cp" | tr ':' '\n' | grep '\.jar$'); do
  drop=$(unzip -Z1 "$jar" | grep -E '^META-INF/[^/]*\.(SF|RSA|DSA|EC)$|^libduckdb_java\.so_(osx|windows|linux_arm64)|^test/(random|index|evidence)/' || true)
  [ -n "$drop" ] || continue
  slim=$(pwd)/target/slim/$(basename "$jar")
  cp "$jar" "$slim" && echo "$drop" | xargs zip -q -d "$slim"
  cp=${cp//$jar/$slim}
done
rm -rf .gpu-bundle
bash "$SHARED/gpu-bundle/pack.sh" .gpu-bundle "$cp"
du -sh .gpu-bundle
# the GPU host has no git, and a .git it keeps from an earlier call can be stale: the bundle says what it was built from
{ git rev-parse HEAD; git diff --quiet HEAD || echo "(with uncommitted changes)"; } | paste -sd' ' > .gpu-bundle/COMMIT
