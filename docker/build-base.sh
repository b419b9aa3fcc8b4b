#!/usr/bin/env bash
# Builds a JRE base image without Docker Hub: a Debian bookworm root file system made by
# debootstrap with openjdk-17-jre-headless, brought in with `docker import`. Needs root,
# debootstrap and a running Docker daemon.   docker/build-base.sh [TAG] (default gpudf-base:local)
set -euo pipefail
TAG=${1:-gpudf-base:local}
ROOT=$(mktemp -d)
chmod 755 "$ROOT"  # it becomes the image's /, which everyone must be able to enter
trap 'rm -rf "$ROOT"' EXIT
debootstrap --variant=minbase --include=openjdk-17-jre-headless bookworm "$ROOT" http://deb.debian.org/debian >/dev/null
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/*
tar -C "$ROOT" -c . | docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' - "$TAG" >/dev/null
echo "$TAG"
