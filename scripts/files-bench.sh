#!/usr/bin/env bash
# gpudf and DuckDB answering TPC-H queries over the same directory of Parquet files, each run a
# fresh process (as `gpudf sql --path DIR` is used): wall time and peak resident memory from
# /usr/bin/time, median of REPS runs. Usage: scripts/files-bench.sh DIR [q1,q6,q19] [REPS] [BACKEND]
# (needs `mvn -DskipTests package`; DIR holds lineitem.parquet ... as DuckDB's COPY writes them)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1; queries=${2:-q1,q6,q19}; reps=${3:-3}; backend=${4:-cpu}
BT=benchmarks/target
duck=(java -cp "$(ls $BT/gpudf-benchmarks-*.jar | head -n 1):$BT/lib/*" dev.gpudf.bench.DuckDbFiles)
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "# date: $(date -u +%F); host: $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB; commit: $(git rev-parse --short HEAD)"
echo "# command: scripts/files-bench.sh $dir $queries $reps $backend"
echo "| query | engine | wall s (median of $reps) | peak RSS MB (median) | answer |"
echo "| --- | --- | --- | --- | --- |"
for q in ${queries//,/ }; do
  text=$("${duck[@]}" --text "$q")
  for engine in gpudf duckdb; do
    walls=(); mems=(); answer=""
    for ((i = 0; i < reps; i++)); do
      if [ $engine = gpudf ]; then
        /usr/bin/time -f "%e %M" -o /tmp/files-bench.time ./gpudf sql --backend="$backend" --path "$dir" "$text" > /tmp/files-bench.out
      else
        /usr/bin/time -f "%e %M" -o /tmp/files-bench.time "${duck[@]}" "$dir" "$q" > /tmp/files-bench.out
      fi
      read -r wall mem < <(tail -n 1 /tmp/files-bench.time)
      walls+=("$wall"); mems+=("$mem")
      # awk reads the whole output: head would close the pipe early, which pipefail makes an error
      answer=$(awk '!/^\(/ && n < 3 {print; n++}' /tmp/files-bench.out | tr '\n|' ';/' | tr -s ' ' | cut -c1-80)
    done
    w=$(printf '%s\n' "${walls[@]}" | median); m=$(printf '%s\n' "${mems[@]}" | median)
    echo "| $q | $engine | $w | $((m / 1024)) | $answer |"
  done
done
