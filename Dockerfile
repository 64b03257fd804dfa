# The hamcp add-on image. The Supervisor builds it from the repository root (the add-on folder,
# see config.yaml); supervisors since 2026.04 pass no BUILD_FROM, so it has a default here.
ARG BUILD_FROM=ghcr.io/home-assistant/base:3.24

# Stage 1: a static hamcp without the simulated home, built by the same script the tests run.
# The stage runs on the target platform, so no GOARCH mapping is needed on any supervisor.
FROM golang:1.26.10-alpine AS build
ENV GOTOOLCHAIN=local GOFLAGS=-mod=readonly
WORKDIR /src
COPY go.mod go.sum ./
# The go-sdk with one patch proposed upstream (docs/upstream/), which go.mod's replace points at.
COPY third_party ./third_party
RUN go mod download
COPY src ./src
COPY addon/compile-hamcp.sh ./addon/compile-hamcp.sh
ARG BUILD_VERSION=0.1.0
RUN BUILD_VERSION="${BUILD_VERSION}" ./addon/compile-hamcp.sh /out/hamcp

# Stage 2: Home Assistant's base image (curl for the health check). hamcp runs as PID 1 in place of
# the image's s6-overlay: PID 1 holds the container's environment, Supervisor token included, and
# a shell command the user allowed runs as root beside it. hamcp marks itself non-dumpable, so the
# kernel keeps /proc/1/environ and /proc/1/mem from such commands; s6's processes would not.
FROM ${BUILD_FROM}
ARG BUILD_ARCH=amd64
ARG BUILD_VERSION=0.1.0
LABEL \
	io.hass.name="hamcp" \
	io.hass.description="Model Context Protocol server that lets AI assistants (Claude, n8n) read and run your home" \
	io.hass.type="app" \
	io.hass.url="https://github.com/hamcp/hamcp" \
	io.hass.version="${BUILD_VERSION}" \
	io.hass.arch="${BUILD_ARCH}" \
	org.opencontainers.image.title="hamcp" \
	org.opencontainers.image.description="Model Context Protocol server for Home Assistant" \
	org.opencontainers.image.source="https://github.com/hamcp/hamcp" \
	org.opencontainers.image.url="https://github.com/hamcp/hamcp" \
	org.opencontainers.image.documentation="https://github.com/hamcp/hamcp/blob/main/DOCS.md" \
	org.opencontainers.image.licenses="MIT" \
	org.opencontainers.image.version="${BUILD_VERSION}"
COPY --from=build /out/hamcp /usr/bin/hamcp
COPY run.sh /run.sh
EXPOSE 8099/tcp 2222/tcp
# /mcp/health answers 200 while hamcp serves, even when Home Assistant is restarting, so the
# Supervisor's watchdog restarts only a hamcp that stopped answering.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
	CMD curl -fsS --max-time 4 http://127.0.0.1:8099/mcp/health >/dev/null || exit 1
ENTRYPOINT ["/run.sh"]
CMD []
