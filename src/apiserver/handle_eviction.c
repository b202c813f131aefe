/*
 * POST pods/<name>/eviction (kube's pod registry EvictionREST, eviction.go): deletes the pod
 * with the Eviction's deleteOptions unless a PodDisruptionBudget forbids it (disruption.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/rfc3339.h"
#include "apiserver/apiserver-int.h"
#include "apiserver/disruption.h"
#include "apiserver/lifecycle.h"
#include "apiserver/pods.h"
#include "base/base.h"
#include "http/server.h"

/*
 * The Eviction's deleteOptions (propagateDryRun): dryRun values checked as DELETE checks them,
 * and one given in both the query and the body must say the same; gracePeriodSeconds into
 * *ret_grace (-1 when not given: an eviction's query parameters are CreateOptions, so only the
 * body sets it). Replies and returns false on bad options.
 */
static bool eviction_options(struct apiserver__call *c, const cJSON *opts, int64_t *ret_grace)
{
    const cJSON *g = cJSON_GetObjectItem(opts, "gracePeriodSeconds");
    const cJSON *dr = cJSON_GetObjectItem(opts, "dryRun"), *v;
    const char *bad = NULL;
    bool in_query = c->dry_run;

    if (opts && !cJSON_IsNull(opts) && !cJSON_IsObject(opts))
        bad = "deleteOptions: must be an object";
    else if (g && !cJSON_IsNull(g) &&
             (!cJSON_IsNumber(g) || g->valuedouble != (double)(int64_t)g->valuedouble))
        bad = "deleteOptions.gracePeriodSeconds: must be an integer";
    else if (dr && !cJSON_IsNull(dr) && !cJSON_IsArray(dr))
        bad = "deleteOptions.dryRun: must be a list of strings";
    if (bad) {
        struct strbuf msg = STRBUF_INIT;
        strbuf_addf(&msg, "Eviction in version \"v1\" cannot be handled as a Eviction: %s", bad);
        apiserver__reply_bad_request(c, msg.buf);
        strbuf_release(&msg);
        return false;
    }
    cJSON_ArrayForEach(v, dr)
    {
        if (!apiserver__parse_dry_run(c, cJSON_IsString(v) ? v->valuestring : ""))
            return false;
    }
    /* The query holds one value, "All": a body list other than ["All"] differs from it. */
    if (in_query && cJSON_GetArraySize(dr) > 1) {
        apiserver__reply_bad_request(
            c, "Non-matching dry-run options in request and content: [All] and "
               "the deleteOptions' dryRun");
        return false;
    }
    *ret_grace = g && cJSON_IsNumber(g) ? (g->valuedouble < 0 ? 1 : (int64_t)g->valuedouble) : -1;
    return true;
}

/*
 * Deletes an evicted pod (at revision rv) as kube's addConditionAndDeletePod does: the pod gets
 * the DisruptionTarget condition, then is deleted as DELETE deletes it (lifecycle_pod_delete):
 * gracefully when a node runs it, the lifecycle worker finishing it. A pod that goes at once is
 * written with the condition first, as kube updates it before deleting, so watchers see why it
 * went. Nothing is written in a dry run. 0, or -errno of the store (-ESTALE: the pod changed).
 */
static int evict_delete(struct apiserver__call *c, cJSON *pod, uint64_t rv, int64_t grace)
{
    struct strbuf bytes = STRBUF_INIT;
    char ts[RFC3339_STR_MAX];
    int64_t now = (int64_t)time(NULL);
    enum lifecycle_pod_deletion d;
    bool cond;
    int r = 0;

    (void)rfc3339_format(now, ts);
    cond = pods_update_condition(pod, PODS_DISRUPTION_TARGET, "True", PODS_EVICTION_BY_API,
                                 PODS_EVICTION_BY_API_MSG, ts);
    d = lifecycle_pod_delete(pod, grace, now);
    if (c->dry_run)
        return 0;
    if (cond || d == LIFECYCLE_POD_MARKED) {
        r = apiserver__encode_for_store(pod, &bytes);
        if (r == 0)
            r = store_update(c->srv->store, c->key.buf, bytes.buf, bytes.len, rv, &rv);
    }
    if (r == 0 && d == LIFECYCLE_POD_REMOVE)
        r = store_delete(c->srv->store, c->key.buf, rv, NULL, NULL);
    strbuf_release(&bytes);
    return r;
}

/*
 * pods/eviction (eviction.go, reference 9.4): the pod is deleted with the Eviction's
 * deleteOptions (grace period, uid/resourceVersion preconditions, dryRun) unless a
 * PodDisruptionBudget forbids it (disruption.h). A pod that is Pending, finished or already
 * terminating skips the budgets, so a second eviction of a terminating pod takes nothing from
 * them. When the pod changes between the decision and the delete (a status write), the delete
 * is tried again over the new revision, as kube retries conflicts, unless the client fixed the
 * revision; the budget is consulted at most once.
 */
void apiserver__do_evict(struct apiserver__call *c)
{
    cJSON *ev = apiserver__read_sub_body(c, "Eviction"), *pod = NULL, *refusal = NULL;
    const cJSON *opts, *pre;
    const char *pinned;
    struct webhook_attrs wa;
    uint64_t rv = 0;
    int64_t grace = -1;
    bool consulted = false;
    int r = 0, code = 0;

    if (!ev)
        return;
    opts = cJSON_GetObjectItem(ev, "deleteOptions");
    pre = cJSON_GetObjectItem(opts, "preconditions");
    if (!eviction_options(c, opts, &grace) || !(pod = apiserver__read_current(c, &rv)) ||
        !apiserver__preconditions_hold(c, pre, pod, rv) || !apiserver__node_may(c, pod))
        goto out;
    apiserver__wh_attrs(c, WEBHOOK_CREATE, NULL, &wa);
    wa.kind_group = "policy";
    wa.kind = "Eviction";
    if (!apiserver__wh_mutate(c, &wa, &ev) || !apiserver__wh_validate(c, &wa, ev))
        goto out;
    /* The webhooks may have replaced ev: what it held is read again from here on. */
    opts = cJSON_GetObjectItem(ev, "deleteOptions");
    pre = cJSON_GetObjectItem(opts, "preconditions");
    pinned = apiserver__get_string(pre, "resourceVersion");
    for (int attempt = 1;; attempt++) {
        if (!consulted && !disruption_pod_exempt(pod)) {
            consulted = true;
            r = disruption_check_eviction(c->srv->store, pod, c->dry_run, (int64_t)time(NULL),
                                          &refusal, &code);
            if (r > 0) {
                const cJSON *details = cJSON_GetObjectItemCaseSensitive(refusal, "details");
                const cJSON *after = cJSON_GetObjectItemCaseSensitive(details, "retryAfterSeconds");
                if (cJSON_IsNumber(after)) {
                    char buf[24];
                    (void)snprintf(buf, sizeof(buf), "%d", (int)after->valuedouble);
                    http_response_header(c->resp, "Retry-After", buf);
                }
                apiserver__reply(c, code, refusal);
                goto out;
            }
            if (r < 0)
                break;
        }
        r = evict_delete(c, pod, rv, grace);
        if (r != -ESTALE || (pinned && *pinned) || attempt >= APISERVER__UPDATE_TRIES)
            break;
        cJSON_Delete(pod);
        if (!(pod = apiserver__read_current(c, &rv)) ||
            !apiserver__preconditions_hold(c, pre, pod, rv))
            goto out;
    }
    if (r < 0) {
        apiserver__reply_status(c, r == -ESTALE ? api_status_conflict(&c->target)
                                                : api_status_from_errno(r, NULL, &c->target));
        goto out;
    }
    if (!c->dry_run)
        lifecycle_kick(c->srv->lifecycle);
    apiserver__reply_status(c, api_status_success(201, NULL, NULL));
out:
    cJSON_Delete(ev);
    cJSON_Delete(pod);
}
