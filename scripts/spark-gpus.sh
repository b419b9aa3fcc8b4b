#!/usr/bin/env bash
# Spark's GPU discovery script for a worker (spark.worker.resource.gpu.discoveryScript) or an
# executor (spark.executor.resource.gpu.discoveryScript): the host's GPUs, by ordinal, as the JSON
# Spark reads ({"name":"gpu","addresses":["0","1"]}). A worker hands each executor distinct ones
# of these; two workers on one host must instead each be given their own
# (spark.worker.resourcesFile), or both hand out the same GPUs.
set -euo pipefail
ids=$(nvidia-smi --query-gpu=index --format=csv,noheader | tr -d ' ')
[ -n "$ids" ] || { echo "nvidia-smi lists no GPU" >&2; exit 1; }
printf '{"name":"gpu","addresses":[%s]}\n' "$(printf '"%s",' $ids | sed 's/,$//')"
