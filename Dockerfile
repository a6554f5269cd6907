# syntax=docker/dockerfile:1
# FeedProxy: build with the official Swift image, run on slim Debian with only the
# shared libraries the binary needs: libcurl4 and ca-certificates for upstream fetches,
# libssl3 (libcrypto: HMAC-SHA256 for signed image URLs; libcurl4 pulls it in too),
# libxxhash0 (xxHash64: ETags, cursors, fingerprints), libexpat1 for podcast RSS/Atom
# (FoundationXML, and with it libxml2 and ICU, is gone),
# libgumbo1 (the HTML5 parser) for sanitized show notes,
# libhiredis0.14 for the optional Redis tier, libsqlite3-0 for the records a single node
# keeps in DATA_DIR (a volume), libvips42 for the image proxy (slimmed:
# see below and docs/container.md). `make image` builds this file with podman
# (--format docker keeps the HEALTHCHECK); `make container-check` runs the image, checks
# it and prints its size (README, "Container").

FROM swift:6.3-bookworm AS build
WORKDIR /src
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4-openssl-dev libssl-dev libxxhash-dev zlib1g-dev libexpat1-dev libgumbo-dev libhiredis-dev libsqlite3-dev libvips-dev \
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
      org.opencontainers.image.description="Public feeds and APIs as one small, cached JSON API (routes: /openapi.json)" \
      org.opencontainers.image.version="1.0.0" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://example.invalid/feedproxy"
# libvips42 brings every loader libvips has; FeedProxy blocks all but JPEG, PNG, WebP and GIF
# (built in), so the loader modules (ImageMagick, poppler, OpenSlide, JPEG XL, HEIF) go, with
# the packages only they need, and data no image path reads (MIME database, fonts, X11
# locales). HEIF goes because libheif links the x265 encoder (25 MB): without it, HEIF/AVIF
# sources are 415 and AVIF is never chosen. The ldd checks below fail the build if anything
# the binary or libvips links against was taken.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcurl4 ca-certificates libssl3 libxxhash0 libexpat1 libgumbo1 libhiredis0.14 libsqlite3-0 libvips42 libglib2.0-0 \
 && rm -f /usr/lib/*-linux-gnu/vips-modules-8.14/vips-magick.so /usr/lib/*-linux-gnu/vips-modules-8.14/vips-poppler.so \
          /usr/lib/*-linux-gnu/vips-modules-8.14/vips-openslide.so /usr/lib/*-linux-gnu/vips-modules-8.14/vips-jxl.so \
          /usr/lib/*-linux-gnu/vips-modules-8.14/vips-heif.so \
 && dpkg --purge --force-depends imagemagick-6-common libmagickcore-6.q16-6 liblqr-1-0 libltdl7 libpoppler-glib8 libpoppler126 \
          libnss3 libnspr4 libopenslide0 libjxl0.7 libhwy1 libheif1 libx265-199 libaom3 libdav1d6 libde265-0 libnuma1 \
          shared-mime-info fonts-dejavu-core libx11-data libgdk-pixbuf2.0-common libthai-data \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/locale /usr/share/man \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin feedproxy
COPY --from=build /out/feedproxy /usr/local/bin/feedproxy
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN ! ldd /usr/local/bin/feedproxy | grep "not found" \
 && ! ldd /usr/lib/*-linux-gnu/libvips.so.42 | grep "not found"
COPY Fixtures /usr/share/feedproxy/Fixtures
# Records kept across restarts on a single node (the feed ids given out): a volume, so a
# read-only root still has it; with REDIS_URL they are kept in Redis instead.
RUN mkdir -p /var/lib/feedproxy && chown 10001 /var/lib/feedproxy
VOLUME /var/lib/feedproxy
USER 10001
EXPOSE 8080
ENV PORT=8080 LOG_LEVEL=info DATA_DIR=/var/lib/feedproxy
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/feedproxy", "--healthcheck"]
ENTRYPOINT ["/usr/local/bin/feedproxy"]
