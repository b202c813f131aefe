"""The official Kubernetes Python client (Debian's python3-kubernetes, v22) against koord
apiserver, driven by tests/e2e/test_python_client.sh: a client nobody here wrote, loaded from the
kubeconfig the server writes, doing what an operator written in Python does (issue 17, Tests).

Usage: python_client.py KUBECONFIG HISTORY, HISTORY being the server's --watch-history (how
many writes it keeps for watches; the test writes more to provoke 410). Prints one line per failed check on stderr ("FAIL: ...")
and exits 1 when any failed; each check names what it expected and what the server answered.
Waits are bounded by deadlines (watch timeouts, a wall-clock limit), never by sleeps.
"""
import json
import sys
import time

import yaml
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

NS = "default"
FAILS = []


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    FAILS.append(msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def api_error(fn, *args, **kwargs):
    """Calls fn and returns the ApiException it raises, or None when it succeeds."""
    try:
        fn(*args, **kwargs)
    except ApiException as e:
        return e
    return None


def status_body(e):
    try:
        return json.loads(e.body)
    except (TypeError, ValueError):
        return {}


def expect_status(e, code, reason, what):
    """e is an ApiException whose Status body says code and reason."""
    if not check(e is not None, "%s: succeeded, want %d %s" % (what, code, reason)):
        return {}
    st = status_body(e)
    check(e.status == code, "%s: status %s, want %d (body %s)" % (what, e.status, code, e.body))
    check(st.get("kind") == "Status" and st.get("reason") == reason and st.get("code") == code,
          "%s: Status body %s, want reason %s code %d" % (what, e.body, reason, code))
    return st


# ---- version and discovery ----

def test_version_discovery():
    v = client.VersionApi().get_code()
    check(v.major and v.minor and v.git_version.startswith("v"),
          "version: %s lacks major/minor/gitVersion" % v)
    check(v.platform and v.go_version is not None, "version: %s lacks platform/goVersion" % v)
    core = client.CoreApi().get_api_versions()
    check("v1" in core.versions, "CoreApi versions %s lack v1" % core.versions)
    groups = {g.name: g for g in client.ApisApi().get_api_versions().groups}
    for name in ("apps", "coordination.k8s.io", "apiextensions.k8s.io", "slo.koordinator.sh",
                 "config.koordinator.sh"):
        check(name in groups, "ApisApi groups lack %s: %s" % (name, sorted(groups)))
    if "slo.koordinator.sh" in groups:
        check(groups["slo.koordinator.sh"].preferred_version.group_version ==
              "slo.koordinator.sh/v1alpha1",
              "slo.koordinator.sh preferred %s" % groups["slo.koordinator.sh"].preferred_version)


# ---- typed CRUD ----

def test_configmap_crud(core):
    body = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="py-cm", labels={"app": "py", "tier": "a"}),
        data={"k": "v1"})
    cm = core.create_namespaced_config_map(NS, body)
    check(cm.metadata.uid and cm.metadata.resource_version and cm.data == {"k": "v1"},
          "create configmap answered %s" % cm)
    e = api_error(core.create_namespaced_config_map, NS, body)
    expect_status(e, 409, "AlreadyExists", "create the configmap again")
    got = core.read_namespaced_config_map("py-cm", NS)
    check(got.metadata.uid == cm.metadata.uid and got.metadata.labels.get("app") == "py",
          "read configmap: %s" % got.metadata)
    core.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-other",
                                                            labels={"app": "other"})))
    names = [i.metadata.name for i in
             core.list_namespaced_config_map(NS, label_selector="app=py").items]
    check(names == ["py-cm"], "list app=py: %s, want [py-cm]" % names)
    names = [i.metadata.name for i in
             core.list_namespaced_config_map(NS, label_selector="app in (py,other)").items]
    check(sorted(names) == ["py-cm", "py-other"], "list app in (py,other): %s" % names)
    # A dict body goes as a strategic merge patch (v22's rest.py picks it for non-lists).
    p = core.patch_namespaced_config_map("py-cm", NS, {"data": {"k2": "v2"},
                                                       "metadata": {"labels": {"tier": None}}})
    check(p.data == {"k": "v1", "k2": "v2"}, "patched data %s" % p.data)
    check(p.metadata.labels == {"app": "py"}, "patched labels %s" % p.metadata.labels)
    # A list body goes as a JSON patch.
    p = core.patch_namespaced_config_map("py-cm", NS, [{"op": "replace", "path": "/data/k",
                                                        "value": "v3"}])
    check(p.data.get("k") == "v3", "json-patched data %s" % p.data)
    st = core.delete_namespaced_config_map("py-cm", NS)
    check(st is not None, "delete configmap answered nothing")
    core.delete_namespaced_config_map("py-other", NS)
    e = api_error(core.read_namespaced_config_map, "py-cm", NS)
    st = expect_status(e, 404, "NotFound", "read the deleted configmap")
    check(st.get("details", {}).get("name") == "py-cm", "404 details %s lack the name" % st)
    e = api_error(core.delete_namespaced_config_map, "py-cm", NS)
    expect_status(e, 404, "NotFound", "delete the deleted configmap")


def test_pod_crud(core):
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="py-pod", labels={"app": "py"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox:1.36")]))
    p = core.create_namespaced_pod(NS, pod)
    # kube's defaults, decoded into the typed model.
    check(p.spec.restart_policy == "Always" and p.spec.scheduler_name == "default-scheduler",
          "pod defaults: restartPolicy %s schedulerName %s" % (p.spec.restart_policy,
                                                               p.spec.scheduler_name))
    check(p.spec.containers[0].image_pull_policy == "IfNotPresent",
          "imagePullPolicy %s" % p.spec.containers[0].image_pull_policy)
    got = core.read_namespaced_pod("py-pod", NS)
    check(got.metadata.uid == p.metadata.uid, "read pod uid %s" % got.metadata.uid)
    names = [i.metadata.name for i in core.list_namespaced_pod(NS, label_selector="app=py").items]
    check(names == ["py-pod"], "list pods app=py: %s" % names)
    names = [i.metadata.name for i in core.list_namespaced_pod(NS, label_selector="app!=py").items]
    check("py-pod" not in names, "list pods app!=py holds py-pod: %s" % names)
    p = core.patch_namespaced_pod("py-pod", NS, {"metadata": {"annotations": {"a": "b"}}})
    check(p.metadata.annotations == {"a": "b"}, "patched pod annotations %s" % p.metadata.annotations)
    # 422 with causes, from an update and from a create.
    e = api_error(core.patch_namespaced_pod, "py-pod", NS,
                  {"metadata": {"labels": {"app": "not a label value!"}}})
    st = expect_status(e, 422, "Invalid", "patch the pod's label to an invalid value")
    causes = st.get("details", {}).get("causes", [])
    check(any(c.get("field") == "metadata.labels" and c.get("reason") == "FieldValueInvalid"
              for c in causes), "422 causes %s lack FieldValueInvalid metadata.labels" % causes)
    e = api_error(core.create_namespaced_pod, NS,
                  client.V1Pod(metadata=client.V1ObjectMeta(name="py-empty"),
                               spec=client.V1PodSpec(containers=[])))
    st = expect_status(e, 422, "Invalid", "create a pod without containers")
    causes = st.get("details", {}).get("causes", [])
    check(any(c.get("field") == "spec.containers" and c.get("reason") == "FieldValueRequired"
              for c in causes), "422 causes %s lack FieldValueRequired spec.containers" % causes)
    core.delete_namespaced_pod("py-pod", NS, grace_period_seconds=0)
    deadline = time.monotonic() + 30
    while api_error(core.read_namespaced_pod, "py-pod", NS) is None:
        if time.monotonic() > deadline:
            fail("pod py-pod still there 30 s after delete --grace-period=0")
            break
        # a read is the wait: each is a round trip


def test_invalid_create(core):
    e = api_error(core.create_namespaced_config_map, NS,
                  client.V1ConfigMap(metadata=client.V1ObjectMeta(name="Bad_Name")))
    st = expect_status(e, 422, "Invalid", "create a configmap named Bad_Name")
    causes = st.get("details", {}).get("causes", [])
    check(any(c.get("field") == "metadata.name" for c in causes),
          "422 causes %s lack metadata.name" % causes)


# ---- a koord CRD through CustomObjectsApi ----

def test_custom_objects():
    co = client.CustomObjectsApi()
    g, v, plural = "config.koordinator.sh", "v1alpha1", "clustercolocationprofiles"
    body = {"apiVersion": g + "/" + v, "kind": "ClusterColocationProfile",
            "metadata": {"name": "py-ccp", "labels": {"owner": "py"}},
            "spec": {"namespaceSelector": {"matchLabels": {"koordinator.sh/enable-colocation":
                                                           "true"}},
                     "qosClass": "BE", "priorityClassName": "koord-batch"}}
    o = co.create_cluster_custom_object(g, v, plural, body)
    check(o["metadata"].get("uid") and o["spec"]["qosClass"] == "BE", "create CR answered %s" % o)
    o = co.get_cluster_custom_object(g, v, plural, "py-ccp")
    check(o["kind"] == "ClusterColocationProfile" and o["metadata"]["name"] == "py-ccp",
          "get CR %s" % o)
    items = co.list_cluster_custom_object(g, v, plural, label_selector="owner=py")["items"]
    check([i["metadata"]["name"] for i in items] == ["py-ccp"], "list CR owner=py: %s" % items)
    o = co.patch_cluster_custom_object(g, v, plural, "py-ccp",
                                       {"spec": {"qosClass": "LS", "priorityClassName": None}})
    check(o["spec"].get("qosClass") == "LS" and "priorityClassName" not in o["spec"],
          "merge-patched CR spec %s" % o["spec"])
    e = api_error(co.patch_cluster_custom_object, g, v, plural, "py-ccp",
                  {"spec": {"qosClass": "NOPE"}})
    expect_status(e, 422, "Invalid", "patch the CR's qosClass to NOPE")
    co.delete_cluster_custom_object(g, v, plural, "py-ccp")
    e = api_error(co.get_cluster_custom_object, g, v, plural, "py-ccp")
    expect_status(e, 404, "NotFound", "get the deleted CR")


# ---- informer-style watch ----

def next_event(events, what):
    """The next event of a watch stream, or None (and a failure) when it ended first."""
    try:
        return next(events)
    except StopIteration:
        fail("watch ended (timeoutSeconds) before " + what)
        return None


def test_watch(core):
    lst = core.list_namespaced_config_map(NS, label_selector="w=py")
    rv = lst.metadata.resource_version
    check(rv, "list answered no resourceVersion")
    # The writes happen before the watch starts: the stream from rv must replay them in order.
    core.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-w", labels={"w": "py"}),
                               data={"n": "1"}))
    core.patch_namespaced_config_map("py-w", NS, {"data": {"n": "2"}})
    core.create_namespaced_config_map(  # filtered out by the selector
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-x", labels={"w": "no"})))
    core.delete_namespaced_config_map("py-w", NS)
    w = watch.Watch()
    events = w.stream(core.list_namespaced_config_map, NS, label_selector="w=py",
                      resource_version=rv, timeout_seconds=20)
    want = [("ADDED", "1"), ("MODIFIED", "2"), ("DELETED", "2")]
    last_rv = int(rv)
    for typ, n in want:
        ev = next_event(events, "%s of py-w" % typ)
        if ev is None:
            break
        obj = ev["object"]
        check((ev["type"], obj.metadata.name, (obj.data or {}).get("n")) == (typ, "py-w", n),
              "watch event %s %s data %s, want %s py-w n=%s" % (ev["type"], obj.metadata.name,
                                                               obj.data, typ, n))
        check(int(obj.metadata.resource_version) > last_rv,
              "watch event resourceVersion %s not after %d" % (obj.metadata.resource_version,
                                                               last_rv))
        last_rv = int(obj.metadata.resource_version)
    # And a write made while the stream is open arrives too.
    core.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-w2", labels={"w": "py"})))
    ev = next_event(events, "ADDED of py-w2")
    if ev:
        check((ev["type"], ev["object"].metadata.name) == ("ADDED", "py-w2"),
              "live watch event %s %s, want ADDED py-w2" % (ev["type"],
                                                             ev["object"].metadata.name))
    w.stop()
    core.delete_namespaced_config_map("py-x", NS)
    core.delete_namespaced_config_map("py-w2", NS)


def test_watch_expired(core, first_rv, history):
    """A watch from a revision the server no longer keeps: the client raises 410, and the
    informer's recovery (relist, watch from the list's revision) works."""
    core.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-churn")))
    for i in range(history + 10):
        core.patch_namespaced_config_map("py-churn", NS, {"data": {"n": str(i)}},
                                         _preload_content=False).read()
    w = watch.Watch()
    try:
        for ev in w.stream(core.list_namespaced_config_map, NS, resource_version=first_rv,
                           timeout_seconds=10):
            fail("watch from compacted rv %s delivered %s, want 410" % (first_rv, ev["type"]))
            break
        else:
            fail("watch from compacted rv %s ended without 410" % first_rv)
    except ApiException as e:
        check(e.status == 410 and "Expired" in str(e.reason),
              "watch from compacted rv: ApiException %s %s, want 410 Expired" % (e.status,
                                                                               e.reason))
    lst = core.list_namespaced_config_map(NS, label_selector="relist=py")
    core.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-relist",
                                                            labels={"relist": "py"})))
    events = w.stream(core.list_namespaced_config_map, NS, label_selector="relist=py",
                      resource_version=lst.metadata.resource_version, timeout_seconds=20)
    ev = next_event(events, "ADDED of py-relist after the relist")
    if ev:
        check((ev["type"], ev["object"].metadata.name) == ("ADDED", "py-relist"),
              "after relist: %s %s" % (ev["type"], ev["object"].metadata.name))
    w.stop()
    core.delete_namespaced_config_map("py-relist", NS)
    core.delete_namespaced_config_map("py-churn", NS)


# ---- server-side apply ----

def apply(api_client, path, obj, manager, force=False):
    """A PATCH with application/apply-patch+yaml: v22's generated methods pick their first
    content type and accept no _content_type, so the request goes through call_api with the
    header, the body as YAML text. Returns the answered object as a dict."""
    query = [("fieldManager", manager)]
    if force:
        query.append(("force", "true"))
    data = api_client.call_api(
        path, "PATCH", {}, query,
        {"Content-Type": "application/apply-patch+yaml", "Accept": "application/json"},
        body=yaml.safe_dump(obj), response_type="object", auth_settings=["BearerToken"],
        _return_http_data_only=True)
    return data


def managers(obj):
    return sorted((e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields", []))


def test_apply(core):
    api = core.api_client
    path = "/api/v1/namespaces/%s/configmaps/py-ssa" % NS
    cfg = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "py-ssa", "namespace": NS, "labels": {"app": "py"}},
           "data": {"a": "1", "b": "2"}}
    o = apply(api, path, cfg, "py")
    check(o["data"] == {"a": "1", "b": "2"}, "applied data %s" % o["data"])
    check(managers(o) == [("py", "Apply")], "managers after apply: %s" % managers(o))
    mf = o["metadata"]["managedFields"][0]
    check(mf.get("fieldsType") == "FieldsV1" and
          "f:a" in mf.get("fieldsV1", {}).get("f:data", {}),
          "py's fieldsV1 %s lacks f:data.f:a" % mf)
    # Read through the typed API: managedFields decode into V1ManagedFieldsEntry.
    got = core.read_namespaced_config_map("py-ssa", NS)
    ents = got.metadata.managed_fields or []
    check([(e.manager, e.operation) for e in ents] == [("py", "Apply")],
          "typed read managedFields %s" % ents)
    # Applying again without b removes b (py owned it alone).
    cfg["data"] = {"a": "1"}
    o = apply(api, path, cfg, "py")
    check(o["data"] == {"a": "1"}, "re-applied data %s, want b removed" % o["data"])
    # A second manager changing a: 409 naming the field and the owner.
    other = {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "py-ssa", "namespace": NS}, "data": {"a": "X"}}
    e = None
    try:
        apply(api, path, other, "other")
    except ApiException as ex:
        e = ex
    st = expect_status(e, 409, "Conflict", "apply by a second manager")
    causes = st.get("details", {}).get("causes", [])
    check(any(c.get("reason") == "FieldManagerConflict" and c.get("field") == ".data.a"
              for c in causes), "409 causes %s lack FieldManagerConflict .data.a" % causes)
    check('"py"' in st.get("message", ""), "409 message does not name manager py: %s" % st)
    # force takes it over.
    o = apply(api, path, other, "other", force=True)
    check(o["data"] == {"a": "X"}, "forced apply data %s" % o["data"])
    check(managers(o) == [("other", "Apply"), ("py", "Apply")],
          "managers after force %s" % managers(o))
    for ent in o["metadata"]["managedFields"]:
        owns_a = "f:a" in ent.get("fieldsV1", {}).get("f:data", {})
        check(owns_a == (ent["manager"] == "other"),
              "after force, %s owns .data.a: %s" % (ent["manager"], owns_a))
    # An Update by the typed client joins the list under its fieldManager.
    core.patch_namespaced_config_map("py-ssa", NS, {"data": {"c": "3"}}, field_manager="upd")
    got = core.read_namespaced_config_map("py-ssa", NS)
    check(sorted((e.manager, e.operation) for e in got.metadata.managed_fields) ==
          [("other", "Apply"), ("py", "Apply"), ("upd", "Update")],
          "managers after an update %s" % got.metadata.managed_fields)
    # An apply body carrying managedFields is refused.
    bad = dict(cfg, metadata=dict(cfg["metadata"], managedFields=[{"manager": "x"}]))
    e = None
    try:
        apply(api, path, bad, "py")
    except ApiException as ex:
        e = ex
    expect_status(e, 400, "BadRequest", "apply with managedFields")
    core.delete_namespaced_config_map("py-ssa", NS)


def main():
    config.load_kube_config(config_file=sys.argv[1])
    core = client.CoreV1Api()
    first_rv = core.list_namespaced_config_map(NS).metadata.resource_version
    for t in (test_version_discovery, lambda: test_configmap_crud(core),
              lambda: test_pod_crud(core), lambda: test_invalid_create(core),
              test_custom_objects, lambda: test_watch(core), lambda: test_apply(core)):
        try:
            t()
        except ApiException as e:
            fail("unexpected ApiException %s %s: %s" % (e.status, e.reason, e.body))
    try:
        test_watch_expired(core, first_rv, int(sys.argv[2]))
    except ApiException as e:
        fail("unexpected ApiException %s %s: %s" % (e.status, e.reason, e.body))
    if FAILS:
        print("%d python client check(s) failed" % len(FAILS), file=sys.stderr)
        sys.exit(1)
    print("python client: all checks passed")


if __name__ == "__main__":
    main()
