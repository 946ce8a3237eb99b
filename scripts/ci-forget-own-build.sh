#!/usr/bin/env bash
# Deletes this project's own products from a build folder that .ci/run keeps between runs, leaving the
# third-party packages' products: whatever the run then builds of the project (the server package, the
# client package and the API types generated from openapi.yaml) is compiled from the clone's sources.
#   scripts/ci-forget-own-build.sh BUILD_FOLDER
set -euo pipefail
scratch=${1:?build folder}
[ -d "$scratch" ] || exit 0
for products in "$scratch"/*-unknown-linux-gnu/*/; do
    [ -d "$products" ] || continue
    # The targets, products, test bundles and resource folders of both packages are all named Gatehouse*
    # or gatehouse* (Package.swift and client/Package.swift); no third-party one is.
    find "$products" -maxdepth 1 -iname 'gatehouse*' -exec rm -rf {} +
    [ -d "$products/Modules" ] && find "$products/Modules" -maxdepth 1 -iname 'gatehouse*' -exec rm -rf {} +
    rm -rf "$products/index" "$products/description.json"
done
rm -rf "$scratch/plugins/outputs/client"
