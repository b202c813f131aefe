#!/bin/sh
# `make image`: builds the koord image (Dockerfile) with the first usable builder, or the one
# named. Usable means it can build here: podman and buildah need nothing running, docker needs
# its daemon (a docker CLI without a daemon is common and would fail later with a vaguer
# message). Without any, it says what it looked for and exits 1, building nothing.
# usage: scripts/build-image.sh IMAGE [BUILDER]
set -eu

image=${1:?usage: build-image.sh IMAGE [BUILDER]}
want=${2:-}

usable() {
    command -v "$1" >/dev/null 2>&1 || { why="$1: not installed"; return 1; }
    case "$(basename "$1")" in
    docker)
        "$1" info >/dev/null 2>&1 || { why="$1: installed, but its daemon is not reachable"; return 1; } ;;
    *)
        "$1" version >/dev/null 2>&1 || { why="$1: installed, but \`$1 version\` fails"; return 1; } ;;
    esac
}

builder=""
reasons=""
for b in ${want:-podman buildah docker}; do
    if usable "$b"; then
        builder=$b
        break
    fi
    reasons="$reasons
  $why"
done
if [ -z "$builder" ]; then
    echo "make image: no usable image builder:$reasons" >&2
    echo "make image: install podman or buildah (Debian: apt-get install podman), or start docker;" \
        "IMAGE_BUILDER=<tool> picks one" >&2
    exit 1
fi
cd "$(dirname "$0")/.."
case "$(basename "$builder")" in
buildah) set -x; exec "$builder" bud -f Dockerfile -t "$image" . ;;
*) set -x; exec "$builder" build -f Dockerfile -t "$image" . ;;
esac
