#!/bin/bash
# koord validate on the examples: every valid sample accepted, every invalid one rejected with a
# message naming the field path its "# expect:" comment names; exit codes 0/1/2.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"

for dir in examples/seed examples/reference examples/core examples/nodes; do
    for f in "$dir"/*; do
        run "$KOORD" validate -f "$f"
        expect_rc 0 "$f"
        expect_out "ok " "$f"
    done
done

n=0
for f in examples/invalid/*.yaml; do
    want=$(sed -n 's/^# expect: *//p' "$f" | head -1)
    [ -n "$want" ] || { fail "$f has no '# expect:' line"; continue; }
    run "$KOORD" validate -f "$f"
    expect_rc 1 "$f"
    expect_out "$want" "$f"
    n=$((n + 1))
done
[ "$n" -ge 20 ] || fail "only $n invalid examples"

# The whole tree: invalid ones make the run exit 1 but every valid object still says ok.
run "$KOORD" validate -f examples/
expect_rc 1 "examples/"
expect_out "ok Reservation/" "examples/"

# Unreadable input: exit 2 with the path; malformed YAML with line and column.
run "$KOORD" validate -f "$TMP/missing.yaml"
expect_rc 2 "missing file"
expect_out "missing.yaml" "missing file"
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: [unclosed\n' >"$TMP/bad.yaml"
run "$KOORD" validate -f "$TMP/bad.yaml"
expect_rc 2 "malformed yaml"
expect_out "bad.yaml:" "malformed yaml"

# Unknown fields: a warning, an error with --strict.
cat >"$TMP/unknown.yaml" <<'YAML'
apiVersion: scheduling.koordinator.sh/v1alpha1
kind: Reservation
metadata: {name: r1}
spec:
  template: {spec: {containers: [{name: c}]}}
  owners: [{labelSelector: {matchLabels: {app: web}}}]
  tll: 1h
status: {}
YAML
run "$KOORD" validate -f "$TMP/unknown.yaml"
expect_rc 0 "unknown field"
expect_out 'warning: unknown field "spec.tll"' "unknown field"
run "$KOORD" validate --strict -f "$TMP/unknown.yaml"
expect_rc 1 "unknown field --strict"
expect_out 'unknown field "spec.tll"' "unknown field --strict"

# Defaults appear in the JSON report (status.phase because status exists); stdin works.
run "$KOORD" validate -o json -f - <"$TMP/unknown.yaml"
expect_rc 0 "json report"
expect_out '"ttl": "24h"' "json report"
expect_out '"allocateOnce": true' "json report"
expect_out '"phase": "Pending"' "json report"

# Bad flags.
run "$KOORD" validate -o xml -f "$TMP/unknown.yaml"
expect_rc 2 "bad -o"
run "$KOORD" validate
expect_rc 2 "no -f"
finish
