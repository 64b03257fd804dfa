#!/bin/sh
# Compiles the add-on's hamcp binary: static (no cgo), reproducible (-trimpath, no VCS stamp), and
# without the simulated home (-tags nosim). The Dockerfile's build stage runs this script, and
# dev/packaging's tests run the very same script, so the binary they check is the one users get.
# Usage: addon/compile-hamcp.sh OUTPUT   (BUILD_VERSION sets the version hamcp reports)
set -eu
out="${1:?usage: compile-hamcp.sh OUTPUT}"
cd "$(dirname "$0")/.."
CGO_ENABLED=0 exec go build -trimpath -buildvcs=false -tags nosim \
	-ldflags "-s -w -X github.com/hamcp/hamcp/src/app.Version=${BUILD_VERSION:-dev}" \
	-o "$out" ./src/cmd/hamcp
