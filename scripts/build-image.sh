#!/bin/sh
# `make image`: builds the koord image (Dockerfile) with the first usable builder, or the one
# named. Usable means it can build here: podman and buildah need nothing running, docker needs
# its daemon (a docker CLI without a daemon is common and would fail later with a vaguer
# message). Without any, it says what it looked for and exits 1, building nothing.
#
# --dry-run (`make image DRY_RUN=1`) builds nothing and needs no builder: it checks the build
# context the way a build would find it, so a broken image shows up on a machine without one
# (tests/e2e/test_image.sh runs it):
#   - the Dockerfile is there and every COPY source (other than --from stages) exists;
#   - the koord binary ($KOORD_BINARY, default build/gcc/koord; the image builds its own
#     Release binary from the same sources, linked to the same libraries) loads: every library
#     `ldd` lists resolves;
#   - each library it links directly (its NEEDED entries) comes from a Debian package the
#     runtime stage installs, or one every Debian image has (Essential, or what an Essential
#     package depends on, directly or not, e.g. libc6);
#     the rest `ldd` lists are those packages' own dependencies, which apt brings along;
#   - every package the runtime stage installs exists.
# Then it names the builder a real build would use, or says none is usable.
# KOORD_IMAGE_CONTEXT overrides the build context directory (default: the source tree).
# usage: scripts/build-image.sh [--dry-run] IMAGE [BUILDER]
set -eu

dry_run=false
if [ "${1:-}" = --dry-run ]; then
    dry_run=true
    shift
fi
image=${1:?usage: build-image.sh [--dry-run] IMAGE [BUILDER]}
want=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
ctx=${KOORD_IMAGE_CONTEXT:-$src}

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

# ---- --dry-run: the build context ----
problems=0
problem() {
    echo "make image: $*" >&2
    problems=$((problems + 1))
}

# The Debian package holding a library path (usrmerge: dpkg may record /usr/lib/... for a
# library ldd finds under /lib/...), or nothing.
package_of() {
    for p in "$1" "/usr$1" "$(readlink -f "$1")"; do
        out=$(dpkg-query -S "$p" 2>/dev/null | head -n 1) || continue
        [ -n "$out" ] && { echo "${out%%:*}"; return 0; }
    done
    return 0
}

# What every Debian image has: the Essential packages and everything they depend on, directly
# or not (libc6, which coreutils pre-depends on, is not Essential itself; libgcc-s1 comes with
# libc6), from this machine's dpkg database. Alternatives (a | b) count by their first choice.
base_packages() {
    dpkg-query -W -f='${Essential}|${Package}|${Pre-Depends}, ${Depends}\n' 2>/dev/null |
        awk -F'|' '
            {
                n = split($3, d, /,/)
                deps[$2] = ""
                for (i = 1; i <= n; i++) {
                    split(d[i], alt, /\|/)
                    sub(/^[ \t]+/, "", alt[1])
                    sub(/[ \t:(].*$/, "", alt[1])
                    if (alt[1] != "") deps[$2] = deps[$2] " " alt[1]
                }
                if ($1 == "yes") queue[++q] = $2
            }
            END {
                for (h = 1; h <= q; h++) {
                    p = queue[h]
                    if (p in seen) continue
                    seen[p] = 1
                    print p
                    m = split(deps[p], dd, / /)
                    for (j = 1; j <= m; j++)
                        if (dd[j] != "" && !(dd[j] in seen)) queue[++q] = dd[j]
                }
            }' | sort -u
}

# The packages the runtime stage (the last FROM) installs with apt-get install.
runtime_packages() {
    awk '
        /^FROM[ \t]/ { stage++; text[stage] = ""; next }
        { text[stage] = text[stage] " " $0 }
        END {
            n = split(text[stage], w, /[ \t\\]+/)
            on = 0
            for (i = 1; i <= n; i++) {
                if (w[i] == "install") { on = 1; continue }
                if (w[i] == "&&" || w[i] == ";") on = 0
                if (on && w[i] !~ /^-/ && w[i] != "") print w[i]
            }
        }' "$1"
}

check_context() {
    df="$ctx/Dockerfile"
    bin=${KOORD_BINARY:-$src/build/gcc/koord}
    if [ ! -f "$df" ]; then
        problem "no Dockerfile in the build context \"$ctx\""
        return
    fi
    grep -q '^FROM[ \t]' "$df" || problem "\"$df\" has no FROM line"
    # COPY sources from the context (not --from=<stage>).
    grep -E '^COPY[ \t]' "$df" | grep -v -- '--from=' | while read -r _ a rest; do
        [ -n "$rest" ] || continue
        [ -e "$ctx/$a" ] || echo "$a"
    done >"$tmp/missing"
    while read -r a; do problem "COPY source \"$a\" is not in the build context \"$ctx\""; done <"$tmp/missing"
    runtime_packages "$df" >"$tmp/pkgs"
    [ -s "$tmp/pkgs" ] || problem "the runtime stage of \"$df\" installs no packages (apt-get install)"
    while read -r p; do
        dpkg-query -W "$p" >/dev/null 2>&1 || apt-cache show "$p" >/dev/null 2>&1 ||
            problem "the runtime stage installs \"$p\", which is no Debian package known here"
    done <"$tmp/pkgs"
    if [ ! -x "$bin" ]; then
        problem "no koord binary at \"$bin\" to check the runtime libraries against (make build, or set KOORD_BINARY)"
        return
    fi
    ldd "$bin" >"$tmp/ldd" 2>&1 || { problem "ldd \"$bin\" failed: $(cat "$tmp/ldd")"; return; }
    grep 'not found' "$tmp/ldd" | while read -r lib _; do
        echo "$lib"
    done >"$tmp/notfound"
    while read -r lib; do problem "\"$bin\" needs $lib, which is not found"; done <"$tmp/notfound"
    base_packages >"$tmp/base"
    readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$tmp/needed"
    while read -r lib; do
        path=$(awk -v l="$lib" '$1 == l && $2 == "=>" { print $3 }' "$tmp/ldd")
        pkg=""
        [ -z "$path" ] || pkg=$(package_of "$path")
        if [ -z "$pkg" ]; then
            problem "$lib ($path): no Debian package provides it"
        elif grep -qx "$pkg" "$tmp/pkgs"; then
            echo "  $lib: $pkg (installed by the Dockerfile)"
        elif grep -qx "$pkg" "$tmp/base"; then
            echo "  $lib: $pkg (in every Debian image)"
        else
            problem "$lib comes from package $pkg, which the runtime stage of \"$df\" does not install"
        fi
    done <"$tmp/needed"
}

if $dry_run; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    echo "make image: dry run: checking the build context \"$ctx\""
    check_context
    if [ "$problems" -gt 0 ]; then
        echo "make image: dry run: $problems problem(s) in the build context" >&2
        exit 1
    fi
    echo "make image: dry run: build context OK"
    if [ -n "$builder" ]; then
        echo "make image: dry run: would build \"$image\" with $builder"
    else
        echo "make image: dry run: no usable image builder here:$reasons"
    fi
    exit 0
fi

if [ -z "$builder" ]; then
    echo "make image: no usable image builder:$reasons" >&2
    echo "make image: install podman or buildah (Debian: apt-get install podman), or start docker;" \
        "IMAGE_BUILDER=<tool> picks one; DRY_RUN=1 checks the build context without building" >&2
    exit 1
fi
cd "$ctx"
case "$(basename "$builder")" in
buildah) set -x; exec "$builder" bud -f Dockerfile -t "$image" . ;;
*) set -x; exec "$builder" build -f Dockerfile -t "$image" . ;;
esac
