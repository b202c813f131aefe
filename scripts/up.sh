#!/bin/sh
# `make up`: run the offline tools on the examples (the manifests validated, the NodeSLO the
# manager would write for two nodes), then start the standalone API server in the foreground.
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
"$KOORD" slo check --config examples/slo-controller-config.yaml

echo
echo "== koord apiserver (the standalone control plane; Ctrl-C stops it)"
mkdir -p .koord
LISTEN=${KOORD_LISTEN:-127.0.0.1:6443}
echo "   data in .koord/apiserver; talk to it with:"
echo "   export KUBECONFIG=$PWD/.koord/kubeconfig"
echo "   kubectl apply -f deploy/crds/ -f deploy/priorityclasses.yaml"
echo "   kubectl create -f examples/seed/ && kubectl get nodeslos"
exec "$KOORD" apiserver --data-dir .koord/apiserver --listen "$LISTEN" \
    --write-kubeconfig .koord/kubeconfig
