/*
 * The ElasticQuota webhooks (manager-behaviour.md 6.2; upstream pkg/webhook/elasticquota):
 * /mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota on CREATE and
 * /validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota on CREATE, UPDATE and DELETE, over the
 * rules of api/elasticquota.h and the quota tree of the manager's informers. Upstream's tree
 * also takes the quotas it has just admitted before its informer sees them; here two quick
 * writes can both pass a sum check that only the pair breaks, until the informer catches up
 * (koord apiserver's built-in admission, which serialises writes, has no such window).
 */
#include <errno.h>
#include <string.h>

#include "api/elasticquota.h"
#include "base/base.h"
#include "manager/webhook/webhook-int.h"

static bool is_quota(const struct webhook__request *req)
{
    return !strcmp(req->group, "scheduling.sigs.k8s.io") &&
           !strcmp(req->resource, "elasticquotas") && !*req->subresource;
}

int webhook__mutate_quota(const struct webhook_config *cfg, const struct webhook__request *req,
                          const struct webhook_data *d, struct webhook__result *res)
{
    cJSON *q;
    int r;

    (void)cfg;
    if (!is_quota(req) || strcmp(req->operation, "CREATE"))
        return 0;
    if (!req->object) {
        strbuf_addstr(&res->msg, "the request has no ElasticQuota object");
        return -EINVAL;
    }
    CHECK(q = cJSON_Duplicate(req->object, true));
    if ((r = api_quota_mutate(&d->quotas, q, &res->msg)) < 0) {
        cJSON_Delete(q);
        return r;
    }
    res->mutated = q;
    return 0;
}

int webhook__validate_quota(const struct webhook_config *cfg, const struct webhook__request *req,
                            const struct webhook_data *d, struct webhook__result *res)
{
    (void)cfg;
    if (!is_quota(req))
        return 0;
    if (!strcmp(req->operation, "DELETE")) {
        if (!req->old_object)
            return 0; /* upstream skips deletions that carry no old object */
        return api_quota_validate_delete(&d->quotas, req->old_object, true, &res->msg);
    }
    if (!req->object || (!strcmp(req->operation, "UPDATE") && !req->old_object)) {
        strbuf_addstr(&res->msg, "the request lacks the ElasticQuota object");
        return -EINVAL;
    }
    if (!strcmp(req->operation, "CREATE"))
        return api_quota_validate_create(&d->quotas, req->object, &res->msg);
    if (!strcmp(req->operation, "UPDATE"))
        return api_quota_validate_update(&d->quotas, req->old_object, req->object, true, &res->msg);
    return 0;
}
