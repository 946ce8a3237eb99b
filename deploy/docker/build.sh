#!/usr/bin/env bash
# Builds the gatehouse executable the way the container image ships it and lays it out in OUT:
# OUT/gatehouse with the Swift runtime linked in statically, and its resource folder beside it.
# The Dockerfile runs `deploy/docker/build.sh release /out /tmp/build`; .ci/run runs the same script
# in debug in a build folder of its own that it keeps between runs, like the tests' (no container
# engine there), and checks that the result runs without the Swift toolchain's libraries.
#   deploy/docker/build.sh release|debug OUT [SCRATCH]
#
# Why the linker flags: in a build folder whose objects were compiled for the dynamic runtime,
# `--static-swift-stdlib` relinks without recompiling them, but those objects name no static
# Foundation dependencies. lld reads archives in any order, so naming Foundation's static
# dependencies once here links them; in a fresh folder (the image) they are named twice, which is
# harmless. A folder that has built this way is then not fit for the tests' dynamic build (its objects
# name static libraries the next link cannot find), so CI keeps the two apart.
set -euo pipefail
configuration=${1:?release or debug}
out=${2:?output folder}
scratch=${3:-.build-image}
flags=(-c "$configuration" --product gatehouse --static-swift-stdlib --scratch-path "$scratch"
    -Xswiftc -use-ld=lld)
for library in CoreFoundation _FoundationICU _FoundationCShims _FoundationCollections; do
    flags+=(-Xlinker "-l$library")
done
swift build "${flags[@]}"
bin=$(swift build "${flags[@]}" --show-bin-path)
mkdir -p "$out"
cp "$bin/gatehouse" "$out/"
# The migrations (GatehouseStore) and the console's templates, style and script (GatehouseServer).
for bundle in gatehouse_GatehouseStore.resources gatehouse_GatehouseServer.resources; do
    rm -rf "${out:?}/$bundle"
    cp -R "$bin/$bundle" "$out/"
done
