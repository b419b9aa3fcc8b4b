#!/usr/bin/env bash
# Runs on the GPU host from the repository root, after scripts/gpu-bundle.sh packed .gpu-bundle:
# the gpu-tagged tests, `gpudf info`, the transfer benchmark and its PyTorch peer, each output
# saved under $OUT (or ./gpu-out). Usage: bash scripts/gpu-run.sh [tests|heavy|kernels|hash|tpch|handoff|ingest|pipeline|expr|fuzz|files|cold|spark|spark-cluster|launch|bench|all]
# (tests: the gpu-tagged suite, which must finish within one device call, TESTS_LIMIT_S (420) its limit, at which
# the threads' stacks are printed; heavy: the gpu-heavy
# tag, GPU-versus-twin checks on millions of rows; both check every operator's output layout; TESTS_CLASSES,
# comma-separated class names, runs only those classes' gpu-tagged tests: a quick check of one kernel's change,
# not the suite)
# (KERNEL_ARGS passes rows, reps and cpu=0|1 to KernelBenchmark, HASH_ARGS the same to HashBenchmark
# and peer_hash.py; EXPR_ARGS to ExprBenchmark)
# (fuzz: FUZZ_PROCS SqlFuzzTest processes on the GPU backend at once, FUZZ_SECONDS each, each its own
# fresh seed, sharing the device; a total, then each one's output, go to fuzz.txt)
# (tests and files: the bundle's second part, .gpu-bundle-natives with Arrow Dataset's library for
# Parquet, carried in an earlier call on this machine)
# (cold: with the --files bundle: each TPC-H query the first in a fresh process, ColdStartBenchmark; COLD_SF, COLD_ARGS,
# COLD_JAVA_OPTS, COLD_AOT)
# (files: with the bundle of `scripts/gpu-bundle.sh --files`: TPC-H at FILES_SF (default 10) written as Parquet on the
# host's disk (FILES_TABLES: only those tables; files already there are kept; FILES_PER_TABLE=N: each table but nation
# and region a directory of N files, for SF100, whose lineitem is too large for one call or DuckDB's memory whole), then
# queried in place by gpudf and DuckDB; FILES_ARGS passes harness options; then
# ScanBenchmark over its lineitem file (not a directory of them), SCAN_ARGS its options after the file; FILES_TPCH=0 skips
# the TPC-H run, FILES_SCAN=0 the scan one; FILES_JAVA_OPTS adds JVM flags to the TPC-H run;
# FILES_AOT=1 gives that run a JVM ahead-of-time cache trained on SF1 files first, which also leaves
# the queries' generated kernels in the driver's cache of compiled PTX)
# (spark: with the bundle of `scripts/gpu-bundle.sh --spark`: the gpu-tagged Spark test, then TPC-H at SPARK_SF
# (default 10; 0: the test only) through Spark local[SPARK_CORES] (16) with gpudf's rule off and on (SparkTpchBench; SPARK_ARGS adds
# its options; SPARK_LIMIT_S (500) bounds it; SPARK_ROW_SHUFFLE=1 adds a gpudf-only run with Spark's row exchanges for
# the A/B of gpudf's columnar shuffle); Spark's log goes to spark-*.log, its last 2 MB kept)
# (spark-cluster: the same bundle on a host of several GPUs: TPC-H at SPARK_SF (10) through a Spark local cluster of
# one executor with one GPU (gpudf only), then of SPARK_EXECUTORS (2) executors with one GPU each (Spark alone
# and gpudf), SPARK_CORES (16) cores and SPARK_EXECUTOR_MB (65536) MB each; the second report gives the scaling
# efficiency against the first; SPARK_LIMIT_S (270) bounds each run)
set -uo pipefail
what=${1:-all}
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
# the commit the bundle was built from (scripts/gpu-bundle.sh), for the reports
[ -f .gpu-bundle/COMMIT ] && export GPUDF_COMMIT="${GPUDF_COMMIT:-$(cat .gpu-bundle/COMMIT)}"
export JAVA_OPTS="${JAVA_OPTS:--Xmx24g --sun-misc-unsafe-memory-access=allow}"
# the files runs' JVMs keep their heap in transparent huge pages where the kernel gives them on
# request, as ./gpudf's do (the 22 queries' first runs over SF10 Parquet on an H100: 3.90 -> 3.52 s)
THP_OPTS=
if [ -r /sys/kernel/mm/transparent_hugepage/enabled ]; then
  read -r thp < /sys/kernel/mm/transparent_hugepage/enabled || thp=
  case "$thp" in *"[madvise]"*) THP_OPTS=-XX:+UseTransparentHugePages ;; esac
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$OUT/device.txt"
rc=0
# Arrow Dataset's library (the bundle's second part, .gpu-bundle-natives, carried in an earlier
# call on this machine) into the unpacked bundle; false, saying why, when it is not here
natives() {
  bash .gpu-bundle/run -version > /dev/null 2>&1
  local dir=${GPU_BUNDLE_DIR:-/tmp/gpu-bundle}/app/001-gpu-natives
  if [ ! -f .gpu-bundle-natives/arrow-dataset.tar.xz ] || [ ! -d "$dir" ]; then
    echo "no .gpu-bundle-natives here (carry it in a call before this one, on the same machine)" \
      "or .gpu-bundle was packed without a place for it: Parquet cannot be read" | tee -a "$OUT/$1"
    return 1
  fi
  tar -xJf .gpu-bundle-natives/arrow-dataset.tar.xz -C "$dir"
}
# the unpacked bundle's classpath with each directory (the natives, the modules' classes) as a
# jar of its own (stored) in its place: the JVM's ahead-of-time cache refuses a classpath with a
# non-empty directory
jar_classpath() {
  local app=${GPU_BUNDLE_DIR:-/tmp/gpu-bundle}/app
  python3 - "$app" <<'PY'
import os, sys, zipfile
app = sys.argv[1]
entries = open(os.path.join(app, "classpath.txt")).read().split()
out = []
for e in entries:
    d = os.path.join(app, e)
    if os.path.isdir(d):
        with zipfile.ZipFile(d + ".jar.part", "w", zipfile.ZIP_STORED) as z:
            for root, _, files in os.walk(d):
                for f in sorted(files):
                    p = os.path.join(root, f)
                    z.write(p, os.path.relpath(p, d))
        os.replace(d + ".jar.part", d + ".jar")
        e += ".jar"
    out.append(e)
open(os.path.join(app, "classpath.txt"), "w").write("\n".join(out) + "\n")
PY
  # JUnit's --scan-classpath finds no tests in those jars: the tests unpack the bundle again
  touch "$app/jarred"
}
# sets aot to the options that map a JVM ahead-of-time cache (Java 25: classes linked, method profiles), made
# first where this machine has none for the bundle unpacked now; what it did goes to $OUT/$1-log.txt
aot_cache() {
  aot=()
  # a JVM ahead-of-time cache (Java 25: classes linked, method profiles), as the launcher
  # keeps one for `gpudf sql`: trained by the same harness over TPC-H SF1 files (other data,
  # other sizes; the cache holds no results), then mapped by the measured run
  cache=/tmp/gpudf-files.aot
  jar_classpath
  # made for the bundle unpacked now, else made again: the JVM ignores a cache of other jars
  # (an error line in the log), and the run would be reported as with one
  [ "${GPU_BUNDLE_DIR:-/tmp/gpu-bundle}/app.sum" -nt "$cache" ] && rm -f "$cache"
  if [ ! -f "$cache" ]; then
    [ -f /tmp/tpch-parquet-sf1/region.parquet ] || JAVA_OPTS="-Xmx64g --sun-misc-unsafe-memory-access=allow" \
      bash .gpu-bundle/run dev.gpudf.bench.TpchFiles --sf 1 --out /tmp/tpch-parquet-sf1 > "$OUT/$1-aot-train.txt" 2>&1
    # every arithmetic-only program as a generated kernel (not only those over 2^20 rows or more):
    # at SF1 the programs over part, partsupp and customer stay with the interpreter, and the
    # measured run then compiled them cold (q2 32 ms, q16 51, q11 23 at SF10 in session 40); the
    # driver keeps what it compiled in its own on-disk cache, which the measured run finds
    JAVA_OPTS="-Xmx64g --sun-misc-unsafe-memory-access=allow $THP_OPTS -XX:AOTCacheOutput=$cache -Dgpudf.expr.generatedMinRows=0" bash .gpu-bundle/run \
      dev.gpudf.bench.TpchBenchmark --sf 1 --data /tmp/tpch-parquet-sf1 --in-place --engines gpu --reps 1 \
      --out /tmp/gpudf-aot-train >> "$OUT/$1-aot-train.txt" 2>&1
  fi
  if [ -f "$cache" ]; then
    aot=(-XX:AOTCache=$cache)
    echo "with the AOT cache $cache ($(du -m "$cache" | cut -f1) MB)" | tee -a "$OUT/$1-log.txt"
  else
    echo "no AOT cache was made (see $1-aot-train.txt): the run goes without" | tee -a "$OUT/$1-log.txt"
  fi
}
if [ "$what" = tests ] || [ "$what" = all ]; then
  # a files run's AOT cache turned the unpacked classes into jars (jar_classpath), where the
  # launcher's scan finds no tests: unpacked again
  [ -f "${GPU_BUNDLE_DIR:-/tmp/gpu-bundle}/app/jarred" ] && rm -f "${GPU_BUNDLE_DIR:-/tmp/gpu-bundle}/app.sum"
  # the Parquet tests fail without the library; the rest still run
  : > "$OUT/gpu-tests.txt"
  natives gpu-tests.txt; have=$?
  # JUnit's timeout waits for a test's thread to return, and one waiting on a kernel that never ends
  # never does (a Snappy page hung the device so in session 30, and the call ran out with no word of
  # which test): at TESTS_LIMIT_S (default 420, inside a 600 s call) the JVM prints every thread's
  # stack into the output (SIGQUIT), so the test shows, and is stopped 20 s later
  select=(--scan-classpath)
  if [ -n "${TESTS_CLASSES:-}" ]; then
    select=()
    for c in ${TESTS_CLASSES//,/ }; do select+=(--select-class "$c"); done
  fi
  JAVA_OPTS="$JAVA_OPTS -Dgpudf.debug.allocations=true -Dgpudf.debug.checkLayout=true" timeout -s QUIT -k 20 \
    "${TESTS_LIMIT_S:-420}" bash .gpu-bundle/run \
    org.junit.platform.console.ConsoleLauncher execute "${select[@]}" --include-tag gpu --disable-banner \
    --details=tree --config=junit.jupiter.execution.timeout.default=90s 2>&1 | tee -a "$OUT/gpu-tests.txt"
  rc=${PIPESTATUS[0]}
  [ $have = 0 ] || rc=1
  # no test found is no test passed
  if grep -q '\[ *0 tests found' "$OUT/gpu-tests.txt"; then
    echo "no gpu-tagged test was found: nothing ran" | tee -a "$OUT/gpu-tests.txt"
    rc=1
  fi
fi
if [ "$what" = heavy ]; then
  JAVA_OPTS="$JAVA_OPTS -Dgpudf.debug.checkLayout=true" bash .gpu-bundle/run org.junit.platform.console.ConsoleLauncher \
    execute --scan-classpath --include-tag gpu-heavy --disable-banner --details=tree 2>&1 | tee "$OUT/gpu-heavy-tests.txt"
  rc=${PIPESTATUS[0]}
fi
if [ "$what" = kernels ] || [ "$what" = all ]; then
  { JAVA_OPTS="-Xmx64g --sun-misc-unsafe-memory-access=allow" bash .gpu-bundle/run dev.gpudf.bench.KernelBenchmark ${KERNEL_ARGS:-};
    PYTHONUNBUFFERED=1 python3 benchmarks/peer_kernels.py; } 2>&1 | tee "$OUT/kernels.txt"
  python3 benchmarks/compare.py "$OUT/kernels.txt" | tee -a "$OUT/kernels.txt"
fi
if [ "$what" = hash ] || [ "$what" = all ]; then
  { JAVA_OPTS="-Xmx64g --sun-misc-unsafe-memory-access=allow" bash .gpu-bundle/run dev.gpudf.bench.HashBenchmark ${HASH_ARGS:-};
    PYTHONUNBUFFERED=1 python3 benchmarks/peer_hash.py ${HASH_ARGS:-}; } 2>&1 | tee "$OUT/hash.txt"
  python3 benchmarks/compare.py "$OUT/hash.txt" | tee -a "$OUT/hash.txt"
fi
if [ "$what" = tpch ]; then
  # TPCH_ARGS: the harness's options (default SF10, 5 reps, all three engines); reports go to $OUT
  # TPCH_JAVA_OPTS: JVM flags (a streamed SF100 run keeps its data off the heap: give the heap less);
  # host and device memory are sampled every 10 s into tpch-memory.txt
  ( while sleep 10; do echo "$(date +%T) host used $(free -g | awk '/Mem/{print $3}') GiB," \
      "GPU 0 used $(nvidia-smi -i 0 --query-gpu=memory.used --format=csv,noheader)"; done ) > "$OUT/tpch-memory.txt" 2>&1 &
  sampler=$!
  JAVA_OPTS="${TPCH_JAVA_OPTS:--Xmx96g} --sun-misc-unsafe-memory-access=allow" bash .gpu-bundle/run dev.gpudf.bench.TpchBenchmark \
    ${TPCH_ARGS:---sf 10 --reps 5} --out "$OUT" 2>&1 | tee "$OUT/tpch-log.txt"
  kill $sampler
fi
if [ "$what" = handoff ]; then
  # HANDOFF_ARGS: rows and reps (default 100M rows, 5 reps); the CuPy consumer is clients/python
  JAVA_OPTS="-Xmx32g --sun-misc-unsafe-memory-access=allow" bash .gpu-bundle/run dev.gpudf.bench.HandOffBenchmark \
    ${HANDOFF_ARGS:-100000000 5} 2>&1 | tee "$OUT/handoff.txt"
fi
if [ "$what" = ingest ]; then
  # INGEST_ARGS: rows and reps of the IPC ingest benchmark (default 100M rows, 5 reps); the CuPy
  # producers are clients/python/examples/ingest_roundtrip.py and ingest_bench.py
  JAVA_OPTS="-Xmx32g --sun-misc-unsafe-memory-access=allow" bash .gpu-bundle/run dev.gpudf.bench.IngestBenchmark \
    ${INGEST_ARGS:-100000000 5} 2>&1 | tee "$OUT/ingest.txt"
  rc=${PIPESTATUS[0]}
fi
if [ "$what" = pipeline ]; then
  # PIPELINE_ARGS: TPC-H scale and training steps (default SF10, 20 steps); the client is
  # clients/python/examples/pipeline.py (CuPy and PyTorch)
  JAVA_OPTS="-Xmx64g --sun-misc-unsafe-memory-access=allow" bash .gpu-bundle/run dev.gpudf.bench.PipelineBenchmark \
    ${PIPELINE_ARGS:-10 20} 2>&1 | tee "$OUT/pipeline.txt"
  rc=${PIPESTATUS[0]}
fi
if [ "$what" = expr ] || [ "$what" = all ]; then
  JAVA_OPTS="-Xmx64g --sun-misc-unsafe-memory-access=allow" bash .gpu-bundle/run dev.gpudf.bench.ExprBenchmark ${EXPR_ARGS:-} 2>&1 \
    | tee "$OUT/expr.txt"
fi
if [ "$what" = fuzz ]; then
  procs=${FUZZ_PROCS:-4}
  base=$(date +%s%N)
  logs=$(mktemp -d)
  # unpack the bundle once, before the processes start at once (each would unpack over the others)
  bash .gpu-bundle/run -version > /dev/null 2>&1
  for i in $(seq 1 "$procs"); do
    # each process its own share of device memory, pinned memory and its own seed
    JAVA_OPTS="-Xmx8g --sun-misc-unsafe-memory-access=allow -Dgpudf.fuzz.backend=gpu -Dgpudf.fuzz.sqlSeconds=${FUZZ_SECONDS:-300}
      -Dgpudf.fuzz.sqlQueries=10000000 -Dgpudf.fuzz.sqlSeed=$((base / 1000 + i)) -Dgpudf.gpu.memoryLimit=$((8 << 30))
      -Dgpudf.gpu.chunkBytes=$((256 << 20)) -Dgpudf.gpu.pinnedLimit=$((1 << 30))" bash .gpu-bundle/run \
      org.junit.platform.console.ConsoleLauncher execute --select-class dev.gpudf.it.fuzz.SqlFuzzTest --disable-banner \
      --details=summary > "$logs/$i.txt" 2>&1 &
  done
  wait
  # one file: the device hands back only a few
  { grep -h "(gpu backend)" "$logs"/*.txt | awk '{q += $4; w += $(NF-1)} END {print "total: " q " queries, " w " wrong, '"$procs"' processes"}'
    for i in $(seq 1 "$procs"); do echo; echo "## process $i"; cat "$logs/$i.txt"; done; } > "$OUT/fuzz.txt"
  head -1 "$OUT/fuzz.txt"
  for f in "$logs"/*.txt; do grep -q " 1 tests successful" "$f" || rc=1; done
fi
if [ "$what" = files ]; then
  if ! natives files-log.txt; then
    rc=1
  else
    sf=${FILES_SF:-10}
    data=/tmp/tpch-parquet-sf$sf
    # tables written in an earlier call on this machine are kept; FILES_TABLES writes only those named
    # (a scale whose tables take more than one call to write: FILES_TPCH=0 FILES_SCAN=0 until all are there)
    JAVA_OPTS="-Xmx96g --sun-misc-unsafe-memory-access=allow" bash .gpu-bundle/run \
      dev.gpudf.bench.TpchFiles --sf "$sf" --out "$data" ${FILES_TABLES:+--tables "$FILES_TABLES"} \
      ${FILES_PER_TABLE:+--files-per-table "$FILES_PER_TABLE"} 2>&1 | tee "$OUT/files-write.txt"
    aot=()
    if [ "${FILES_AOT:-0}" = 1 ]; then
      aot_cache files
    fi
    if [ "${FILES_TPCH:-1}" = 1 ]; then
      JAVA_OPTS="-Xmx64g --sun-misc-unsafe-memory-access=allow $THP_OPTS ${aot[*]} ${FILES_JAVA_OPTS:-}" bash .gpu-bundle/run dev.gpudf.bench.TpchBenchmark \
        --sf "$sf" --data "$data" --in-place ${FILES_ARGS:---engines gpu,duckdb --reps 3} --out "$OUT" 2>&1 | tee -a "$OUT/files-log.txt"
      rc=${PIPESTATUS[0]}
    fi
    # where a cold scan's time goes: Arrow's reader, gpudf's chunks, the upload; DuckDB as the peer
    # (SCAN_JAVA_OPTS adds JVM flags, a flight recording into $OUT say)
    [ "${FILES_SCAN:-1}" = 0 ] || JAVA_OPTS="-Xmx64g --sun-misc-unsafe-memory-access=allow ${SCAN_JAVA_OPTS:-}" bash .gpu-bundle/run dev.gpudf.bench.ScanBenchmark \
      "$data/lineitem.parquet" ${SCAN_ARGS:-3} 2>&1 | tee "$OUT/files-scan.txt"
  fi
fi
if [ "$what" = cold ]; then
  # each TPC-H query the first in a fresh process (ColdStartBenchmark): TPC-H at COLD_SF (default 1) written as
  # Parquet, a file a table, unless there; COLD_ARGS its options (default: gpu and DuckDB, 5 hot runs), COLD_JAVA_OPTS
  # JVM flags of every process; COLD_AOT=1: with the files run's AOT cache (made first if not here), as `gpudf sql`
  # keeps one
  # gpudf's processes read Arrow IPC copies of the tables (the harness writes them through DuckDB), and the small
  # table's Parquet file with gpudf's own reader: Arrow Dataset's library (.gpu-bundle-natives) is not needed
  natives cold-natives.txt > /dev/null || true
  sf=${COLD_SF:-1}
  data=/tmp/tpch-parquet-sf$sf
  [ -f "$data/region.parquet" ] || JAVA_OPTS="-Xmx64g --sun-misc-unsafe-memory-access=allow" bash .gpu-bundle/run \
    dev.gpudf.bench.TpchFiles --sf "$sf" --out "$data" > "$OUT/cold-write.txt" 2>&1
  aot=()
  [ "${COLD_AOT:-0}" = 1 ] && aot_cache cold
  echo "JVM options of each process: -Xmx32g $THP_OPTS ${aot[*]} ${COLD_JAVA_OPTS:-}" | tee "$OUT/cold.txt"
  JAVA_OPTS="-Xmx32g --sun-misc-unsafe-memory-access=allow $THP_OPTS ${aot[*]} ${COLD_JAVA_OPTS:-}" bash .gpu-bundle/run \
    dev.gpudf.bench.ColdStartBenchmark --data "$data" --sf "$sf" ${COLD_ARGS:---engines gpu,duckdb --reps 5} \
    --out "$OUT/cold-sf$sf.md" 2>&1 | tee -a "$OUT/cold.txt"
  rc=${PIPESTATUS[0]}
fi
if [ "$what" = launch ] || [ "$what" = all ]; then
  # the fixed host costs of a launch, a wait, a read back and an allocation, with CuPy's beside them
  { bash .gpu-bundle/run dev.gpudf.bench.LaunchBenchmark ${LAUNCH_ARGS:-}; python3 benchmarks/peer_launch.py ${LAUNCH_ARGS:-}; } 2>&1 \
    | tee "$OUT/launch.txt"
fi
# the Spark bundle's Java 17 runtime and jars unpacked, and its JVM flags in JAVA_OPTS (heap: SPARK_HEAP)
spark_setup() {
  # the JVM flags Spark's launcher sets on Java 17, as the spark module's tests take them
  flags=$(sed -n '/<surefire.argLine>/,/<\/surefire.argLine>/p' spark/pom.xml | sed 's/<[^>]*>//g' | tr -s ' \n' ' ')
  export GPU_BUNDLE_DIR=${GPU_BUNDLE_DIR:-/tmp/spark-bundle}
  export JAVA_OPTS="-Xmx${SPARK_HEAP:-$1} $flags ${SPARK_JAVA_OPTS:-}"
  # the bundle's second part (.gpu-bundle-natives, carried in an earlier call on this machine): the Java 17
  # runtime first, then the largest jars into the unpacked classpath
  mkdir -p "$GPU_BUNDLE_DIR"
  [ -x "$GPU_BUNDLE_DIR/jre/bin/java" ] || tar -xJf .gpu-bundle-natives/jre.tar.xz -C "$GPU_BUNDLE_DIR" || exit 1
  bash .gpu-bundle/run -version 2>&1 | head -1
  tar -xJf .gpu-bundle-natives/spark-jars.tar.xz -C "$GPU_BUNDLE_DIR/app" || exit 1
}
# Spark's logs keep their last 2 MB
spark_logs() {
  for f in "$OUT"/spark-*.log; do tail -c 2000000 "$f" > "$f.tail" && mv "$f.tail" "$f"; done
}
if [ "$what" = spark ]; then
  spark_setup 64g
  rc=0
  # (SPARK_TEST=0 skips the test: a benchmark run only)
  if [ "${SPARK_TEST:-1}" = 1 ]; then
    # (SPARK_TEST_SELECT picks other tests: "--select-method dev.gpudf.spark.GpuTpchThroughSparkTest#parquetScansOnTheDevice")
    bash .gpu-bundle/run org.junit.platform.console.ConsoleLauncher execute ${SPARK_TEST_SELECT:---select-class dev.gpudf.spark.GpuTpchThroughSparkTest} \
      --disable-banner --details=tree > "$OUT/spark-gpu-test.log" 2>&1
    rc=$?
    grep -E "through Spark|tests (successful|failed|skipped)|went to the device|Exception|expected" "$OUT/spark-gpu-test.log" | head -40
  fi
  sf=${SPARK_SF:-10}
  [ "$sf" = 0 ] && exit $rc
  # at SPARK_LIMIT_S (500) the JVM prints its threads' stacks into the log (a query that never ends shows there)
  timeout -s QUIT -k 20 "${SPARK_LIMIT_S:-500}" bash .gpu-bundle/run dev.gpudf.spark.SparkTpchBench --sf "$sf" --cores "${SPARK_CORES:-16}" \
    --data "${SPARK_DATA:-/tmp/spark-tpch-sf$sf}" --out "$OUT/spark-tpch.md" ${SPARK_ARGS:-} 2> "$OUT/spark-tpch.log"
  [ $? = 0 ] || rc=1
  # (SPARK_ROW_SHUFFLE=1: then gpudf alone with Spark's row exchanges in place of its columnar shuffle, in a
  # fresh JVM, against the first run's times and answers: the A/B of the columnar shuffle)
  if [ "${SPARK_ROW_SHUFFLE:-0}" = 1 ]; then
    timeout -s QUIT -k 20 "${SPARK_ROW_LIMIT_S:-300}" bash .gpu-bundle/run dev.gpudf.spark.SparkTpchBench --sf "$sf" \
      --cores "${SPARK_CORES:-16}" --data "${SPARK_DATA:-/tmp/spark-tpch-sf$sf}" --out "$OUT/spark-row-shuffle.md" \
      ${SPARK_ARGS:-} --alone false --columnar-shuffle false --baseline "$OUT/spark-tpch.md.tsv" 2> "$OUT/spark-row-shuffle.log"
    [ $? = 0 ] || rc=1
  fi
  spark_logs
fi
if [ "$what" = spark-cluster ]; then
  # the executors are JVMs of their own (heap SPARK_EXECUTOR_MB each); the driver only plans and collects
  spark_setup 16g
  export SPARK_HOME=${SPARK_HOME:-/tmp/spark-home} SPARK_LOCAL_IP=${SPARK_LOCAL_IP:-127.0.0.1}
  # Spark runs the discovery script itself, which must be executable
  chmod +x scripts/spark-gpus.sh
  sf=${SPARK_SF:-10}
  data=${SPARK_DATA:-/tmp/spark-tpch-sf$sf}
  common="--sf $sf --cores ${SPARK_CORES:-16} --executor-mb ${SPARK_EXECUTOR_MB:-65536} --data $data ${SPARK_ARGS:-}"
  nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv,noheader
  bash scripts/spark-gpus.sh
  # one executor with one GPU, gpudf only; then SPARK_EXECUTORS (2) executors of one GPU each, Spark alone and
  # gpudf, the first run's answers checked against Spark alone's and its times the scaling baseline
  # (SPARK_BASELINE=0 skips the first run: on a host of one GPU, one executor of it against Spark alone)
  rc=0
  if [ "${SPARK_BASELINE:-1}" = 1 ]; then
    timeout -s QUIT -k 20 "${SPARK_LIMIT_S:-270}" bash .gpu-bundle/run dev.gpudf.spark.SparkTpchBench $common --executors 1 \
      --alone false --out "$OUT/spark-1gpu.md" 2> "$OUT/spark-1gpu.log"
    rc=$?
  fi
  # without the first run's answers the second still runs, with no baseline
  base=""
  [ "$(wc -l < "$OUT/spark-1gpu.md.tsv" 2>/dev/null || echo 0)" -gt 1 ] && base="--baseline $OUT/spark-1gpu.md.tsv"
  timeout -s QUIT -k 20 "${SPARK_LIMIT_S:-270}" bash .gpu-bundle/run dev.gpudf.spark.SparkTpchBench $common \
    --executors "${SPARK_EXECUTORS:-2}" $base --out "$OUT/spark-${SPARK_EXECUTORS:-2}gpu.md" \
    2> "$OUT/spark-${SPARK_EXECUTORS:-2}gpu.log"
  [ $? = 0 ] || rc=1
  # each executor's own output, from the workers' folders
  n=0
  for d in $(find "$SPARK_HOME/work" -mindepth 2 -maxdepth 2 -type d 2>/dev/null | sort | head -8); do
    n=$((n + 1)); cat "$d/stderr" "$d/stdout" > "$OUT/spark-executor-$n.log" 2>/dev/null
  done
  spark_logs
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  bash .gpu-bundle/run dev.gpudf.cli.GpudfCli info 2>&1 | tee "$OUT/info.txt"
  { bash .gpu-bundle/run dev.gpudf.bench.TransferBenchmark 5; python3 benchmarks/peer_transfer.py; } 2>&1 | tee "$OUT/transfer.txt"
fi
exit $rc
