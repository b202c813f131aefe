/* Eviction policy, recently-evicted memory, Event text and eviction rounds (evict.h). */
#include "agent/qos/evict.h"

#include <stdlib.h>
#include <string.h>

#include "agent/qos/qos-int.h"
#include "base/base.h"
#include "base/strbuf.h"

bool qos_evict_policy_allows(const char *annotation, const char *feature)
{
    cJSON *doc = NULL;
    const cJSON *e;
    bool found = false;

    if (!annotation)
        return true;
    if (qos__json_parse(annotation, &doc) < 0)
        return false;
    if (cJSON_IsArray(doc)) {
        cJSON_ArrayForEach(e, doc)
        {
            /* json.Unmarshal into []string fails on any non-string element (null reads ""). */
            if (!cJSON_IsString(e) && !cJSON_IsNull(e)) {
                found = false;
                break;
            }
            if (cJSON_IsString(e) && !strcmp(e->valuestring, feature))
                found = true;
        }
    }
    cJSON_Delete(doc);
    return found;
}

void qos_evict_message(const char *feature, const char *pod_name, struct strbuf *out)
{
    strbuf_addf(out, "trigger by koordlet feature %s, kill pod: %s", feature, pod_name);
}

void qos_evict_event_message(const char *ns, const char *name, const char *reason,
                             const char *message, const char *error, struct strbuf *out)
{
    strbuf_addf(out, "evict Pod:%s/%s, reason: %s, message: %s", ns, name, reason, message);
    if (error)
        strbuf_addf(out, ", error %s", error);
}

/* ---- recently evicted ---- */

#define UID_MAX 256

void qos_evicted_init(struct qos_evicted *e)
{
    memset(e, 0, sizeof(*e));
}

void qos_evicted_release(struct qos_evicted *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i].uid);
    free(e->v);
    qos_evicted_init(e);
}

void qos_evicted_expire(struct qos_evicted *e, int64_t now_ms)
{
    size_t k = 0;

    for (size_t i = 0; i < e->n; i++) {
        if (now_ms > e->v[i].expire_ms)
            free(e->v[i].uid);
        else
            e->v[k++] = e->v[i];
    }
    e->n = k;
}

static struct qos_evicted_entry *find(const struct qos_evicted *e, const char *uid)
{
    for (size_t i = 0; i < e->n; i++)
        if (!strcmp(e->v[i].uid, uid))
            return &e->v[i];
    return NULL;
}

int qos_evicted_add(struct qos_evicted *e, const char *uid, int64_t now_ms)
{
    struct qos_evicted_entry *ent;
    size_t len;
    char *copy;

    if (!uid || !*uid || (len = strlen(uid)) > UID_MAX)
        return -EINVAL;
    qos_evicted_expire(e, now_ms);
    ent = find(e, uid);
    if (ent) {
        ent->expire_ms = now_ms + QOS_EVICTED_TTL_MS;
        return 0;
    }
    if (e->n == e->alloc) {
        size_t alloc = e->alloc ? 2 * e->alloc : 8;
        struct qos_evicted_entry *v = crealloc(e->v, alloc * sizeof(*v));

        if (!v)
            return -ENOMEM;
        e->v = v;
        e->alloc = alloc;
    }
    copy = cstrndup(uid, len);
    if (!copy)
        return -ENOMEM;
    e->v[e->n].uid = copy;
    e->v[e->n].expire_ms = now_ms + QOS_EVICTED_TTL_MS;
    e->n++;
    return 0;
}

bool qos_evicted_contains(const struct qos_evicted *e, const char *uid, int64_t now_ms)
{
    const struct qos_evicted_entry *ent;

    if (!e || !uid)
        return false;
    ent = find(e, uid);
    return ent && now_ms <= ent->expire_ms;
}

/* ---- victims ---- */

bool qos__victim_init(const struct qos_pod *p, int32_t priority_threshold, const char *feature,
                      bool has_usage, struct qos_evict_victim *v)
{
    int32_t prio = qos_pod_priority_value(p);

    if (!p->active || prio > priority_threshold || !p->eviction_enabled || !has_usage ||
        !qos_evict_policy_allows(p->eviction_policy, feature))
        return false;
    memset(v, 0, sizeof(*v));
    v->pod = p;
    v->priority = prio;
    v->label_priority = p->has_sub_priority ? p->sub_priority : prio;
    return true;
}

static int cmp_priority(const struct qos_evict_victim *a, const struct qos_evict_victim *b)
{
    int c = qos__cmp_i64(a->pod->eviction_priority, b->pod->eviction_priority);

    if (!c)
        c = qos__cmp_i64(a->priority, b->priority);
    if (!c)
        c = qos__cmp_i64(a->label_priority, b->label_priority);
    return c;
}

static int cmp_by_used(const void *pa, const void *pb)
{
    const struct qos_evict_victim *a = pa, *b = pb;
    int c = cmp_priority(a, b);

    return c ? c : qos__cmp_i64(b->used, a->used);
}

static int cmp_by_request(const void *pa, const void *pb)
{
    const struct qos_evict_victim *a = pa, *b = pb;
    int c = cmp_priority(a, b);

    return c ? c : qos__cmp_i64(b->request, a->request);
}

void qos__victims_sort(struct qos_evict_victim *v, size_t n, bool by_request)
{
    qos__sort(v, n, sizeof(*v), by_request ? cmp_by_request : cmp_by_used);
}

/* ---- rounds ---- */

static bool same_pod(const struct qos_pod *a, const struct qos_pod *b)
{
    return a == b || (a->uid && b->uid && !strcmp(a->uid, b->uid));
}

static bool task_active(const struct qos_evict_task *t)
{
    for (int r = 0; r < QOS_RES_COUNT; r++)
        if (t->release.v[r] > 0)
            return true;
    return false;
}

static bool task_done(const struct qos_evict_task *t, const struct qos_resources *released)
{
    for (int r = 0; r < QOS_RES_COUNT; r++)
        if (t->release.v[r] > 0 && released->v[r] < t->release.v[r])
            return false;
    return true;
}

/* What task u counts for victim v (evicted by some task) into *ret (zeroed first). */
static void contribution(const struct qos_evict_task *u, const struct qos_evict_victim *v,
                         struct qos_resources *ret)
{
    enum qos_res name;
    int64_t amount;

    memset(ret, 0, sizeof(*ret));
    switch (u->target) {
    case QOS_RELEASE_USED:
        ret->v[u->used_res] = v->used > 0 ? v->used : 0;
        break;
    case QOS_RELEASE_REQUEST:
        if (!(u->request_classes & (1u << v->pod->priority_class_raw)))
            break;
        amount = qos_pod_class_request(v->pod, u->request_res, &name);
        ret->v[name] = amount > 0 ? amount : 0;
        break;
    case QOS_RELEASE_BATCH_REQUEST:
        ret->v[QOS_RES_CPU] = qos_pod_sum_requests(v->pod, QOS_RES_BATCH_CPU);
        break;
    default:
        break;
    }
}

/* Adds what evicting v releases to every kind some active task uses (max over those tasks). */
static void account(const struct qos_evict_task *tasks, size_t ntasks,
                    const struct qos_evict_victim *v, struct qos_evict_result *res)
{
    for (int k = 0; k < QOS_RELEASE_TARGET_COUNT; k++) {
        struct qos_resources best, c;
        bool used = false;

        memset(&best, 0, sizeof(best));
        for (size_t i = 0; i < ntasks; i++) {
            if ((int)tasks[i].target != k || !task_active(&tasks[i]))
                continue;
            used = true;
            contribution(&tasks[i], v, &c);
            for (int r = 0; r < QOS_RES_COUNT; r++)
                if (c.v[r] > best.v[r])
                    best.v[r] = c.v[r];
        }
        if (!used)
            continue;
        for (int r = 0; r < QOS_RES_COUNT; r++)
            res->released[k].v[r] += best.v[r];
    }
}

int qos_evict_run(const struct qos_evict_task *tasks, size_t ntasks,
                  const struct qos_evicted *recent, int64_t now_ms, qos_evict_fn evict, void *ctx,
                  struct qos_evict_result *ret)
{
    const struct qos_pod **handled;
    struct qos_evict_result res;
    size_t total = 0, nhandled = 0;

    for (size_t i = 0; i < ntasks; i++)
        total += tasks[i].nvictims;
    handled = ccalloc(total ? total : 1, sizeof(const struct qos_pod *));
    if (!handled)
        return -ENOMEM;
    memset(&res, 0, sizeof(res));
    for (size_t i = 0; i < ntasks; i++) {
        const struct qos_evict_task *t = &tasks[i];

        if (!task_active(t) || task_done(t, &res.released[t->target]))
            continue;
        for (size_t j = 0; j < t->nvictims; j++) {
            const struct qos_evict_victim *v = &t->victims[j];
            bool seen = false;

            for (size_t k = 0; k < nhandled && !seen; k++)
                seen = same_pod(handled[k], v->pod);
            if (seen)
                continue;
            if (qos_evicted_contains(recent, v->pod->uid, now_ms))
                res.nrecent++;
            else if (evict(ctx, t, v->pod))
                res.nevicted++;
            else
                continue;
            handled[nhandled++] = v->pod;
            account(tasks, ntasks, v, &res);
            if (task_done(t, &res.released[t->target]))
                break;
        }
    }
    free(handled);
    *ret = res;
    return 0;
}
