#!/usr/bin/env bash
# Builds the gatehouse executable the way the container image ships it and lays it out in OUT:
# OUT/gatehouse with the Swift runtime linked in statically, and its resource folder beside it.
# The Dockerfile runs `deploy/docker/build.sh release /out`; .ci/run runs the same script in debug
# (no container engine there) and checks that the result runs without the Swift toolchain's libraries.
#   deploy/docker/build.sh release|debug OUT [SCRATCH]
set -euo pipefail
configuration=${1:?release or debug}
out=${2:?output folder}
scratch=${3:-.build-image}
flags=(-c "$configuration" --product gatehouse --static-swift-stdlib --scratch-path "$scratch")
swift build "${flags[@]}"
bin=$(swift build "${flags[@]}" --show-bin-path)
mkdir -p "$out"
cp "$bin/gatehouse" "$out/"
rm -rf "$out/gatehouse_GatehouseStore.resources"
cp -R "$bin/gatehouse_GatehouseStore.resources" "$out/"
