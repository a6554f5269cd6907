# syntax=docker/dockerfile:1
# FeedProxy: build with the official Swift image, run on slim Debian with only the
# shared libraries the binary needs: libcurl4 and ca-certificates for upstream fetches,
# libexpat1 for podcast RSS/Atom (FoundationXML, and with it libxml2 and ICU, is gone),
# libgumbo1 (the HTML5 parser) for sanitized show notes,
# libhiredis0.14 for the optional Redis tier. `make image` builds this file with podman
# (--format docker keeps the HEALTHCHECK); `make container-check` runs the image, checks
# it and prints its size (README, "Container").

FROM swift:6.3-bookworm AS build
WORKDIR /src
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4-openssl-dev zlib1g-dev libexpat1-dev libgumbo-dev libhiredis-dev \
 && rm -rf /var/lib/apt/lists/*
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
COPY Benchmarks ./Benchmarks
COPY Fuzz ./Fuzz
RUN swift build -c release --product feedproxy --static-swift-stdlib \
 && install -D -s "$(swift build -c release --show-bin-path)/feedproxy" /out/feedproxy

FROM debian:bookworm-slim AS runtime
LABEL org.opencontainers.image.title="FeedProxy" \
      org.opencontainers.image.description="Flickr, iTunes and Kiva feeds as one small, cached JSON API" \
      org.opencontainers.image.version="1.0.0" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://example.invalid/feedproxy"
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4 ca-certificates libexpat1 libgumbo1 libhiredis0.14 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin feedproxy
COPY --from=build /out/feedproxy /usr/local/bin/feedproxy
COPY Fixtures /usr/share/feedproxy/Fixtures
USER 10001
EXPOSE 8080
ENV PORT=8080 LOG_LEVEL=info
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/feedproxy", "--healthcheck"]
ENTRYPOINT ["/usr/local/bin/feedproxy"]
