#!/bin/bash
# `make image` (scripts/build-image.sh) on a machine without a usable image builder, which is
# this one: it must say what it looked for and how to get one, and build nothing. A docker CLI
# whose daemon is down is a fault this machine cannot be relied on to have, so a stand-in
# docker that fails `docker info` plays it. Then the dry run (DRY_RUN=1), which needs no
# builder: with the real binary and Dockerfile the build context is fine and every library
# koord links comes from a package the runtime stage installs (or glibc); a Dockerfile that
# lacks one, a COPY of a missing file, a package Debian does not have and a missing binary are
# each named.
. "$(dirname "$0")/lib.sh"
command -v make >/dev/null || skip "make not installed"
command -v dpkg-query >/dev/null || skip "not a Debian system (dpkg-query missing)"
command -v readelf >/dev/null || skip "readelf not installed"

S=$KOORD_SOURCE_DIR
# A PATH with the tools make and the script use, and no image builder.
mkdir -p "$TMP/bin"
for t in make sh bash dirname basename cat mktemp rm awk grep sed sort head readlink \
    dpkg-query apt-cache ldd readelf env uname tr cut; do
    p=$(command -v "$t") || continue
    ln -s "$p" "$TMP/bin/$t"
done
nobuilder=$TMP/bin

# ---- no builder: a clear message, exit status 2 from make (1 from the script) ----
run env PATH="$nobuilder" make -C "$S" image IMAGE=koord:test
expect_rc 2 "make image without a builder"
expect_out "make image: no usable image builder:" "make image without a builder"
expect_out "podman: not installed" "make image without a builder"
expect_out "buildah: not installed" "make image without a builder"
expect_out "docker: not installed" "make image without a builder"
expect_out "install podman or buildah (Debian: apt-get install podman), or start docker" \
    "make image without a builder"
expect_out "DRY_RUN=1 checks the build context" "make image without a builder"
grep -q '^+ ' "$TMP/out" && fail "make image without a builder ran a build: $(cat "$TMP/out")"

# IMAGE_BUILDER names one: only that one is tried.
run env PATH="$nobuilder" make -C "$S" image IMAGE=koord:test IMAGE_BUILDER=buildah
expect_rc 2 "make image IMAGE_BUILDER=buildah"
expect_out "  buildah: not installed" "make image IMAGE_BUILDER=buildah"
grep -v "install podman" "$TMP/out" | grep -q "podman:" && fail "IMAGE_BUILDER=buildah tried podman"

# A docker CLI whose daemon is not reachable.
mkdir -p "$TMP/fake"
cat >"$TMP/fake/docker" <<'EOF'
#!/bin/sh
# a docker CLI with no daemon behind it
[ "$1" = info ] && { echo "Cannot connect to the Docker daemon" >&2; exit 1; }
echo "docker: unexpected call: $*" >&2
exit 3
EOF
chmod +x "$TMP/fake/docker"
run env PATH="$TMP/fake:$nobuilder" make -C "$S" image IMAGE=koord:test
expect_rc 2 "make image with docker but no daemon"
expect_out "docker: installed, but its daemon is not reachable" "make image with docker but no daemon"
expect_out "podman: not installed" "make image with docker but no daemon"

# ---- dry run: the real build context ----
run env PATH="$nobuilder" KOORD_BINARY="$KOORD" make -C "$S" image IMAGE=koord:test DRY_RUN=1
expect_rc 0 "make image DRY_RUN=1"
expect_out "make image: dry run: build context OK" "make image DRY_RUN=1"
expect_out "make image: dry run: no usable image builder here:" "make image DRY_RUN=1"
# Each library koord links directly, with the package that brings it.
readelf -d "$KOORD" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$TMP/needed"
[ -s "$TMP/needed" ] || fail "readelf lists no NEEDED libraries of $KOORD"
while read -r lib; do
    grep -qE "^  $lib: [^ ]+ \((installed by the Dockerfile|in every Debian image)\)$" "$TMP/out" ||
        fail "dry run does not account for $lib: $(cat "$TMP/out")"
done <"$TMP/needed"
expect_out "libcjson.so.1: libcjson1 (installed by the Dockerfile)" "make image DRY_RUN=1"
expect_out "libc.so.6: libc6 (in every Debian image)" "make image DRY_RUN=1"

# ---- dry run: broken contexts, each problem named, exit 1 ----
ctx=$TMP/ctx
mkdir -p "$ctx"
# the runtime stage without libfyaml0
sed 's/ libfyaml0 / /' "$S/Dockerfile" >"$ctx/Dockerfile"
grep -q libfyaml0 "$ctx/Dockerfile" && fail "test setup: libfyaml0 still in the Dockerfile copy"
run env KOORD_IMAGE_CONTEXT="$ctx" KOORD_BINARY="$KOORD" "$S/scripts/build-image.sh" --dry-run koord:test
expect_rc 1 "dry run without libfyaml0"
expect_out "make image: libfyaml.so.0 comes from package libfyaml0, which the runtime stage of \"$ctx/Dockerfile\" does not install" \
    "dry run without libfyaml0"
expect_out "make image: dry run: 1 problem(s) in the build context" "dry run without libfyaml0"
# a COPY of a file the context lacks, and a package Debian does not have
{
    cat "$S/Dockerfile"
    echo "COPY deploy/koordlet.yaml /etc/koord/"
} | sed 's/ libcjson1 / libcjson1 no-such-package-koord /' >"$ctx/Dockerfile"
run env KOORD_IMAGE_CONTEXT="$ctx" KOORD_BINARY="$KOORD" "$S/scripts/build-image.sh" --dry-run koord:test
expect_rc 1 "dry run with a missing COPY source and an unknown package"
expect_out "COPY source \"deploy/koordlet.yaml\" is not in the build context \"$ctx\"" \
    "dry run with a missing COPY source"
expect_out "the runtime stage installs \"no-such-package-koord\", which is no Debian package known here" \
    "dry run with an unknown package"
# no Dockerfile; no binary
rm "$ctx/Dockerfile"
run env KOORD_IMAGE_CONTEXT="$ctx" KOORD_BINARY="$KOORD" "$S/scripts/build-image.sh" --dry-run koord:test
expect_rc 1 "dry run without a Dockerfile"
expect_out "no Dockerfile in the build context \"$ctx\"" "dry run without a Dockerfile"
run env KOORD_BINARY="$TMP/none/koord" "$S/scripts/build-image.sh" --dry-run koord:test
expect_rc 1 "dry run without a binary"
expect_out "no koord binary at \"$TMP/none/koord\"" "dry run without a binary"
finish
