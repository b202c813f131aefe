# The koord image: the one `koord` binary and the shared libraries it loads, on Debian bookworm
# slim; `make image` builds it (podman, buildah or docker). The three cluster components run it
# as `koord manager`, `koord scheduler` and `koord agent` (deploy/). The default user is an
# unprivileged one (65532): the manager and the scheduler need nothing more; the agent's
# DaemonSet runs it as root, privileged, because it writes the host's cgroups, resctrl and
# sysctls.

# ---- build: a Release build of the binary only (no tests) ----
FROM docker.io/library/debian:bookworm AS build
# nodejs and npm fetch the charting library the binary embeds (web/package-lock.json; only
# the runtime dependency: the browser-test driver is a devDependency).
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends build-essential cmake pkg-config libcjson-dev libfyaml-dev \
        libcmocka-dev libsqlite3-dev libmicrohttpd-dev libgnutls28-dev libcurl4-gnutls-dev \
        nodejs npm ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cd web && npm ci --omit=dev --no-audit --no-fund --loglevel=error
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc >/dev/null \
    && cmake --build /build --target koord -j "$(nproc)" \
    && strip /build/koord

# ---- runtime: the binary's libraries (`ldd koord`) and CA certificates ----
FROM docker.io/library/debian:bookworm-slim
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends libcjson1 libfyaml0 libsqlite3-0 libmicrohttpd12 libgnutls30 \
        libcurl3-gnutls ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 65532 koord && useradd --uid 65532 --gid 65532 --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin koord
COPY --from=build /build/koord /usr/local/bin/koord
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/koord"]
CMD ["help"]
