/* BE CPU suppression (cpusuppress.h). */
#include "agent/qos/cpusuppress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/qos/qos-int.h"
#include "base/base.h"

int qos_host_apps_from_nodeslo(const cJSON *nodeslo, struct qos_host_app **ret_apps, size_t *ret_n)
{
    const cJSON *list = qos__member(qos__get(nodeslo, "spec"), "hostApplications"), *e;
    struct qos_host_app *apps;
    size_t n = 0;

    *ret_apps = NULL;
    *ret_n = 0;
    if (!list)
        return 0;
    if (!cJSON_IsArray(list))
        return -EINVAL;
    if (cJSON_GetArraySize(list) > QOS_HOST_APPS_MAX)
        return -E2BIG;
    if (cJSON_GetArraySize(list) == 0)
        return 0;
    apps = ccalloc((size_t)cJSON_GetArraySize(list), sizeof(*apps));
    if (!apps)
        return -ENOMEM;
    cJSON_ArrayForEach(e, list)
    {
        const cJSON *name = qos__member(e, "name"), *q = qos__member(e, "qos");
        const cJSON *path = qos__member(e, "cgroupPath");
        const cJSON *base = qos__member(path, "base");

        if (!cJSON_IsObject(e) || (name && !cJSON_IsString(name)) || (q && !cJSON_IsString(q)) ||
            (path && !cJSON_IsObject(path)) || (base && !cJSON_IsString(base))) {
            free(apps);
            return -EINVAL;
        }
        apps[n].name = name ? name->valuestring : "";
        apps[n].qos = api_qos_by_name(q ? q->valuestring : NULL);
        apps[n].besteffort_base = base && !strcmp(base->valuestring, "KubepodsBesteffort");
        n++;
    }
    *ret_apps = apps;
    *ret_n = n;
    return 0;
}

int64_t qos_cpusuppress_milli(const struct qos_suppress_input *in)
{
    const struct qos_threshold *cfg = in->cfg;
    int64_t cap = in->node->capacity.v[QOS_RES_CPU], suppress, min;
    double reserved = (double)qos_node_reserved_cpu_milli(in->node) / 1000;
    double pods_all = in->unknown_pods_cpu_usage, pods_non_be = in->unknown_pods_cpu_usage;
    double apps_all = 0, apps_non_be = 0, system;

    for (size_t i = 0; i < in->npods; i++) {
        const struct qos_pod *p = &in->pods[i];

        if (!p->has_cpu_usage)
            continue;
        pods_all += p->cpu_usage;
        if (p->qos_label != API_QOS_BE && p->kube_qos != QOS_KUBE_BESTEFFORT)
            pods_non_be += p->cpu_usage;
    }
    for (size_t i = 0; i < in->napps; i++) {
        const struct qos_host_app *a = &in->apps[i];

        if (!a->has_cpu_usage)
            continue;
        apps_all += a->cpu_usage;
        if (!(a->qos == API_QOS_BE && a->besteffort_base))
            apps_non_be += a->cpu_usage;
    }
    system = in->node_cpu_usage - pods_all - apps_all;
    if (system < 0)
        system = 0;
    if (system < reserved)
        system = reserved;
    suppress = cap * cfg->cpu_suppress_threshold_percent.value / 100;
    suppress -= (int64_t)(pods_non_be * 1000);
    suppress -= (int64_t)(apps_non_be * 1000);
    suppress -= (int64_t)(system * 1000);
    if (cfg->cpu_suppress_min_percent.set) {
        min = cap * cfg->cpu_suppress_min_percent.value / 100;
        if (suppress < min)
            suppress = min;
    }
    return suppress;
}

/* ---- picker ---- */

static int cmp_topology(const void *pa, const void *pb)
{
    const struct qos_cpu_info *a = pa, *b = pb;

    if (a->node != b->node)
        return qos__cmp_i64(a->node, b->node);
    if (a->socket != b->socket)
        return qos__cmp_i64(a->socket, b->socket);
    if (a->core != b->core)
        return qos__cmp_i64(a->core, b->core);
    return qos__cmp_i64(a->cpu, b->cpu);
}

struct bucket {
    size_t start;
    size_t len;
    int head; /* cpu id of the first CPU after sorting by (core, cpu) */
};

static int cmp_bucket(const void *pa, const void *pb)
{
    const struct bucket *a = pa, *b = pb;

    if (a->len != b->len)
        return a->len > b->len ? -1 : 1;
    return qos__cmp_i64(a->head, b->head);
}

size_t qos_cpusuppress_pick(const struct qos_cpu_info *pool, size_t npool, size_t want,
                            int *ret_cpus)
{
    struct qos_cpu_info *a;
    struct bucket *b;
    bool *used;
    size_t nb = 0, got = 0, i = 0, need = want, prev;

    if (npool < want || want == 0)
        return 0;
    a = xcalloc(npool, sizeof(*a));
    b = xcalloc(npool, sizeof(*b));
    used = xcalloc(npool, sizeof(*used));
    memcpy(a, pool, npool * sizeof(*a));
    /* Grouping by (node, socket) and sorting inside by (core, cpu) is one sort. */
    qsort(a, npool, sizeof(*a), cmp_topology);
    for (size_t k = 0; k < npool; k++) {
        if (k == 0 || a[k].node != a[k - 1].node || a[k].socket != a[k - 1].socket) {
            b[nb].start = k;
            b[nb].head = a[k].cpu;
            nb++;
        }
        b[nb - 1].len++;
    }
    qsort(b, nb, sizeof(*b), cmp_bucket);

    /* Sibling pairs, one per bucket visit, while two or more are needed. */
    prev = SIZE_MAX;
    for (;; i = (i + 1) % nb) {
        const struct bucket *bk = &b[i];

        if (need <= 1)
            break;
        if (i == 0) {
            if (prev == need)
                break;
            prev = need;
        }
        for (size_t j = bk->start; j + 1 < bk->start + bk->len; j++) {
            if (used[j])
                continue;
            if (a[j].core == a[j + 1].core) {
                ret_cpus[got++] = a[j].cpu;
                ret_cpus[got++] = a[j + 1].cpu;
                used[j] = used[j + 1] = true;
                need -= 2;
                break;
            }
        }
    }
    /* Then single CPUs, from the bucket where the pairs stopped. */
    prev = SIZE_MAX;
    for (size_t start = i;; i = (i + 1) % nb) {
        const struct bucket *bk = &b[i];

        if (need == 0)
            break;
        if (i == start) {
            if (prev == need)
                break;
            prev = need;
        }
        for (size_t j = bk->start; j < bk->start + bk->len; j++) {
            if (!used[j]) {
                ret_cpus[got++] = a[j].cpu;
                used[j] = true;
                need--;
                break;
            }
        }
    }
    free(a);
    free(b);
    free(used);
    return got;
}

/* ---- cpuset policy ---- */

static bool excluded(const struct qos_cpuset_input *in, int cpu)
{
    return (in->reserved && cg_cpuset_has(in->reserved, cpu)) ||
           (in->system_exclusive && cg_cpuset_has(in->system_exclusive, cpu));
}

/* Pool labels by CPU from the pods' resource-status cpusets: the last pod listing a CPU wins. */
static void pool_labels(const struct qos_cpuset_input *in, enum api_qos *label, bool *listed)
{
    for (size_t i = 0; i < in->npods; i++) {
        struct cg_cpuset s;

        if (qos_resource_status_cpus(in->pods[i].resource_status, &s) <= 0)
            continue;
        for (int c = 0; c < CG_CPUSET_MAX_CPUS; c++) {
            if (cg_cpuset_has(&s, c)) {
                label[c] = in->pods[i].qos_label;
                listed[c] = true;
            }
        }
    }
}

void qos_cpusuppress_cpuset(const struct qos_cpuset_input *in, struct qos_cpuset_result *ret)
{
    enum api_qos *label = xcalloc(CG_CPUSET_MAX_CPUS, sizeof(*label));
    bool *listed = xcalloc(CG_CPUSET_MAX_CPUS, sizeof(*listed));
    struct qos_cpu_info *lsr = xcalloc(in->ncpus ? in->ncpus : 1, sizeof(*lsr));
    struct qos_cpu_info *ls = xcalloc(in->ncpus ? in->ncpus : 1, sizeof(*ls));
    int *picked = xcalloc(in->ncpus ? in->ncpus : 1, sizeof(*picked));
    size_t nlsr = 0, nls = 0, got;
    int64_t n, grow;

    memset(ret, 0, sizeof(*ret));
    pool_labels(in, label, listed);
    for (size_t i = 0; i < in->ncpus; i++) {
        int c = in->cpus[i].cpu;
        bool known = c >= 0 && c < CG_CPUSET_MAX_CPUS && listed[c];

        if (excluded(in, c))
            continue;
        if (known && label[c] == API_QOS_LSR)
            lsr[nlsr++] = in->cpus[i];
        else if (!known || label[c] != API_QOS_LSE)
            ls[nls++] = in->cpus[i];
    }
    ret->lsr_pool = nlsr;
    ret->ls_pool = nls;

    n = (int64_t)ceil((double)in->suppress_milli / 1000);
    if (n < QOS_SUPPRESS_MIN_CPUS)
        n = QOS_SUPPRESS_MIN_CPUS;
    grow = (int64_t)ceil((double)in->ncpus * QOS_SUPPRESS_INCREASE_RATIO);
    if (n - (int64_t)in->current_be_cpus > grow)
        n = (int64_t)in->current_be_cpus + grow;
    ret->want = (int)n;
    if (nlsr + nls > 0) {
        ret->want_lsr = (int)(n * (int64_t)nlsr / (int64_t)(nlsr + nls));
        if (ret->want_lsr > 0) {
            got = qos_cpusuppress_pick(lsr, nlsr, (size_t)ret->want_lsr, picked);
            for (size_t k = 0; k < got; k++)
                (void)cg_cpuset_add(&ret->cpus, picked[k]);
        }
        if (n - ret->want_lsr > 0) {
            got = qos_cpusuppress_pick(ls, nls, (size_t)(n - ret->want_lsr), picked);
            for (size_t k = 0; k < got; k++)
                (void)cg_cpuset_add(&ret->cpus, picked[k]);
        }
    }
    free(label);
    free(listed);
    free(lsr);
    free(ls);
    free(picked);
}

void qos_cpusuppress_full_cpuset(const struct qos_cpuset_input *in, struct cg_cpuset *ret)
{
    cg_cpuset_clear(ret);
    for (size_t i = 0; i < in->ncpus; i++)
        if (!excluded(in, in->cpus[i].cpu))
            (void)cg_cpuset_add(ret, in->cpus[i].cpu);
    for (size_t i = 0; i < in->npods; i++) {
        struct cg_cpuset s;

        if (in->pods[i].qos_label != API_QOS_LSE ||
            qos_resource_status_cpus(in->pods[i].resource_status, &s) <= 0)
            continue;
        for (size_t w = 0; w < ARRAY_SIZE(ret->bits); w++)
            ret->bits[w] &= ~s.bits[w];
    }
}

static bool cpuset_empty(const struct cg_cpuset *s)
{
    return cg_cpuset_count(s) == 0;
}

static void add_write(struct qos_suppress_plan *p, const struct cg_cpuset *cpus, unsigned levels,
                      bool bottom_up)
{
    struct qos_cpuset_write *w = &p->cpuset[p->ncpuset++];

    w->cpus = *cpus;
    w->levels = levels;
    w->bottom_up = bottom_up;
}

void qos_cpusuppress_cpuset_plan(enum qos_kubelet_cpu_policy policy, const struct cg_cpuset *old,
                                 const struct cg_cpuset *new_cpus, const struct cg_cpuset *full,
                                 struct qos_suppress_plan *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->write_quota = true;
    ret->be_quota = QOS_SUPPRESS_UNSET_QUOTA;
    if (policy == QOS_KUBELET_CPU_POLICY_STATIC) {
        add_write(ret, full, QOS_LEVEL_QOS | QOS_LEVEL_POD, false);
        if (!cpuset_empty(new_cpus))
            add_write(ret, new_cpus, QOS_LEVEL_CONTAINER, false);
        return;
    }
    if (cpuset_empty(new_cpus))
        return;
    /* A loose union first, top-down, so no child ever holds a CPU its parent lacks. */
    add_write(ret, old, QOS_LEVEL_ALL, false);
    cg_cpuset_union(&ret->cpuset[0].cpus, new_cpus);
    add_write(ret, new_cpus, QOS_LEVEL_ALL, true);
}

bool qos_cpusuppress_cfs_quota(int64_t suppress_milli, int64_t capacity_milli,
                               int64_t current_quota, int64_t *ret_quota)
{
    int64_t cores = capacity_milli > 0 ? (capacity_milli + 999) / 1000 : capacity_milli / 1000;
    int64_t quota = suppress_milli * QOS_CFS_PERIOD_US / 1000;
    double min_delta = (double)cores * QOS_CFS_PERIOD_US * QOS_SUPPRESS_QUOTA_SKIP_RATIO;
    double max_inc = (double)cores * QOS_CFS_PERIOD_US * QOS_SUPPRESS_INCREASE_RATIO;

    if (quota < QOS_SUPPRESS_MIN_QUOTA)
        quota = QOS_SUPPRESS_MIN_QUOTA;
    *ret_quota = quota;
    if (fabs((double)quota - (double)current_quota) < min_delta && quota != QOS_SUPPRESS_MIN_QUOTA)
        return false;
    /* Scale up in steps once a quota is set. */
    if ((double)quota - (double)current_quota > max_inc &&
        current_quota != QOS_SUPPRESS_UNSET_QUOTA)
        quota = current_quota + (int64_t)max_inc;
    *ret_quota = quota;
    return true;
}

void qos_cpusuppress_cfs_plan(int64_t suppress_milli, int64_t capacity_milli, int64_t current_quota,
                              const struct cg_cpuset *full, struct qos_suppress_plan *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->write_quota =
        qos_cpusuppress_cfs_quota(suppress_milli, capacity_milli, current_quota, &ret->be_quota);
    add_write(ret, full, QOS_LEVEL_ALL, false);
}

void qos_cpusuppress_recover_plan(const struct cg_cpuset *full, struct qos_suppress_plan *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->write_quota = true;
    ret->be_quota = QOS_SUPPRESS_UNSET_QUOTA;
    add_write(ret, full, QOS_LEVEL_ALL, false);
}
