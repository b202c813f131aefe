/*
 * The ElasticQuota admission of Koordinator's quota webhooks for `koord apiserver` run without
 * koord-manager's webhook server: the rules of api/elasticquota.h over the quotas and pods in
 * the store. Upstream keeps the quota tree in memory, fed by an informer; here the tree is read
 * from the store on every write, under the admit lock (admit_serialized()), so two writes
 * cannot both pass a sum check the pair breaks.
 *
 * Refusals read as kube-apiserver words a webhook denial (kubernetes-api.md 7.3): HTTP 400,
 * `admission webhook "vquota.kb.io" denied the request: <upstream's message>` (the webhook
 * names of the upstream release this was first written against; the manager's webhooks carry
 * today's names, melasticquota/velasticquota.koordinator.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/elasticquota.h"
#include "apiserver/admit.h"
#include "apiserver/store.h"
#include "base/base.h"
#include "codec/codec.h"

#define EQ_PREFIX       "/scheduling.sigs.k8s.io/elasticquotas/"
#define POD_PREFIX      "/core/pods/"
#define MAX_QUOTAS      100000
#define MUTATING_NAME   "mquota.kb.io"
#define VALIDATING_NAME "vquota.kb.io"

struct quotas {
    struct store *store;
    cJSON **v;
    size_t n;
};

static int note_quota(const struct store_item *it, void *ud)
{
    struct quotas *qs = ud;
    cJSON *o = NULL;

    if (json_parse(it->value, it->len, NULL, &o, NULL) < 0 || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return 0;
    }
    qs->v = xrealloc(qs->v, (qs->n + 1) * sizeof(cJSON *));
    qs->v[qs->n++] = o;
    return 0;
}

struct pod_count {
    const cJSON *quota;
    bool by_namespace;
    bool found;
};

static int count_pod(const struct store_item *it, void *ud)
{
    struct pod_count *pc = ud;
    cJSON *pod = NULL;

    if (json_parse(it->value, it->len, NULL, &pod, NULL) == 0)
        pc->found = api_quota_pod_bound(pc->quota, pod, pc->by_namespace);
    cJSON_Delete(pod);
    return pc->found ? 1 : 0;
}

static int pods_bound(void *ud, const cJSON *q, bool by_namespace, bool *ret)
{
    struct quotas *qs = ud;
    struct pod_count pc = {q, by_namespace, false};
    int r = store_list(qs->store, POD_PREFIX, NULL, 0, count_pod, &pc, NULL);

    *ret = pc.found;
    return r < 0 ? r : 0;
}

static int load(struct store *store, struct quotas *qs, struct api_quota_lookup *ret)
{
    int r = store_list(store, EQ_PREFIX, NULL, MAX_QUOTAS, note_quota, qs, NULL);

    qs->store = store;
    *ret = (struct api_quota_lookup){.quotas = (const cJSON *const *)qs->v,
                                     .n = qs->n,
                                     .pods_bound = pods_bound,
                                     .userdata = qs};
    return r < 0 ? r : 0;
}

static void release(struct quotas *qs)
{
    for (size_t i = 0; i < qs->n; i++)
        cJSON_Delete(qs->v[i]);
    free(qs->v);
}

/* kube-apiserver's wording of a webhook's denial around the rule's message. */
static int worded(int r, const char *webhook, struct strbuf *why)
{
    struct strbuf msg = STRBUF_INIT;

    if (r != -EACCES)
        return r;
    strbuf_add(&msg, why->buf, why->len);
    strbuf_reset(why);
    strbuf_addf(why, "admission webhook \"%s\" denied the request: %s", webhook, msg.buf);
    strbuf_release(&msg);
    return r;
}

int admit_quota_create(struct store *store, cJSON *q, struct strbuf *why)
{
    struct quotas qs = {0};
    struct api_quota_lookup l;
    int r;

    if ((r = load(store, &qs, &l)) < 0)
        goto out;
    if ((r = worded(api_quota_mutate(&l, q, why), MUTATING_NAME, why)) < 0)
        goto out;
    r = worded(api_quota_validate_create(&l, q, why), VALIDATING_NAME, why);
out:
    release(&qs);
    return r;
}

int admit_quota_update(struct store *store, const cJSON *old, cJSON *q, struct strbuf *why)
{
    struct quotas qs = {0};
    struct api_quota_lookup l;
    int r;

    if (!api_quota_touches_tree(old, q))
        return 0; /* no store read for the status and label writes that are most updates */
    if ((r = load(store, &qs, &l)) == 0)
        r = worded(api_quota_validate_update(&l, old, q, false, why), VALIDATING_NAME, why);
    release(&qs);
    return r;
}

int admit_quota_delete(struct store *store, const cJSON *q, struct strbuf *why)
{
    struct quotas qs = {0};
    struct api_quota_lookup l;
    int r;

    if ((r = load(store, &qs, &l)) == 0)
        r = worded(api_quota_validate_delete(&l, q, false, why), VALIDATING_NAME, why);
    release(&qs);
    return r;
}
