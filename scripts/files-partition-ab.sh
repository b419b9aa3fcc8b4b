#!/usr/bin/env bash
# Runs on the GPU host from the repository root, with the bundle of `scripts/gpu-bundle.sh --files`
# (and .gpu-bundle-natives carried in an earlier call, as for `scripts/gpu-run.sh files`): TPC-H at
# FILES_SF (10) from Parquet, in place, under a device budget of BUDGET_MB (2048), first with joins and
# aggregates in partitions (the default; DuckDB beside it, so every answer is checked), then without
# (-Dgpudf.plan.partitionBytes at its maximum). Per query the harness logs its peak device memory,
# what it read, read again and skipped, and how many joins and aggregates ran in partitions; each
# run's report, log and console go into $OUT/partition-ab-sf<sf>.tgz, and the peaks side by side
# into $OUT/partition-ab-sf<sf>.txt.
set -uo pipefail
sf=${FILES_SF:-10}
budget=${BUDGET_MB:-2048}
OUT=${OUT:-gpu-out}
work=/tmp/partition-ab
mkdir -p "$OUT" "$work"
for run in on off; do
  if [ "$run" = on ]; then engines=gpu,duckdb; opts=; else engines=gpu; opts=-Dgpudf.plan.partitionBytes=9223372036854775807; fi
  OUT=$work/sf$sf-$run FILES_SF=$sf FILES_SCAN=0 FILES_JAVA_OPTS="$opts" \
    FILES_ARGS="--engines $engines --reps 1 --device-budget-mb $budget" \
    bash scripts/gpu-run.sh files > "$work/sf$sf-$run-console.txt" 2>&1
  echo "sf$sf $run: exit $?"
done
{
  echo "TPC-H SF$sf from Parquet, device budget $budget MiB, commit ${GPUDF_COMMIT:-$(cat .gpu-bundle/COMMIT)}, $(date -u +%FT%TZ)"
  head -1 "$work/sf$sf-on/device.txt" 2>/dev/null; tail -1 "$work/sf$sf-on/device.txt" 2>/dev/null
  for run in on off; do
    echo "== partitions $run: $(cat "$work/sf$sf-$run"/*.md 2>/dev/null | grep -c '| agree |') answers agree with DuckDB's"
    grep -E "gpu q[0-9]+ (cold:|device memory|read from files|chunk scans)|agree|FAIL|Exception" "$work/sf$sf-$run/files-log.txt"
  done
} > "$OUT/partition-ab-sf$sf.txt"
tar -czf "$OUT/partition-ab-sf$sf.tgz" -C /tmp partition-ab
# query, peak MiB with partitions, peak MiB without
for run in on off; do
  grep -E "^gpu q[0-9]+ device memory" "$work/sf$sf-$run/files-log.txt" | awk '{gsub(",", "", $6); print $2, $6}' > "$work/$run.peaks"
done
LC_ALL=C join -a1 -a2 -e - -o 0,1.2,2.2 <(LC_ALL=C sort "$work/on.peaks") <(LC_ALL=C sort "$work/off.peaks") | sort -V |
  awk 'BEGIN {print "query  peak MiB partitioned  peak MiB whole"} {printf "%-5s %22s %15s\n", $1, $2, $3}' |
  tee -a "$OUT/partition-ab-sf$sf.txt"
