#!/bin/sh
# The add-on's entry point. hamcp replaces this shell as PID 1 (no s6-overlay: see the Dockerfile),
# reads the add-on's options from /data/options.json itself, reaps orphaned processes, and ends
# its commands' process trees on stop. Nothing is rendered or downloaded here.
set -eu
exec /usr/bin/hamcp serve
