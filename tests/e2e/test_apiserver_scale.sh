#!/bin/bash
# The scale subresource of a custom resource (CRD subresources.scale) as kube-apiserver serves
# it: GET answers an autoscaling/v1 Scale from specReplicasPath, statusReplicasPath and
# labelSelectorPath; `kubectl scale` (and a patch of /scale) writes spec.replicas back to the
# object; a negative count is refused; discovery lists <plural>/scale as autoscaling/v1 Scale.
. "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl not installed"; exit 0; }

start_apiserver "$TMP/data"
cat >"$TMP/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: webapps.demo.koord.test}
spec:
  group: demo.koord.test
  scope: Namespaced
  names: {plural: webapps, singular: webapp, kind: WebApp, listKind: WebAppList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas,
              labelSelectorPath: .status.selector}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec: {type: object, properties: {replicas: {type: integer}}}
          status: {type: object, properties: {replicas: {type: integer}, selector: {type: string}}}
EOF
k apply -f "$TMP/crd.yaml"
expect_rc 0 "create CRD"
printf '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"demo"}}' | k create -f -
expect_rc 0 "create namespace"
printf 'apiVersion: demo.koord.test/v1\nkind: WebApp\nmetadata: {name: shop, namespace: demo}\nspec: {replicas: 2}\n' |
    k create -f -
expect_rc 0 "create WebApp"
scale_path=/apis/demo.koord.test/v1/namespaces/demo/webapps/shop/scale

k get --raw "$scale_path"
expect_rc 0 "get scale"
expect_out '"kind":"Scale","apiVersion":"autoscaling/v1"' "a Scale"
expect_out '"spec":{"replicas":2},"status":{"replicas":0}}' "replicas from the paths, 0 when absent"

k scale webapp -n demo shop --replicas=5
expect_rc 0 "kubectl scale"
k get webapp -n demo shop -o jsonpath='{.spec.replicas}'
expect_out 5 "spec.replicas written back"

k patch webapp -n demo shop --subresource=status --type merge \
    -p '{"status":{"replicas":5,"selector":"app=shop"}}'
expect_rc 0 "status write"
k get --raw "$scale_path"
expect_out '"status":{"replicas":5,"selector":"app=shop"}' "status replicas and selector"

k patch webapp -n demo shop --subresource=scale --type merge -p '{"spec":{"replicas":3}}'
expect_rc 0 "patch scale"
k get webapp -n demo shop -o jsonpath='{.spec.replicas}/{.status.replicas}'
expect_out "3/5" "a patch of the scale changes spec.replicas only"

k patch webapp -n demo shop --subresource=scale --type merge -p '{"spec":{"replicas":-3}}'
expect_rc 1 "negative replicas refused"
expect_out 'The Scale "shop" is invalid: spec.replicas' "negative replicas message"

k get --raw /apis/demo.koord.test/v1
expect_out '"name":"webapps/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale"' "discovery"
k delete --raw "$scale_path"
expect_rc 1 "delete of a scale refused"
finish
