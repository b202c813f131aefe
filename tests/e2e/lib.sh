# Shared helpers for the e2e scripts: each runs the real koord binary ($KOORD) on files in the
# source tree ($KOORD_SOURCE_DIR) and fails with a message naming what differed.
set -eu
: "${KOORD:?KOORD must point at the koord binary}"
: "${KOORD_SOURCE_DIR:?KOORD_SOURCE_DIR must point at the source tree}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# run CMD...: captures stdout+stderr in $TMP/out and the exit status in $rc.
run() { set +e; "$@" >"$TMP/out" 2>&1; rc=$?; set -e; }
expect_rc() { [ "$rc" -eq "$1" ] || fail "$2: exit $rc, want $1; output:$(printf '\n'; cat "$TMP/out")"; }
expect_out() { grep -qF -- "$1" "$TMP/out" || fail "$2: output lacks '$1'; output:$(printf '\n'; cat "$TMP/out")"; }
finish() { [ "$fails" -eq 0 ] || { echo "$fails failure(s)" >&2; exit 1; }; echo "all passed"; }
