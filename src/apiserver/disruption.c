/*
 * PodDisruptionBudgets for pods/eviction (see disruption.h): kube's eviction.go decisions over
 * the status disruption.go's trySync would have written, computed here from the store.
 */
#include "apiserver/disruption.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "api/rfc3339.h"
#include "api/workloads.h"
#include "apiserver/status.h"
#include "apiserver/store.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"

#define UPDATE_TRIES 8 /* kube's EvictionsRetry steps */

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
    return cJSON_IsNull(c) ? NULL : c;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *c = get(o, k);
    return cJSON_IsString(c) ? c->valuestring : NULL;
}

static int get_int(const cJSON *o, const char *k)
{
    const cJSON *c = get(o, k);
    return cJSON_IsNumber(c) ? (int)c->valuedouble : 0;
}

/* podutil.IsPodReady: the Ready condition is True. */
static bool pod_ready(const cJSON *pod)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, api_get_path(pod, "status.conditions"))
    {
        const char *t = get_str(c, "type"), *st = get_str(c, "status");
        if (t && !strcmp(t, "Ready"))
            return st && !strcmp(st, "True");
    }
    return false;
}

/* The time of an RFC 3339 string, or INT64_MIN when it does not parse. */
static int64_t time_of(const cJSON *v)
{
    int64_t sec;
    int32_t nsec;

    if (!cJSON_IsString(v) || rfc3339_parse(v->valuestring, &sec, &nsec) < 0)
        return INT64_MIN;
    return sec;
}

cJSON *disruption_status(const cJSON *pdb, const cJSON *const *pods, size_t n, int scale,
                         int64_t now)
{
    const cJSON *spec = get(pdb, "spec"), *old = get(pdb, "status");
    const cJSON *min = get(spec, "minAvailable"), *max = get(spec, "maxUnavailable");
    const cJSON *old_disrupted = get(old, "disruptedPods");
    int expected = 0, desired = 0, healthy = 0, allowed;
    cJSON *st, *disrupted, *conds, *cond;
    char ts[RFC3339_STR_MAX];

    /* getExpectedPodCount. */
    if (max) {
        int m = 0;
        if (scale < 0)
            return NULL;
        expected = scale;
        if (api_int_or_percent_scaled(max, expected, true, &m) < 0)
            return NULL;
        desired = expected - m > 0 ? expected - m : 0;
    } else if (cJSON_IsNumber(min)) {
        desired = (int)min->valuedouble;
        expected = (int)n;
    } else if (cJSON_IsString(min)) {
        if (scale < 0)
            return NULL;
        expected = scale;
        if (api_int_or_percent_scaled(min, expected, true, &desired) < 0)
            return NULL;
    }
    CHECK(st = cJSON_CreateObject());
    CHECK(cJSON_AddNumberToObject(st, "observedGeneration",
                                  get_int(get(pdb, "metadata"), "generation")));
    CHECK(disrupted = cJSON_AddObjectToObject(st, "disruptedPods"));
    /* buildDisruptedPodMap and countHealthyPods. */
    for (size_t i = 0; i < n; i++) {
        const cJSON *meta = get(pods[i], "metadata");
        const char *name = get_str(meta, "name");
        const cJSON *since = name ? get(old_disrupted, name) : NULL;
        bool counted_out = false;

        if (!name || get(meta, "deletionTimestamp"))
            continue;
        if (since) {
            int64_t t = time_of(since);
            if (t != INT64_MIN && t + DISRUPTION_DELETION_TIMEOUT >= now) {
                CHECK(cJSON_AddItemToObject(disrupted, name, cJSON_Duplicate(since, true)));
                counted_out = true;
            }
        }
        if (!counted_out && pod_ready(pods[i]))
            healthy++;
    }
    if (!cJSON_GetArraySize(disrupted))
        cJSON_DeleteItemFromObjectCaseSensitive(st, "disruptedPods");
    allowed = healthy - desired;
    if (expected <= 0 || allowed <= 0)
        allowed = 0;
    CHECK(cJSON_AddNumberToObject(st, "disruptionsAllowed", allowed));
    CHECK(cJSON_AddNumberToObject(st, "currentHealthy", healthy));
    CHECK(cJSON_AddNumberToObject(st, "desiredHealthy", desired));
    CHECK(cJSON_AddNumberToObject(st, "expectedPods", expected));
    /* UpdateDisruptionAllowedCondition: the transition time moves only with the status. */
    CHECK(conds = cJSON_AddArrayToObject(st, "conditions"));
    CHECK(cond = cJSON_CreateObject());
    CHECK(cJSON_AddItemToArray(conds, cond));
    CHECK(cJSON_AddStringToObject(cond, "type", "DisruptionAllowed"));
    CHECK(cJSON_AddStringToObject(cond, "status", allowed > 0 ? "True" : "False"));
    CHECK(cJSON_AddNumberToObject(cond, "observedGeneration",
                                  get_int(get(pdb, "metadata"), "generation")));
    (void)rfc3339_format(now, ts);
    {
        const cJSON *c, *prev = NULL;
        cJSON_ArrayForEach(c, get(old, "conditions"))
        {
            const char *t = get_str(c, "type");
            if (t && !strcmp(t, "DisruptionAllowed"))
                prev = c;
        }
        if (prev && get_str(prev, "status") &&
            !strcmp(get_str(prev, "status"), allowed > 0 ? "True" : "False") &&
            get_str(prev, "lastTransitionTime"))
            CHECK(cJSON_AddStringToObject(cond, "lastTransitionTime",
                                          get_str(prev, "lastTransitionTime")));
        else
            CHECK(cJSON_AddStringToObject(cond, "lastTransitionTime", ts));
    }
    CHECK(cJSON_AddStringToObject(cond, "reason",
                                  allowed > 0 ? "SufficientPods" : "InsufficientPods"));
    CHECK(cJSON_AddStringToObject(cond, "message", ""));
    return st;
}

/* ---- reading the store ---- */

struct collect {
    cJSON **v;
    uint64_t *rv;
    char **key;
    size_t n;
    int err;
};

static int collect_item(const struct store_item *it, void *ud)
{
    struct collect *c = ud;
    cJSON *o = NULL;

    if (json_parse(it->value, it->len, NULL, &o, NULL) < 0)
        return 0; /* a corrupt object selects nothing */
    c->v = xrealloc(c->v, (c->n + 1) * sizeof(cJSON *));
    c->rv = xrealloc(c->rv, (c->n + 1) * sizeof(*c->rv));
    c->key = xrealloc(c->key, (c->n + 1) * sizeof(*c->key));
    c->v[c->n] = o;
    c->rv[c->n] = it->rv;
    c->key[c->n] = xstrdup(it->key);
    c->n++;
    return 0;
}

static void collect_release(struct collect *c)
{
    for (size_t i = 0; i < c->n; i++) {
        cJSON_Delete(c->v[i]);
        free(c->key[i]);
    }
    free(c->v);
    free(c->rv);
    free(c->key);
    *c = (struct collect){0};
}

static int list_prefix(struct store *s, const char *prefix, struct collect *out)
{
    return store_list(s, prefix, NULL, 0, collect_item, out, NULL);
}

/* One stored object by key, decoded; NULL when absent or corrupt. */
static cJSON *read_object(struct store *s, const char *key)
{
    struct store_item it = {0};
    cJSON *o = NULL;

    if (store_get(s, key, &it) == 0 && json_parse(it.value, it.len, NULL, &o, NULL) < 0)
        o = NULL;
    store_item_release(&it);
    return o;
}

static const cJSON *controller_ref(const cJSON *obj)
{
    const cJSON *r;

    cJSON_ArrayForEach(r, api_get_path(obj, "metadata.ownerReferences"))
    {
        if (cJSON_IsTrue(get(r, "controller")))
            return r;
    }
    return NULL;
}

/* The apps/v1 controller a reference names (ReplicaSet, StatefulSet, Deployment) if it exists
 * with that uid; NULL otherwise. */
static cJSON *find_owner(struct store *s, const char *ns, const cJSON *ref)
{
    static const struct {
        const char *kind, *plural;
    } kinds[] = {
        {"ReplicaSet", "replicasets"},
        {"StatefulSet", "statefulsets"},
        {"Deployment", "deployments"},
    };
    const char *kind = get_str(ref, "kind"), *name = get_str(ref, "name");
    const char *uid = get_str(ref, "uid"), *av = get_str(ref, "apiVersion");
    struct strbuf key = STRBUF_INIT;
    cJSON *o = NULL;

    if (!kind || !name || !uid || !av || strcmp(av, "apps/v1"))
        return NULL;
    for (size_t i = 0; i < ARRAY_SIZE(kinds) && !o; i++)
        if (!strcmp(kind, kinds[i].kind)) {
            strbuf_addf(&key, "/apps/%s/%s/%s", kinds[i].plural, ns, name);
            o = read_object(s, key.buf);
        }
    strbuf_release(&key);
    if (o &&
        (!get_str(get(o, "metadata"), "uid") || strcmp(get_str(get(o, "metadata"), "uid"), uid))) {
        cJSON_Delete(o);
        o = NULL;
    }
    return o;
}

/*
 * getExpectedScale: the sum of spec.replicas of the controllers of pods[0..n), each counted
 * once (a ReplicaSet a Deployment controls counts as the Deployment). Pods without a
 * controller are unmanaged and count nothing. -1 when a controller cannot be found.
 */
static int expected_scale(struct store *s, const char *ns, const cJSON *const *pods, size_t n)
{
    char **seen = NULL;
    size_t nseen = 0;
    int total = 0;

    for (size_t i = 0; i < n && total >= 0; i++) {
        const cJSON *ref = controller_ref(pods[i]);
        cJSON *o, *d;
        bool dup = false;

        if (!ref)
            continue;
        if (!(o = find_owner(s, ns, ref))) {
            total = -1;
            break;
        }
        if (!strcmp(get_str(ref, "kind"), "ReplicaSet") && controller_ref(o) &&
            get_str(controller_ref(o), "kind") &&
            !strcmp(get_str(controller_ref(o), "kind"), "Deployment")) {
            d = find_owner(s, ns, controller_ref(o));
            cJSON_Delete(o);
            if (!(o = d)) {
                total = -1;
                break;
            }
        }
        for (size_t j = 0; j < nseen && !dup; j++)
            dup = !strcmp(seen[j], get_str(get(o, "metadata"), "uid"));
        if (!dup) {
            seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
            seen[nseen++] = xstrdup(get_str(get(o, "metadata"), "uid"));
            total += get_int(get(o, "spec"), "replicas");
        }
        cJSON_Delete(o);
    }
    for (size_t j = 0; j < nseen; j++)
        free(seen[j]);
    free(seen);
    return total;
}

/* The pods of ns the PDB selects (borrowed from all). */
static size_t select_pods(const cJSON *pdb, const struct collect *all, const cJSON **out)
{
    struct label_selector *ls = NULL;
    size_t n = 0;

    if (label_selector_from_json(api_get_path(pdb, "spec.selector"), &ls, NULL) < 0)
        return 0;
    for (size_t i = 0; i < all->n; i++)
        if (label_selector_matches(ls, api_get_path(all->v[i], "metadata.labels")))
            out[n++] = all->v[i];
    label_selector_free(ls);
    return n;
}

int disruption_refresh(struct store *s, cJSON *pdb, int64_t now)
{
    const char *ns = get_str(get(pdb, "metadata"), "namespace");
    struct strbuf prefix = STRBUF_INIT;
    struct collect pods = {0};
    const cJSON **selected = NULL;
    cJSON *st;
    size_t n;
    int r;

    if (!ns)
        return 0;
    strbuf_addf(&prefix, "/core/pods/%s/", ns);
    r = list_prefix(s, prefix.buf, &pods);
    if (r < 0)
        goto out;
    selected = xcalloc(pods.n + 1, sizeof(const cJSON *));
    n = select_pods(pdb, &pods, selected);
    st = disruption_status(pdb, selected, n, expected_scale(s, ns, selected, n), now);
    if (st) {
        const struct api_kind *k = api_kind_find("policy/v1", "PodDisruptionBudget");
        cJSON_DeleteItemFromObjectCaseSensitive(pdb, "status");
        CHECK(cJSON_AddItemToObject(pdb, "status", st));
        r = api_object_canonicalize(k, pdb); /* the status in its encoded order */
    }
out:
    collect_release(&pods);
    free(selected);
    strbuf_release(&prefix);
    return r;
}

/* ---- the eviction decision (eviction.go) ---- */

bool disruption_pod_exempt(const cJSON *pod)
{
    const char *phase = get_str(get(pod, "status"), "phase");

    if (get(get(pod, "metadata"), "deletionTimestamp"))
        return true;
    return phase &&
           (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed") || !strcmp(phase, "Pending"));
}

/* NewTooManyRequests with a DisruptionBudget cause (and retryAfterSeconds when not 0). */
static cJSON *too_many_requests(const char *cause, int retry_after)
{
    cJSON *st = api_status_failure(429, "TooManyRequests",
                                   "Cannot evict pod as it would violate the pod's disruption "
                                   "budget.",
                                   NULL);
    cJSON *details, *causes, *c, *code;

    CHECK(details = cJSON_CreateObject());
    CHECK(causes = cJSON_AddArrayToObject(details, "causes"));
    CHECK(c = cJSON_CreateObject());
    CHECK(cJSON_AddItemToArray(causes, c));
    CHECK(cJSON_AddStringToObject(c, "reason", "DisruptionBudget"));
    CHECK(cJSON_AddStringToObject(c, "message", cause));
    if (retry_after)
        CHECK(cJSON_AddNumberToObject(details, "retryAfterSeconds", retry_after));
    /* details goes before code, where kube's encoder puts it. */
    code = cJSON_DetachItemFromObjectCaseSensitive(st, "code");
    CHECK(cJSON_AddItemToObject(st, "details", details));
    CHECK(cJSON_AddItemToObject(st, "code", code));
    return st;
}

/* The PDB with its new status (taken over), written back canonically under its revision;
 * nothing is written for a dry run. */
static int write_status(struct store *s, bool dry_run, const char *key, uint64_t rv,
                        const cJSON *pdb, cJSON *status)
{
    const struct api_kind *k = api_kind_find("policy/v1", "PodDisruptionBudget");
    struct strbuf bytes = STRBUF_INIT;
    cJSON *o;
    int r;

    if (dry_run) {
        cJSON_Delete(status);
        return 0;
    }
    o = cJSON_Duplicate(pdb, true);
    CHECK(o && k);
    cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
    CHECK(cJSON_AddItemToObject(o, "status", status));
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"),
                                            "resourceVersion");
    r = api_object_canonicalize(k, o);
    if (r == 0)
        r = json_print(o, &bytes);
    if (r == 0)
        r = store_update(s, key, bytes.buf, bytes.len, rv, NULL);
    strbuf_release(&bytes);
    cJSON_Delete(o);
    return r;
}

/* getPodDisruptionBudgets: the PDBs with a selector that is not empty and matches the pod. */
static bool pdb_selects(const cJSON *pdb, const cJSON *pod)
{
    struct label_selector *ls = NULL;
    bool yes;

    if (label_selector_from_json(api_get_path(pdb, "spec.selector"), &ls, NULL) < 0)
        return false;
    yes = !label_selector_is_empty(ls) &&
          label_selector_matches(ls, api_get_path(pod, "metadata.labels"));
    label_selector_free(ls);
    return yes;
}

int disruption_check_eviction(struct store *s, const cJSON *pod, bool dry_run, int64_t now,
                              cJSON **ret_reply, int *ret_code)
{
    const char *ns = get_str(get(pod, "metadata"), "namespace");
    const char *pod_name = get_str(get(pod, "metadata"), "name");
    struct strbuf prefix = STRBUF_INIT, msg = STRBUF_INIT;
    struct collect pdbs = {0}, pods = {0};
    const cJSON **selected = NULL;
    int r = 0;

    if (disruption_pod_exempt(pod) || !ns || !pod_name)
        return 0;
    for (int attempt = 0; attempt < UPDATE_TRIES; attempt++) {
        size_t match = 0, which = 0, nsel;
        cJSON *st, *dp;
        const cJSON *pdb;
        const char *pdb_name, *policy;
        int allowed;

        collect_release(&pdbs);
        collect_release(&pods);
        free(selected);
        selected = NULL;
        strbuf_reset(&prefix);
        strbuf_addf(&prefix, "/policy/poddisruptionbudgets/%s/", ns);
        if ((r = list_prefix(s, prefix.buf, &pdbs)) < 0)
            goto out;
        for (size_t i = 0; i < pdbs.n; i++)
            if (pdb_selects(pdbs.v[i], pod)) {
                match++;
                which = i;
            }
        if (match == 0)
            goto out;
        if (match > 1) {
            *ret_reply = api_status_failure(500, "",
                                            "This pod has more than one PodDisruptionBudget, "
                                            "which the eviction subresource does not support.",
                                            NULL);
            cJSON_DeleteItemFromObjectCaseSensitive(*ret_reply, "reason");
            *ret_code = 201;
            r = 1;
            goto out;
        }
        pdb = pdbs.v[which];
        pdb_name = get_str(get(pdb, "metadata"), "name");
        strbuf_reset(&prefix);
        strbuf_addf(&prefix, "/core/pods/%s/", ns);
        if ((r = list_prefix(s, prefix.buf, &pods)) < 0)
            goto out;
        selected = xcalloc(pods.n + 1, sizeof(const cJSON *));
        nsel = select_pods(pdb, &pods, selected);
        st = disruption_status(pdb, selected, nsel, expected_scale(s, ns, selected, nsel), now);
        if (!st) {
            strbuf_reset(&msg);
            strbuf_addf(&msg, "The disruption budget %s is still being processed by the server.",
                        pdb_name ? pdb_name : "");
            *ret_reply = too_many_requests(msg.buf, 10);
            *ret_code = 429;
            r = 1;
            goto out;
        }
        /* An unhealthy pod: let it go when the budget is met anyway (IfHealthyBudget, the
         * default) or always (AlwaysAllow), without counting it as a disruption. */
        policy = get_str(get(pdb, "spec"), "unhealthyPodEvictionPolicy");
        if (!pod_ready(pod) && ((policy && !strcmp(policy, "AlwaysAllow")) ||
                                (get_int(st, "currentHealthy") >= get_int(st, "desiredHealthy") &&
                                 get_int(st, "desiredHealthy") > 0))) {
            r = write_status(s, dry_run, pdbs.key[which], pdbs.rv[which], pdb, st);
            if (r == -ESTALE)
                continue;
            goto out;
        }
        allowed = get_int(st, "disruptionsAllowed");
        if (cJSON_GetArraySize(get(st, "disruptedPods")) > DISRUPTION_MAX_DISRUPTED) {
            strbuf_reset(&msg);
            strbuf_addf(&msg,
                        "poddisruptionbudgets.policy \"%s\" is forbidden: DisruptedPods map too "
                        "big - too many evictions not confirmed by PDB controller",
                        pdb_name ? pdb_name : "");
            *ret_reply = api_status_failure(403, "Forbidden", msg.buf, NULL);
            *ret_code = 403;
            cJSON_Delete(st);
            r = 1;
            goto out;
        }
        if (allowed == 0) {
            strbuf_reset(&msg);
            strbuf_addf(&msg, "The disruption budget %s needs %d healthy pods and has %d currently",
                        pdb_name ? pdb_name : "", get_int(st, "desiredHealthy"),
                        get_int(st, "currentHealthy"));
            *ret_reply = too_many_requests(msg.buf, 0);
            *ret_code = 429;
            r = write_status(s, dry_run, pdbs.key[which], pdbs.rv[which], pdb, st);
            if (r == -ESTALE) {
                cJSON_Delete(*ret_reply);
                *ret_reply = NULL;
                continue;
            }
            if (r < 0) {
                cJSON_Delete(*ret_reply);
                *ret_reply = NULL;
                goto out;
            }
            r = 1;
            goto out;
        }
        /* checkAndDecrement: one disruption fewer, the pod noted as disrupted. */
        cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(st, "disruptionsAllowed"),
                             allowed - 1);
        if (allowed - 1 == 0) {
            cJSON *cond = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "conditions"), 0);
            char ts[RFC3339_STR_MAX];
            (void)rfc3339_format(now, ts);
            cJSON_ReplaceItemInObjectCaseSensitive(cond, "status", cJSON_CreateString("False"));
            cJSON_ReplaceItemInObjectCaseSensitive(cond, "reason",
                                                   cJSON_CreateString("InsufficientPods"));
            cJSON_ReplaceItemInObjectCaseSensitive(cond, "lastTransitionTime",
                                                   cJSON_CreateString(ts));
        }
        if (dry_run) {
            cJSON_Delete(st);
            goto out;
        }
        /* The canonical encoding puts it back in its place. */
        dp = cJSON_GetObjectItemCaseSensitive(st, "disruptedPods");
        if (!dp)
            CHECK(dp = cJSON_AddObjectToObject(st, "disruptedPods"));
        {
            char ts[RFC3339_STR_MAX];
            (void)rfc3339_format(now, ts);
            cJSON_DeleteItemFromObjectCaseSensitive(dp, pod_name);
            CHECK(cJSON_AddStringToObject(dp, pod_name, ts));
        }
        r = write_status(s, false, pdbs.key[which], pdbs.rv[which], pdb, st);
        if (r != -ESTALE)
            goto out;
    }
    /* Every try lost a race with another writer of the PDB. */
    *ret_reply = too_many_requests("The disruption budget is being updated concurrently.", 1);
    *ret_code = 429;
    r = 1;
out:
    collect_release(&pdbs);
    collect_release(&pods);
    free(selected);
    strbuf_release(&prefix);
    strbuf_release(&msg);
    return r;
}
