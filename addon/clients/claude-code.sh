#!/bin/sh
# Adds the hamcp add-on to Claude Code. Usage:
#   HA_TOKEN=<long-lived access token> sh claude-code.sh [http://homeassistant.local:8099/mcp]
# With a public HTTPS address and no HA_TOKEN, Claude Code logs you in through Home Assistant (OAuth).
set -eu
url="${1:-http://homeassistant.local:8099/mcp}"
if [ -n "${HA_TOKEN:-}" ]; then
	exec claude mcp add --transport http home "$url" --header "Authorization: Bearer ${HA_TOKEN}"
fi
exec claude mcp add --transport http home "$url"
