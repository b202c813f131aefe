#!/bin/bash
# The committed deploy/crds equal what `koord crds` generates, and every one is valid YAML that
# koord validate does not choke on (structure is checked by the api.crd unit test).
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"

mkdir "$TMP/crds"
run "$KOORD" crds --output-dir "$TMP/crds"
expect_rc 0 "koord crds --output-dir"
diff -r "$TMP/crds" deploy/crds >"$TMP/diff" 2>&1 || fail "deploy/crds is stale (run make crds): $(cat "$TMP/diff")"
[ "$(ls deploy/crds | wc -l)" -eq 7 ] || fail "want 7 CRDs, found $(ls deploy/crds)"
run "$KOORD" crds
expect_rc 0 "koord crds"
expect_out "name: reservations.scheduling.koordinator.sh" "koord crds"
expect_out "shortNames:" "koord crds"
finish
