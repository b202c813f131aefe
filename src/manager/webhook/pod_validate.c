/*
 * /validate-pod (manager-behaviour.md 5.4; upstream pkg/webhook/pod/validating): groups run in
 * order and the first that fails rejects the pod with HTTP 400:
 *   1. the reserve-pod annotation is the scheduler's, never a user's;
 *   2. colocation consistency: batch resources need QoS BE, BE cannot be prod (or none), LSR
 *      must be prod, LSR/LSE ask for whole cores, and on update the QoS label, the raw
 *      priority class and the koordinator priority label are immutable;
 *   3. the ElasticQuota pod rules (api/elasticquota.h).
 * Within a group every failure is reported, joined as Go's utilerrors aggregate prints them
 * ("[a, b]" for more than one), in upstream's field-error wording. The gated groups upstream
 * has off by default (quota admission, device resources, the enhanced validator) are not built.
 */
#include <errno.h>
#include <string.h>

#include "api/field.h"
#include "api/pod.h"
#include "api/quantity.h"
#include "base/base.h"
#include "manager/webhook/webhook-int.h"

#define L_QOS          "koordinator.sh/qosClass"
#define L_PRIORITY     "koordinator.sh/priority"
#define L_PRIORITY_CLS "koordinator.sh/priority-class"
#define A_RESERVE_POD  "scheduling.koordinator.sh/reserve-pod"
#define R_BATCH_CPU    "kubernetes.io/batch-cpu"
#define R_BATCH_MEMORY "kubernetes.io/batch-memory"

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static bool quantity_at(const cJSON *list, const char *name, struct quantity *ret)
{
    const cJSON *v = get(list, name);
    return cJSON_IsString(v) && quantity_parse(v->valuestring, ret) == 0;
}

/*
 * The pod's effective request of one resource as upstream's util.GetPodRequest computes it
 * (kube's resource helpers): containers and restartable init containers (sidecars) add up;
 * each other init container needs its request plus the sidecars started before it; the larger
 * of the two wins; spec.overhead is added.
 */
static void pod_request(const cJSON *pod, const char *name, struct quantity *ret)
{
    const cJSON *spec = get(pod, "spec"), *c;
    struct quantity sum = {0}, sidecars = {0}, init_max = {0}, q;

    cJSON_ArrayForEach(c, get(spec, "containers"))
    {
        if (quantity_at(get(get(c, "resources"), "requests"), name, &q))
            (void)quantity_add(&sum, &q);
    }
    cJSON_ArrayForEach(c, get(spec, "initContainers"))
    {
        const char *policy = cJSON_GetStringValue(get(c, "restartPolicy"));
        struct quantity need = sidecars;
        bool has = quantity_at(get(get(c, "resources"), "requests"), name, &q);
        if (policy && !strcmp(policy, "Always")) {
            if (has) {
                (void)quantity_add(&sum, &q);
                (void)quantity_add(&sidecars, &q);
            }
            need = sidecars;
        } else if (has) {
            (void)quantity_add(&need, &q);
        }
        if (quantity_cmp(&need, &init_max) > 0)
            init_max = need;
    }
    if (quantity_cmp(&init_max, &sum) > 0)
        sum = init_max;
    if (quantity_at(get(spec, "overhead"), name, &q))
        (void)quantity_add(&sum, &q);
    *ret = sum;
}

/* GetPodQoSClassRaw: the label as written, none for anything else. */
static enum api_qos qos_raw(const cJSON *pod)
{
    const char *q = webhook__label(pod, L_QOS);
    return q ? api_qos_by_name(q) : API_QOS_NONE;
}

/* GetPodPriorityClassRaw: the priority-class label, else the band of spec.priority. */
static enum api_priority priority_raw(const cJSON *pod)
{
    const char *l = webhook__label(pod, L_PRIORITY_CLS);
    const cJSON *p = get(get(pod, "spec"), "priority");

    if (l)
        return api_priority_by_name(l);
    return cJSON_IsNumber(p) ? api_priority_of_value((int64_t)p->valuedouble) : API_PRIORITY_NONE;
}

static void quoted(const char *s, struct strbuf *out)
{
    strbuf_reset(out);
    strbuf_addf(out, "\"%s\"", s);
}

static void immutable(struct field_errors *errs, const char *field, const char *newv,
                      const char *oldv)
{
    struct strbuf v = STRBUF_INIT;

    if (!strcmp(newv, oldv))
        return;
    quoted(newv, &v);
    field_error_add(errs, FIELD_INVALID, field, v.buf, "field is immutable");
    strbuf_release(&v);
}

static void forbid_combination(const cJSON *pod, enum api_qos qos, const enum api_priority *bad,
                               size_t nbad, struct field_errors *errs)
{
    enum api_priority p = priority_raw(pod);

    if (qos_raw(pod) != qos)
        return;
    for (size_t i = 0; i < nbad; i++)
        if (bad[i] == p) {
            field_error_add(errs, FIELD_FORBIDDEN, "Pod", NULL,
                            "%s=%s and priorityClass=%s cannot be used in combination", L_QOS,
                            api_qos_name(qos), api_priority_name(p));
            return;
        }
}

static void colocation(const struct webhook_config *cfg, const cJSON *old, const cJSON *pod,
                       struct field_errors *errs)
{
    static const enum api_priority be_bad[] = {API_PRIORITY_NONE, API_PRIORITY_PROD};
    static const enum api_priority lsr_bad[] = {API_PRIORITY_NONE, API_PRIORITY_MID,
                                                API_PRIORITY_BATCH, API_PRIORITY_FREE};
    struct quantity bc, bm, cpu;
    enum api_qos qos = qos_raw(pod);

    if (old) {
        const char *op = webhook__label(old, L_PRIORITY), *np = webhook__label(pod, L_PRIORITY);
        immutable(errs, "labels." L_QOS, api_qos_name(qos), api_qos_name(qos_raw(old)));
        immutable(errs, "spec.priority", api_priority_name(priority_raw(pod)),
                  api_priority_name(priority_raw(old)));
        if (!cfg->gates.skip_validating_priority)
            immutable(errs, "labels." L_PRIORITY, np ? np : "", op ? op : "");
    }
    pod_request(pod, R_BATCH_CPU, &bc);
    pod_request(pod, R_BATCH_MEMORY, &bm);
    if ((!quantity_is_zero(&bc) || !quantity_is_zero(&bm)) && qos != API_QOS_BE)
        field_error_add(errs, FIELD_REQUIRED, "labels." L_QOS, NULL,
                        "must specify koordinator QoS BE with koordinator colocation resources");
    forbid_combination(pod, API_QOS_BE, be_bad, ARRAY_SIZE(be_bad), errs);
    forbid_combination(pod, API_QOS_LSR, lsr_bad, ARRAY_SIZE(lsr_bad), errs);
    if (qos == API_QOS_LSR || qos == API_QOS_LSE) {
        int64_t milli = 0, whole = 0;
        pod_request(pod, "cpu", &cpu);
        (void)quantity_milli(&cpu, &milli);
        (void)quantity_value(&cpu, &whole);
        if (quantity_is_zero(&cpu)) {
            field_error_add(errs, FIELD_REQUIRED, "pod.spec.containers[*].resources.requests", NULL,
                            "LSR Pod must declare the requested CPUs");
        } else if (whole * 1000 != milli) {
            char buf[QUANTITY_STR_MAX + 2];
            struct strbuf v = STRBUF_INIT;
            (void)quantity_format(&cpu, buf);
            quoted(buf, &v);
            field_error_add(errs, FIELD_INVALID, "pod.spec.containers[*].resources.requests", v.buf,
                            "the requested CPUs of LSR Pod must be integer");
            strbuf_release(&v);
        }
    }
}

/* utilerrors.NewAggregate(errs).Error(). */
static int aggregate(const struct field_errors *errs, struct strbuf *msg)
{
    if (!errs->n)
        return 0;
    if (errs->n > 1)
        strbuf_addch(msg, '[');
    for (size_t i = 0; i < errs->n; i++) {
        if (i)
            strbuf_addstr(msg, ", ");
        field_error_format(&errs->v[i], msg);
    }
    if (errs->n > 1)
        strbuf_addch(msg, ']');
    return -EACCES;
}

int webhook__validate_pod(const struct webhook_config *cfg, const struct webhook__request *req,
                          const struct webhook_data *d, struct webhook__result *res)
{
    const bool update = !strcmp(req->operation, "UPDATE");
    struct field_errors errs = FIELD_ERRORS_INIT;
    int r;

    if (*req->subresource || strcmp(req->resource, "pods") || *req->group)
        return 0;
    if (strcmp(req->operation, "CREATE") && !update)
        return 0;
    if (!req->object || (update && !req->old_object)) {
        strbuf_addstr(&res->msg, "the request lacks the pod object");
        return -EINVAL;
    }
    if (webhook__annotation(req->object, A_RESERVE_POD) ||
        cJSON_IsString(get(get(get(req->object, "metadata"), "annotations"), A_RESERVE_POD)))
        field_error_add(&errs, FIELD_FORBIDDEN, "annotations." A_RESERVE_POD, NULL,
                        "cannot set in annotations");
    if ((r = aggregate(&errs, &res->msg)) < 0)
        goto out;
    colocation(cfg, update ? req->old_object : NULL, req->object, &errs);
    if ((r = aggregate(&errs, &res->msg)) < 0)
        goto out;
    if (cfg->gates.support_parent_quota_pods && !update)
        goto out;
    r = api_quota_validate_pod(&d->quotas, update ? req->old_object : NULL, req->object, &res->msg);
out:
    field_errors_release(&errs);
    return r;
}
