/* Pod semantics of the API server (see pods.h); rules from reference kubernetes-api.md 9. */
#include "apiserver/pods.h"

#include <stdio.h>
#include <string.h>

#include "api/quantity.h"
#include "base/base.h"
#include "codec/patch.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static cJSON *object_at(cJSON *o, const char *k)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsObject(v)) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, k);
        v = cJSON_AddObjectToObject(o, k);
        CHECK(v);
    }
    return v;
}

/* Two quantities equal in value (absent counts as unequal). */
static bool same_quantity(const cJSON *a, const cJSON *b)
{
    struct quantity qa, qb;
    return cJSON_IsString(a) && cJSON_IsString(b) && quantity_parse(a->valuestring, &qa) == 0 &&
           quantity_parse(b->valuestring, &qb) == 0 && quantity_cmp(&qa, &qb) == 0;
}

/* pkg/apis/core/helper/qos: BestEffort without any cpu/memory request or limit; Guaranteed when
 * every container limits cpu and memory and requests equal the limits (requests default to
 * the limits); Burstable otherwise. */
const char *pods_qos_class(const cJSON *pod)
{
    const cJSON *spec = get(pod, "spec"), *c;
    bool any = false, guaranteed = true;
    static const char *const res[] = {"cpu", "memory"};

    for (int list = 0; list < 2; list++) {
        cJSON_ArrayForEach(c, get(spec, list ? "initContainers" : "containers"))
        {
            const cJSON *r = get(c, "resources");
            const cJSON *req = get(r, "requests"), *lim = get(r, "limits");
            for (size_t i = 0; i < ARRAY_SIZE(res); i++) {
                const cJSON *q = get(req, res[i]), *l = get(lim, res[i]);
                any |= q || l;
                if (!l || (q && !same_quantity(q, l)))
                    guaranteed = false;
            }
        }
    }
    if (!any)
        return "BestEffort";
    return guaranteed ? "Guaranteed" : "Burstable";
}

static cJSON *condition(const char *type, const char *status, const char *reason,
                        const char *message, const char *now)
{
    cJSON *c = cJSON_CreateObject();

    CHECK(c && cJSON_AddStringToObject(c, "type", type) &&
          cJSON_AddStringToObject(c, "status", status) &&
          cJSON_AddNullToObject(c, "lastProbeTime") &&
          cJSON_AddStringToObject(c, "lastTransitionTime", now));
    if (reason)
        CHECK(cJSON_AddStringToObject(c, "reason", reason));
    if (message)
        CHECK(cJSON_AddStringToObject(c, "message", message));
    return c;
}

static bool same_str(const cJSON *c, const char *k, const char *want)
{
    const char *v = cJSON_GetStringValue(get(c, k));

    return want ? v && !strcmp(v, want) : !v;
}

bool pods_update_condition(cJSON *pod, const char *type, const char *status, const char *reason,
                           const char *message, const char *now)
{
    cJSON *st = object_at(pod, "status"),
          *conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
    cJSON *c, *old = NULL, *repl;
    const char *since = now;

    if (!cJSON_IsArray(conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
        CHECK(conds = cJSON_AddArrayToObject(st, "conditions"));
    }
    cJSON_ArrayForEach(c, conds)
    {
        const char *t = cJSON_GetStringValue(get(c, "type"));
        if (t && !strcmp(t, type)) {
            old = c;
            break;
        }
    }
    if (!old) {
        CHECK(cJSON_AddItemToArray(conds, condition(type, status, reason, message, now)));
        return true;
    }
    /* The transition time moves only with the status. */
    if (same_str(old, "status", status) && cJSON_GetStringValue(get(old, "lastTransitionTime")))
        since = cJSON_GetStringValue(get(old, "lastTransitionTime"));
    if (same_str(old, "status", status) && same_str(old, "reason", reason) &&
        same_str(old, "message", message) && same_str(old, "lastTransitionTime", since) &&
        (!get(old, "lastProbeTime") || cJSON_IsNull(get(old, "lastProbeTime"))))
        return false;
    repl = condition(type, status, reason, message, since);
    CHECK(cJSON_ReplaceItemViaPointer(conds, old, repl));
    return true;
}

void pods_default_tolerations(cJSON *pod)
{
    static const char *const keys[] = {"node.kubernetes.io/not-ready",
                                       "node.kubernetes.io/unreachable"};
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec"), *tols;

    if (!cJSON_IsObject(spec))
        return;
    tols = cJSON_GetObjectItemCaseSensitive(spec, "tolerations");
    if (!cJSON_IsArray(tols)) {
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "tolerations");
        CHECK(tols = cJSON_AddArrayToObject(spec, "tolerations"));
    }
    for (size_t i = 0; i < 2; i++) {
        const cJSON *t;
        bool tolerated = false;
        cJSON *add;
        cJSON_ArrayForEach(t, tols)
        {
            const char *k = cJSON_GetStringValue(get(t, "key"));
            const char *e = cJSON_GetStringValue(get(t, "effect"));
            tolerated = tolerated || ((!k || !*k || !strcmp(k, keys[i])) &&
                                      (!e || !*e || !strcmp(e, "NoExecute")));
        }
        if (tolerated)
            continue;
        CHECK(add = cJSON_CreateObject());
        CHECK(cJSON_AddItemToArray(tols, add));
        CHECK(cJSON_AddStringToObject(add, "key", keys[i]));
        CHECK(cJSON_AddStringToObject(add, "operator", "Exists"));
        CHECK(cJSON_AddStringToObject(add, "effect", "NoExecute"));
        CHECK(cJSON_AddNumberToObject(add, "tolerationSeconds", 300));
    }
}

void pods_prepare_create(cJSON *pod, const char *now)
{
    cJSON *status = cJSON_CreateObject(), *conds;
    const cJSON *gates = get(get(pod, "spec"), "schedulingGates");

    pods_default_tolerations(pod);

    CHECK(status && cJSON_AddStringToObject(status, "phase", "Pending") &&
          cJSON_AddStringToObject(status, "qosClass", pods_qos_class(pod)));
    if (cJSON_GetArraySize(gates) > 0) {
        conds = cJSON_AddArrayToObject(status, "conditions");
        CHECK(conds);
        CHECK(cJSON_AddItemToArray(
            conds, condition("PodScheduled", "False", "SchedulingGated",
                             "Scheduling is blocked due to non-empty scheduling gates", now)));
    }
    cJSON_DeleteItemFromObjectCaseSensitive(pod, "status");
    CHECK(cJSON_AddItemToObject(pod, "status", status));
}

static bool has_gate(const cJSON *gates, const char *name)
{
    const cJSON *g;
    cJSON_ArrayForEach(g, gates)
    {
        const char *n = cJSON_GetStringValue(get(g, "name"));
        if (n && !strcmp(n, name))
            return true;
    }
    return false;
}

void pods_validate_update(const cJSON *old, const cJSON *new_pod, struct field_errors *errs)
{
    const cJSON *og = get(get(old, "spec"), "schedulingGates");
    const cJSON *ng = get(get(new_pod, "spec"), "schedulingGates"), *g;
    const char *on = cJSON_GetStringValue(get(get(old, "spec"), "nodeName"));
    const char *nn = cJSON_GetStringValue(get(get(new_pod, "spec"), "nodeName"));
    int i = 0;

    cJSON_ArrayForEach(g, ng)
    {
        const char *name = cJSON_GetStringValue(get(g, "name"));
        if (name && !has_gate(og, name)) {
            char path[64];
            (void)snprintf(path, sizeof(path), "spec.schedulingGates[%d].name", i);
            field_error_add(errs, FIELD_FORBIDDEN, path, NULL,
                            "only deletion is allowed, but found new scheduling gate '%s'", name);
        }
        i++;
    }
    if (strcmp(on ? on : "", nn ? nn : ""))
        field_error_add(errs, FIELD_FORBIDDEN, "spec", NULL,
                        "pod updates may not change spec.nodeName (bind the pod through "
                        "pods/binding)");
}

/* Replaces (or removes) key k of dst by src's. */
static void take(cJSON *dst, const cJSON *src, const char *k)
{
    const cJSON *v = get(src, k);

    cJSON_DeleteItemFromObjectCaseSensitive(dst, k);
    if (v)
        CHECK(cJSON_AddItemToObject(dst, k, cJSON_Duplicate(v, true)));
}

/* Whether every element of old is in new (tolerations may only be added). */
static bool contains_all(const cJSON *new_list, const cJSON *old_list)
{
    const cJSON *o, *n;

    cJSON_ArrayForEach(o, old_list)
    {
        bool found = false;
        cJSON_ArrayForEach(n, new_list) found |= json_value_equal(o, n);
        if (!found)
            return false;
    }
    return true;
}

void pods_check_spec_update(const cJSON *old, const cJSON *new_pod, struct field_errors *errs)
{
    const cJSON *os = get(old, "spec"), *ns = get(new_pod, "spec");
    const cJSON *oa = get(os, "activeDeadlineSeconds"), *na = get(ns, "activeDeadlineSeconds");
    const cJSON *ot = get(os, "terminationGracePeriodSeconds");
    const cJSON *nt = get(ns, "terminationGracePeriodSeconds");
    cJSON *m;

    if (!cJSON_IsObject(os) || !cJSON_IsObject(ns))
        return;
    /* The new spec with every change an update may make undone: what is left must be old. */
    m = cJSON_Duplicate(ns, true);
    CHECK(m);
    for (const char *const *l = (const char *const[]){"containers", "initContainers", NULL}; *l;
         l++) {
        cJSON *nc = cJSON_GetObjectItemCaseSensitive(m, *l);
        const cJSON *oc = get(os, *l);
        if (cJSON_GetArraySize(nc) != cJSON_GetArraySize(oc))
            continue;
        for (int i = 0; i < cJSON_GetArraySize(nc); i++)
            if (cJSON_IsObject(cJSON_GetArrayItem(nc, i)))
                take(cJSON_GetArrayItem(nc, i), cJSON_GetArrayItem(oc, i), "image");
    }
    if (cJSON_IsNumber(na) && (!oa || (cJSON_IsNumber(oa) && na->valuedouble <= oa->valuedouble)))
        take(m, os, "activeDeadlineSeconds");
    if (contains_all(get(ns, "tolerations"), get(os, "tolerations")))
        take(m, os, "tolerations");
    if (cJSON_IsNumber(ot) && ot->valuedouble < 0 && cJSON_IsNumber(nt) && nt->valuedouble == 1)
        take(m, os, "terminationGracePeriodSeconds");
    /* Checked by pods_validate_update(). */
    take(m, os, "schedulingGates");
    take(m, os, "nodeName");
    /* KEP-3838: while a pod is gated, its scheduling directives may still change. */
    if (cJSON_GetArraySize(get(os, "schedulingGates")) > 0) {
        take(m, os, "nodeSelector");
        take(m, os, "affinity");
    }
    if (!json_value_equal(m, os))
        field_error_add(errs, FIELD_FORBIDDEN, "spec", NULL,
                        "pod updates may not change fields other than `spec.containers[*].image`,"
                        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                        "`spec.tolerations` (only additions to existing tolerations),"
                        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                        "previously negative)");
    cJSON_Delete(m);
}

int pods_bind(cJSON *pod, const cJSON *binding, const char *now, struct strbuf *why)
{
    const cJSON *target = get(binding, "target"), *a;
    const char *kind = cJSON_GetStringValue(get(target, "kind"));
    const char *node = cJSON_GetStringValue(get(target, "name"));
    const char *name = cJSON_GetStringValue(get(get(pod, "metadata"), "name"));
    const char *assigned = cJSON_GetStringValue(get(get(pod, "spec"), "nodeName"));
    cJSON *spec, *meta, *status, *conds, *c;

    if (kind && *kind && strcmp(kind, "Node")) {
        strbuf_addf(why,
                    "target.kind: Unsupported value: \"%s\": supported values: \"Node\", "
                    "\"<empty>\"",
                    kind);
        return -EINVAL;
    }
    if (!node || !*node) {
        strbuf_addstr(why, "target.name: Required value");
        return -EINVAL;
    }
    if (get(get(pod, "metadata"), "deletionTimestamp") &&
        !cJSON_IsNull(get(get(pod, "metadata"), "deletionTimestamp"))) {
        strbuf_addf(why, "pod %s is being deleted, cannot be assigned to a host", name);
        return -EBUSY;
    }
    if (assigned && *assigned) {
        strbuf_addf(why, "pod %s is already assigned to node \"%s\"", name, assigned);
        return -EBUSY;
    }
    if (cJSON_GetArraySize(get(get(pod, "spec"), "schedulingGates")) > 0) {
        strbuf_addf(why, "pod %s has non-empty .spec.schedulingGates", name);
        return -EBUSY;
    }
    spec = object_at(pod, "spec");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "nodeName");
    CHECK(cJSON_AddStringToObject(spec, "nodeName", node));
    meta = object_at(pod, "metadata");
    cJSON_ArrayForEach(a, get(get(binding, "metadata"), "annotations"))
    {
        cJSON *anns = object_at(meta, "annotations");
        cJSON_DeleteItemFromObjectCaseSensitive(anns, a->string);
        CHECK(cJSON_AddItemToObject(anns, a->string, cJSON_Duplicate(a, true)));
    }
    status = object_at(pod, "status");
    conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    if (!cJSON_IsArray(conds)) {
        cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
        conds = cJSON_AddArrayToObject(status, "conditions");
        CHECK(conds);
    }
    for (c = conds->child; c; c = c->next) {
        const char *t = cJSON_GetStringValue(get(c, "type"));
        if (t && !strcmp(t, "PodScheduled")) {
            cJSON_Delete(cJSON_DetachItemViaPointer(conds, c));
            break;
        }
    }
    CHECK(cJSON_AddItemToArray(conds, condition("PodScheduled", "True", NULL, NULL, now)));
    return 0;
}
