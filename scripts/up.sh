#!/bin/sh
# `make up`: until the servers exist, run the offline tools on the examples and show what they
# produce: the manifests validated, and the NodeSLO the manager would write for two nodes.
set -eu
KOORD=${1:-build/gcc/koord}
cd "$(dirname "$0")/.."

echo "== koord version"
"$KOORD" version
echo
echo "== koord validate -f examples/seed -f examples/reference -f examples/core"
"$KOORD" validate -f examples/seed -f examples/reference -f examples/core
echo
echo "== koord validate -f examples/invalid   (every object here must be rejected)"
"$KOORD" validate -f examples/invalid || [ $? -eq 1 ]
echo
echo "== koord slo render --config examples/slo-controller-config.yaml --node examples/nodes/node-anolis.yaml"
"$KOORD" slo render --config examples/slo-controller-config.yaml --node examples/nodes/node-anolis.yaml
echo
echo "== koord slo render --config examples/slo-controller-config.yaml --node examples/nodes/node-plain.yaml"
"$KOORD" slo render --config examples/slo-controller-config.yaml --node examples/nodes/node-plain.yaml
echo
echo "== koord slo check --config examples/slo-controller-config.yaml"
"$KOORD" slo check --config examples/slo-controller-config.yaml || true
