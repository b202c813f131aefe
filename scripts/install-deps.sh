#!/bin/sh
# Installs exactly the Debian packages koord's build and tests need, then the web assets' npm
# packages (web/package-lock.json: the charting library built into the binary, and
# playwright-core, which drives Debian's chromium in the dashboard's browser test). Idempotent and
# quiet when everything is present; uses sudo when not root.
# --bench: instead, what only `make bench` needs: etcd-server, the baseline of bench/apiserver
# (which starts its own etcd on free loopback ports; note that on a host with systemd the
# package also enables a system etcd service on the default ports).
set -eu

PKGS="build-essential cmake pkg-config clang libclang-rt-14-dev clang-format clang-tidy valgrind git curl
libcjson-dev libfyaml-dev libcmocka-dev libsqlite3-dev libmicrohttpd-dev
libgnutls28-dev libcurl4-gnutls-dev"
# kubectl drives the end-to-end tests and `make up`: Debian's kubernetes-client when there is no
# kubectl at all (a newer one already installed is kept).
command -v kubectl >/dev/null 2>&1 || PKGS="$PKGS kubernetes-client"
# The dashboard: node and npm install web/node_modules (a node already installed, e.g.
# NodeSource's, which bundles npm, is kept); chromium is the browser of its e2e test.
{ command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; } || PKGS="$PKGS nodejs npm"
PKGS="$PKGS chromium"
# The official Python client drives tests/e2e/test_python_client.sh, under Debian's
# /usr/bin/python3 (the interpreter the package installs into).
PKGS="$PKGS python3-kubernetes"
bench=false
[ "${1:-}" = "--bench" ] && { PKGS="etcd-server"; bench=true; }

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done

if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "install-deps: installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
$bench && exit 0

# web/node_modules, exactly as the lock file says, when missing or older than the lock (npm ci
# writes node_modules/.package-lock.json last, so an interrupted install is redone).
web="$(dirname "$0")/../web"
if [ ! -f "$web/node_modules/.package-lock.json" ] ||
    [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
    echo "install-deps: npm ci in web/" >&2
    (cd "$web" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
