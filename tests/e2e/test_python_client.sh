#!/bin/bash
# koord apiserver driven by the official Kubernetes Python client (Debian's python3-kubernetes,
# installed by `make deps`), a client nobody here wrote (issue 17, Tests): the version API and
# discovery, typed CRUD of a ConfigMap and a Pod, a koord CRD's objects through
# CustomObjectsApi, an informer-style watch from a list's resourceVersion, server-side apply
# (conflict, force, managedFields), and the Status bodies the client turns into ApiException
# (404, 409 AlreadyExists, 422 with causes); a watch from a compacted resourceVersion raises
# ApiException 410 and the relist recovers. The checks are in python_client.py next to this.
#
# Run under Debian's /usr/bin/python3, the interpreter the package installs into (a pyenv or
# venv python earlier on PATH would not see it). A missing client is a failure, not a skip:
# `make test` is meant to cover it.
. "$(dirname "$0")/lib.sh"
cd "$KOORD_SOURCE_DIR"
PY=${KOORD_TEST_PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import kubernetes, yaml' 2>"$TMP/import.err"; then
    echo "FAIL: the Python Kubernetes client is not importable by $PY ($(tail -n 1 "$TMP/import.err"));" \
        "run \`make deps\` (installs Debian's python3-kubernetes)" >&2
    exit 1
fi
command -v kubectl >/dev/null || skip "kubectl not installed"

# A short history, so that a watch from an early resourceVersion is compacted away after a few
# hundred writes rather than 10000 (the 410 and relist check).
history=200
start_apiserver "$TMP/data" --watch-history "$history"
k apply -f deploy/crds/
expect_rc 0 "apply the CRDs"

run "$PY" tests/e2e/python_client.py "$KUBECONFIG" "$history"
expect_rc 0 "python client checks"
cat "$TMP/out"
finish
