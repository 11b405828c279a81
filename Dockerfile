# hardneg in a container: the binary carries its site (docs/deploy.md), so
# the runtime image holds that one file, running as a non-root user with its
# data on a volume. Build: docker build -t hardneg .
# Run:   docker run -p 3000:3000 -v hardneg-data:/data hardneg serve --demo --bind 0.0.0.0:3000
FROM rust:1.95-slim-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm pkg-config gcc g++ make \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# setup.sh adds the wasm target, wasm-bindgen-cli matching Cargo.lock and wasm-opt (npm binaryen@132).
RUN ./scripts/setup.sh && RELEASE=1 ./scripts/build-site.sh && cp target/release/hardneg /hardneg

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data hardneg \
    && mkdir /data && chown hardneg /data
COPY --from=build /hardneg /usr/local/bin/hardneg
USER hardneg
VOLUME /data
ENV HARDNEG_DATA_DIR=/data
EXPOSE 3000
ENTRYPOINT ["hardneg"]
CMD ["serve", "--bind", "0.0.0.0:3000"]
