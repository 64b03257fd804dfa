#!/command/with-contenv sh
# shellcheck shell=sh
# The add-on's main program under s6-overlay (init: false). with-contenv hands over the container's
# environment, which carries SUPERVISOR_TOKEN; hamcp reads the add-on's options from
# /data/options.json itself, so nothing is rendered or downloaded here.
set -eu
# hamcp gives a shell command the Supervisor token only when the user allows it
# (permission_supervisor_token). s6-overlay's copy of the container environment would hand it to
# any command that reads it, so the copy goes once this script's environment holds the token.
rm -f /run/s6/container_environment/SUPERVISOR_TOKEN /run/s6/container_environment/HASSIO_TOKEN
exec /usr/bin/hamcp serve
