/*
 * Decoding pods and nodes into the scheduler's structs (types.h). Requests follow
 * k8s.io/kubernetes pkg/api/v1/resource/helpers.go PodRequests (sidecars, init containers'
 * max, overhead) and the non-zero variant of pkg/scheduler/util/pod_resources.go; selectors and
 * tolerations follow k8s.io/component-helpers/scheduling/corev1 and core/v1 toleration.go.
 */
#include "sched/framework/types.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/labels.h"
#include "api/pod.h"
#include "api/quantity.h"
#include "api/rfc3339.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "sched/reservation/owners.h"

/* ---- resource names ---- */

static pthread_mutex_t res_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *res_names[SCHED_RES_MAX] = {"cpu", "memory", "ephemeral-storage"};
static _Atomic int res_count = SCHED_RES_FIRST_SCALAR;

bool sched_res_is_scalar(const char *name)
{
    return strchr(name, '/') || !strncmp(name, "hugepages-", 10) ||
           !strncmp(name, "attachable-volumes-", 19);
}

int sched_res_lookup(const char *name)
{
    int n = atomic_load(&res_count);

    for (int i = 0; i < n; i++)
        if (!strcmp(res_names[i], name))
            return i;
    return -ENOENT;
}

int sched_res_index(const char *name)
{
    int i = sched_res_lookup(name), n;

    if (i >= 0)
        return i;
    if (!sched_res_is_scalar(name))
        return -ENOENT;
    pthread_mutex_lock(&res_lock);
    n = atomic_load(&res_count);
    for (i = SCHED_RES_FIRST_SCALAR; i < n; i++)
        if (!strcmp(res_names[i], name))
            goto out;
    if (n == SCHED_RES_MAX) {
        i = -E2BIG;
        goto out;
    }
    res_names[n] = xstrdup(name);
    /* Published after the name is written: readers load the count first. */
    atomic_store(&res_count, n + 1);
    i = n;
out:
    pthread_mutex_unlock(&res_lock);
    return i;
}

const char *sched_res_name(int i)
{
    return res_names[i];
}

int sched_res_count(void)
{
    return atomic_load(&res_count);
}

/* ---- small JSON helpers ---- */

static const cJSON *get(const cJSON *o, const char *k)
{
    return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const char *s = cJSON_GetStringValue(get(o, k));
    return s ? s : "";
}

const char *sched_label(const cJSON *labels, const char *key)
{
    return cJSON_GetStringValue(get(labels, key));
}

/* The first problem found, as "path: why"; later ones are dropped. */
struct decode_err {
    char *msg;
};

static void fail(struct decode_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct decode_err *e, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;

    if (e->msg)
        return;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    e->msg = strbuf_detach(&sb, NULL);
}

static char **str_list(const cJSON *a, size_t *ret_n)
{
    size_t n = 0;
    char **v;
    const cJSON *x;

    *ret_n = 0;
    if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))
        return NULL;
    v = xcalloc((size_t)cJSON_GetArraySize(a), sizeof(*v));
    cJSON_ArrayForEach(x, a) v[n++] = xstrdup(cJSON_IsString(x) ? x->valuestring : "");
    *ret_n = n;
    return v;
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- selectors ---- */

static int decode_req(const cJSON *e, bool field, const char *path, struct sched_sel_req *r,
                      struct decode_err *err)
{
    const char *op = get_str(e, "operator");

    memset(r, 0, sizeof(*r));
    r->key = xstrdup(get_str(e, "key"));
    r->values = str_list(get(e, "values"), &r->nvalues);
    if (!*r->key) {
        fail(err, "%s.key: Required value", path);
        return -EINVAL;
    }
    if (field && strcmp(r->key, "metadata.name")) {
        fail(err, "%s.key: Invalid value: \"%s\": not a valid field selector key", path, r->key);
        return -EINVAL;
    }
    if (!strcmp(op, "In"))
        r->op = SCHED_OP_IN;
    else if (!strcmp(op, "NotIn"))
        r->op = SCHED_OP_NOT_IN;
    else if (!strcmp(op, "Exists") && !field)
        r->op = SCHED_OP_EXISTS;
    else if (!strcmp(op, "DoesNotExist") && !field)
        r->op = SCHED_OP_DOES_NOT_EXIST;
    else if (!strcmp(op, "Gt") && !field)
        r->op = SCHED_OP_GT;
    else if (!strcmp(op, "Lt") && !field)
        r->op = SCHED_OP_LT;
    else {
        fail(err, "%s.operator: Unsupported value: \"%s\"", path, op);
        return -EINVAL;
    }
    switch (r->op) {
    case SCHED_OP_IN:
    case SCHED_OP_NOT_IN:
        if (!r->nvalues || (field && r->nvalues != 1)) {
            fail(err, "%s.values: %s", path,
                 field ? "must have one element" : "Required value: must be specified");
            return -EINVAL;
        }
        break;
    case SCHED_OP_EXISTS:
    case SCHED_OP_DOES_NOT_EXIST:
        if (r->nvalues) {
            fail(err, "%s.values: Forbidden: may not be specified when `operator` is '%s'", path,
                 op);
            return -EINVAL;
        }
        break;
    case SCHED_OP_GT:
    case SCHED_OP_LT:
        if (r->nvalues != 1 || parse_i64(r->values[0], &r->num) < 0) {
            fail(err,
                 "%s.values: Required value: must be specified single value when `operator` "
                 "is 'Lt' or 'Gt'",
                 path);
            return -EINVAL;
        }
        break;
    }
    return 0;
}

static void free_req(struct sched_sel_req *r)
{
    free(r->key);
    free_strs(r->values, r->nvalues);
}

static struct sched_sel_req *decode_reqs(const cJSON *a, bool field, const char *path,
                                         size_t *ret_n, struct decode_err *err)
{
    struct sched_sel_req *v;
    const cJSON *e;
    size_t n = 0;

    *ret_n = 0;
    if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))
        return NULL;
    v = xcalloc((size_t)cJSON_GetArraySize(a), sizeof(*v));
    cJSON_ArrayForEach(e, a)
    {
        char p[512];
        (void)snprintf(p, sizeof(p), "%s[%zu]", path, n);
        (void)decode_req(e, field, p, &v[n++], err);
    }
    *ret_n = n;
    return v;
}

static void decode_term(const cJSON *t, const char *path, struct sched_node_term *term,
                        struct decode_err *err)
{
    char p[512];

    (void)snprintf(p, sizeof(p), "%s.matchExpressions", path);
    term->exprs = decode_reqs(get(t, "matchExpressions"), false, p, &term->nexprs, err);
    (void)snprintf(p, sizeof(p), "%s.matchFields", path);
    term->fields = decode_reqs(get(t, "matchFields"), true, p, &term->nfields, err);
}

static void free_term(struct sched_node_term *t)
{
    for (size_t i = 0; i < t->nexprs; i++)
        free_req(&t->exprs[i]);
    free(t->exprs);
    for (size_t i = 0; i < t->nfields; i++)
        free_req(&t->fields[i]);
    free(t->fields);
}

/* path names the terms array itself ("...nodeSelectorTerms"). */
static struct sched_node_selector *decode_terms(const cJSON *terms, const char *path,
                                                struct decode_err *err)
{
    struct sched_node_selector *ns = xcalloc(1, sizeof(*ns));
    const cJSON *t;
    size_t n = 0;

    if (cJSON_IsArray(terms) && cJSON_GetArraySize(terms)) {
        ns->terms = xcalloc((size_t)cJSON_GetArraySize(terms), sizeof(*ns->terms));
        cJSON_ArrayForEach(t, terms)
        {
            char p[512];
            (void)snprintf(p, sizeof(p), "%s[%zu]", path, n);
            decode_term(t, p, &ns->terms[n++], err);
        }
    }
    ns->nterms = n;
    return ns;
}

static struct sched_node_selector *decode_node_selector(const cJSON *s, const char *path,
                                                        struct decode_err *err)
{
    char p[512];

    (void)snprintf(p, sizeof(p), "%s.nodeSelectorTerms", path);
    return decode_terms(get(s, "nodeSelectorTerms"), p, err);
}

static void free_node_selector(struct sched_node_selector *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nterms; i++)
        free_term(&s->terms[i]);
    free(s->terms);
    free(s);
}

int sched_node_selector_decode_terms(const cJSON *terms, const char *path,
                                     struct sched_node_selector **ret, char **ret_why)
{
    struct decode_err err = {0};
    struct sched_node_selector *s = decode_terms(terms, path, &err);

    if (err.msg) {
        free_node_selector(s);
        *ret_why = err.msg;
        return -EINVAL;
    }
    *ret = s;
    return 0;
}

void sched_node_selector_free(struct sched_node_selector *s)
{
    free_node_selector(s);
}

bool sched_sel_req_matches(const struct sched_sel_req *r, const cJSON *labels)
{
    const char *v = sched_label(labels, r->key);
    int64_t num;

    switch (r->op) {
    case SCHED_OP_IN:
    case SCHED_OP_NOT_IN: {
        bool in = false;
        for (size_t i = 0; v && i < r->nvalues && !in; i++)
            in = !strcmp(v, r->values[i]);
        return r->op == SCHED_OP_IN ? in : !in;
    }
    case SCHED_OP_EXISTS:
        return v != NULL;
    case SCHED_OP_DOES_NOT_EXIST:
        return v == NULL;
    case SCHED_OP_GT:
    case SCHED_OP_LT:
        if (!v || parse_i64(v, &num) < 0)
            return false;
        return r->op == SCHED_OP_GT ? num > r->num : num < r->num;
    }
    return false;
}

static bool field_matches(const struct sched_sel_req *r, const char *node_name)
{
    bool in = false;

    for (size_t i = 0; i < r->nvalues && !in; i++)
        in = !strcmp(node_name, r->values[i]);
    return r->op == SCHED_OP_IN ? in : !in;
}

bool sched_node_term_matches(const struct sched_node_term *t, const cJSON *labels,
                             const char *node_name)
{
    if (!t->nexprs && !t->nfields)
        return false;
    for (size_t i = 0; i < t->nexprs; i++)
        if (!sched_sel_req_matches(&t->exprs[i], labels))
            return false;
    for (size_t i = 0; i < t->nfields; i++)
        if (!field_matches(&t->fields[i], node_name ? node_name : ""))
            return false;
    return true;
}

bool sched_node_selector_matches(const struct sched_node_selector *s, const cJSON *labels,
                                 const char *node_name)
{
    for (size_t i = 0; i < s->nterms; i++)
        if (sched_node_term_matches(&s->terms[i], labels, node_name))
            return true;
    return false;
}

/* ---- tolerations and taints ---- */

int sched_effect_parse(const char *s, bool empty_ok, enum sched_effect *ret)
{
    if (!*s && empty_ok)
        *ret = SCHED_EFFECT_ANY;
    else if (!strcmp(s, "NoSchedule"))
        *ret = SCHED_EFFECT_NO_SCHEDULE;
    else if (!strcmp(s, "PreferNoSchedule"))
        *ret = SCHED_EFFECT_PREFER_NO_SCHEDULE;
    else if (!strcmp(s, "NoExecute"))
        *ret = SCHED_EFFECT_NO_EXECUTE;
    else
        return -EINVAL;
    return 0;
}

bool sched_toleration_matches(const struct sched_toleration *t, const struct sched_taint *taint)
{
    if (t->effect != SCHED_EFFECT_ANY && t->effect != taint->effect)
        return false;
    if (*t->key && strcmp(t->key, taint->key))
        return false;
    if (t->exists)
        return true;
    return !strcmp(t->value, taint->value);
}

bool sched_pod_tolerates(const struct sched_pod *p, const struct sched_taint *taint)
{
    for (size_t i = 0; i < p->ntolerations; i++)
        if (sched_toleration_matches(&p->tolerations[i], taint))
            return true;
    return false;
}

/* ---- pod requests ---- */

/* Remembers a scalar resource no node offers (once per name; bounded by the request's size). */
static void add_unoffered(struct sched_pod *p, const char *name)
{
    for (size_t i = 0; i < p->nunoffered; i++)
        if (!strcmp(p->unoffered[i], name))
            return;
    p->unoffered = xrealloc(p->unoffered, (p->nunoffered + 1) * sizeof(char *));
    p->unoffered[p->nunoffered++] = xstrdup(name);
}

/* The index of a resource a pod requests, or -ENOENT; a scalar no node offers is recorded
 * when the request is not 0 (fit.go skips zero requests). */
static int pod_res_index(struct sched_pod *p, const char *name, const struct quantity *q)
{
    int i = sched_res_lookup(name);

    if (i < 0 && sched_res_is_scalar(name) && !quantity_is_zero(q))
        add_unoffered(p, name);
    return i;
}

/* One container's requests into r (zeroed first) and its non-zero cpu/memory. */
static void container_requests(struct sched_pod *p, const cJSON *c, const char *path,
                               struct sched_res *r, int64_t *nz_cpu, int64_t *nz_mem, bool *any,
                               struct decode_err *err)
{
    const cJSON *req = get(get(c, "resources"), "requests"), *q;
    bool has_cpu = false, has_mem = false;

    memset(r, 0, sizeof(*r));
    cJSON_ArrayForEach(q, req)
    {
        struct quantity qty;
        int64_t v;
        int i;

        if (!cJSON_IsString(q) || quantity_parse(q->valuestring, &qty) < 0) {
            fail(err,
                 "%s.resources.requests.%s: Invalid value: quantities must match the "
                 "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                 path, q->string);
            continue;
        }
        if (quantity_sign(&qty) < 0) {
            fail(err,
                 "%s.resources.requests.%s: Invalid value: must be greater than or equal "
                 "to 0",
                 path, q->string);
            continue;
        }
        i = pod_res_index(p, q->string, &qty);
        if (i < 0) {
            /* A scalar no node offers still counts as a request (fit.go). */
            *any |= sched_res_is_scalar(q->string);
            continue;
        }
        if (i == SCHED_RES_CPU) {
            (void)quantity_milli(&qty, &v);
            has_cpu = true;
        } else {
            (void)quantity_value(&qty, &v);
            has_mem |= i == SCHED_RES_MEMORY;
        }
        r->v[i] = v;
        /* fit.go counts a pod as requesting nothing when cpu, memory and ephemeral-storage
         * are 0 and it names no scalar resource (a scalar listed at 0 still counts). */
        *any |= v != 0 || i >= SCHED_RES_FIRST_SCALAR;
    }
    *nz_cpu = has_cpu ? r->v[SCHED_RES_CPU] : SCHED_DEFAULT_MILLI_CPU;
    *nz_mem = has_mem ? r->v[SCHED_RES_MEMORY] : SCHED_DEFAULT_MEMORY;
}

static void decode_requests(const cJSON *spec, struct sched_pod *p, struct decode_err *err)
{
    struct sched_res c, sidecars = {{0}}, init_max = {{0}};
    int64_t nzc, nzm, side_nzc = 0, side_nzm = 0, init_nzc = 0, init_nzm = 0;
    const cJSON *x, *q;
    bool any = false;
    size_t i = 0;

    cJSON_ArrayForEach(x, get(spec, "containers"))
    {
        char path[64];
        (void)snprintf(path, sizeof(path), "spec.containers[%zu]", i++);
        container_requests(p, x, path, &c, &nzc, &nzm, &any, err);
        for (int k = 0; k < SCHED_RES_MAX; k++)
            p->req.v[k] += c.v[k];
        p->nonzero_cpu += nzc;
        p->nonzero_mem += nzm;
    }
    i = 0;
    cJSON_ArrayForEach(x, get(spec, "initContainers"))
    {
        char path[64];
        bool sidecar = !strcmp(get_str(x, "restartPolicy"), "Always");
        (void)snprintf(path, sizeof(path), "spec.initContainers[%zu]", i++);
        container_requests(p, x, path, &c, &nzc, &nzm, &any, err);
        if (sidecar) {
            for (int k = 0; k < SCHED_RES_MAX; k++) {
                p->req.v[k] += c.v[k];
                sidecars.v[k] += c.v[k];
                c.v[k] = sidecars.v[k];
            }
            p->nonzero_cpu += nzc;
            p->nonzero_mem += nzm;
            side_nzc += nzc;
            side_nzm += nzm;
            nzc = side_nzc;
            nzm = side_nzm;
        } else {
            for (int k = 0; k < SCHED_RES_MAX; k++)
                c.v[k] += sidecars.v[k];
            nzc += side_nzc;
            nzm += side_nzm;
        }
        for (int k = 0; k < SCHED_RES_MAX; k++)
            if (c.v[k] > init_max.v[k])
                init_max.v[k] = c.v[k];
        init_nzc = nzc > init_nzc ? nzc : init_nzc;
        init_nzm = nzm > init_nzm ? nzm : init_nzm;
    }
    for (int k = 0; k < SCHED_RES_MAX; k++)
        if (init_max.v[k] > p->req.v[k])
            p->req.v[k] = init_max.v[k];
    p->nonzero_cpu = init_nzc > p->nonzero_cpu ? init_nzc : p->nonzero_cpu;
    p->nonzero_mem = init_nzm > p->nonzero_mem ? init_nzm : p->nonzero_mem;
    cJSON_ArrayForEach(q, get(spec, "overhead"))
    {
        struct quantity qty;
        int64_t v;
        int k;

        if (!cJSON_IsString(q) || quantity_parse(q->valuestring, &qty) < 0) {
            fail(err, "spec.overhead.%s: Invalid value: not a quantity", q->string);
            continue;
        }
        k = pod_res_index(p, q->string, &qty);
        if (k < 0) {
            any |= sched_res_is_scalar(q->string);
            continue;
        }
        if (k == SCHED_RES_CPU)
            (void)quantity_milli(&qty, &v);
        else
            (void)quantity_value(&qty, &v);
        p->req.v[k] += v;
        if (k == SCHED_RES_CPU)
            p->nonzero_cpu += v;
        else if (k == SCHED_RES_MEMORY)
            p->nonzero_mem += v;
        any |= v != 0 || k >= SCHED_RES_FIRST_SCALAR;
    }
    p->requests_nothing = !any;
}

/* One container's limits into r (zeroed first): resources some node offers only. */
static void container_limits(const cJSON *c, struct sched_res *r)
{
    const cJSON *q;

    memset(r, 0, sizeof(*r));
    cJSON_ArrayForEach(q, get(get(c, "resources"), "limits"))
    {
        struct quantity qty;
        int64_t v = 0;
        int i;

        if (!cJSON_IsString(q) || quantity_parse(q->valuestring, &qty) < 0 ||
            quantity_sign(&qty) < 0 || (i = sched_res_lookup(q->string)) < 0)
            continue;
        if (i == SCHED_RES_CPU)
            (void)quantity_milli(&qty, &v);
        else
            (void)quantity_value(&qty, &v);
        r->v[i] = v;
    }
}

/* resource.PodLimits: the containers' limits summed, raised to any init container's. */
static void decode_limits(const cJSON *spec, struct sched_pod *p)
{
    struct sched_res c;
    const cJSON *x;

    cJSON_ArrayForEach(x, get(spec, "containers"))
    {
        container_limits(x, &c);
        for (int k = 0; k < SCHED_RES_MAX; k++)
            p->lim.v[k] += c.v[k];
    }
    cJSON_ArrayForEach(x, get(spec, "initContainers"))
    {
        container_limits(x, &c);
        for (int k = 0; k < SCHED_RES_MAX; k++)
            if (c.v[k] > p->lim.v[k])
                p->lim.v[k] = c.v[k];
    }
}

/* ---- pod affinity and spread ---- */

static struct label_selector *decode_selector(const cJSON *sel, const char *path,
                                              struct decode_err *err)
{
    struct label_selector *s = NULL;
    struct strbuf why = STRBUF_INIT;

    if (!sel || cJSON_IsNull(sel))
        return NULL;
    if (label_selector_from_json(sel, &s, &why) < 0) {
        fail(err, "%s: Invalid value: %s", path, why.buf ? why.buf : "bad selector");
        s = NULL;
    }
    strbuf_release(&why);
    return s;
}

static void decode_pod_term(const cJSON *t, const char *path, struct sched_pod_term *pt,
                            struct decode_err *err)
{
    char p[512];

    (void)snprintf(p, sizeof(p), "%s.labelSelector", path);
    pt->selector = decode_selector(get(t, "labelSelector"), p, err);
    pt->namespaces = str_list(get(t, "namespaces"), &pt->nnamespaces);
    (void)snprintf(p, sizeof(p), "%s.namespaceSelector", path);
    pt->ns_selector = decode_selector(get(t, "namespaceSelector"), p, err);
    pt->topology_key = xstrdup(get_str(t, "topologyKey"));
    if (!*pt->topology_key)
        fail(err, "%s.topologyKey: Required value: can not be empty", path);
}

static void free_pod_terms(struct sched_pod_term *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        label_selector_free(v[i].selector);
        label_selector_free(v[i].ns_selector);
        free_strs(v[i].namespaces, v[i].nnamespaces);
        free(v[i].topology_key);
    }
    free(v);
}

static struct sched_pod_term *decode_pod_terms(const cJSON *a, bool weighted, const char *path,
                                               size_t *ret_n, struct decode_err *err)
{
    struct sched_pod_term *v;
    const cJSON *e;
    size_t n = 0;

    *ret_n = 0;
    if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))
        return NULL;
    v = xcalloc((size_t)cJSON_GetArraySize(a), sizeof(*v));
    cJSON_ArrayForEach(e, a)
    {
        char p[512];
        if (weighted) {
            const cJSON *w = get(e, "weight");
            (void)snprintf(p, sizeof(p), "%s[%zu].podAffinityTerm", path, n);
            decode_pod_term(get(e, "podAffinityTerm"), p, &v[n], err);
            v[n].weight = cJSON_IsNumber(w) ? (int32_t)w->valuedouble : 0;
            if (v[n].weight < 1 || v[n].weight > 100)
                fail(err, "%s[%zu].weight: Invalid value: %d: must be in the range 1-100", path, n,
                     v[n].weight);
        } else {
            (void)snprintf(p, sizeof(p), "%s[%zu]", path, n);
            decode_pod_term(e, p, &v[n], err);
        }
        n++;
    }
    *ret_n = n;
    return v;
}

/* A constraint's selector with matchLabelKeys turned into "key in (pod's value)". */
static struct label_selector *spread_selector(const cJSON *c, const cJSON *labels, const char *path,
                                              struct decode_err *err)
{
    const cJSON *keys = get(c, "matchLabelKeys"), *k, *sel = get(c, "labelSelector");
    struct label_selector *s;
    cJSON *copy, *exprs;

    if (!cJSON_IsArray(keys) || !cJSON_GetArraySize(keys) || !sel)
        return decode_selector(sel, path, err);
    copy = cJSON_Duplicate(sel, true);
    if (!copy)
        abort();
    exprs = cJSON_GetObjectItemCaseSensitive(copy, "matchExpressions");
    if (!exprs)
        exprs = cJSON_AddArrayToObject(copy, "matchExpressions");
    cJSON_ArrayForEach(k, keys)
    {
        const char *v = cJSON_IsString(k) ? sched_label(labels, k->valuestring) : NULL;
        cJSON *e, *vals;
        if (!v)
            continue;
        e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "key", k->valuestring);
        cJSON_AddStringToObject(e, "operator", "In");
        vals = cJSON_AddArrayToObject(e, "values");
        cJSON_AddItemToArray(vals, cJSON_CreateString(v));
        cJSON_AddItemToArray(exprs, e);
    }
    s = decode_selector(copy, path, err);
    cJSON_Delete(copy);
    return s;
}

static void decode_spread(const cJSON *a, const cJSON *labels, struct sched_pod *p,
                          struct decode_err *err)
{
    const cJSON *c;
    size_t n = 0;

    if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))
        return;
    p->spread = xcalloc((size_t)cJSON_GetArraySize(a), sizeof(*p->spread));
    cJSON_ArrayForEach(c, a)
    {
        struct sched_spread *s = &p->spread[n];
        const cJSON *skew = get(c, "maxSkew"), *md = get(c, "minDomains");
        const char *when = get_str(c, "whenUnsatisfiable");
        char path[128];

        (void)snprintf(path, sizeof(path), "spec.topologySpreadConstraints[%zu]", n);
        s->max_skew = cJSON_IsNumber(skew) ? (int32_t)skew->valuedouble : 0;
        if (s->max_skew < 1)
            fail(err, "%s.maxSkew: Invalid value: %d: must be greater than zero", path,
                 s->max_skew);
        s->topology_key = xstrdup(get_str(c, "topologyKey"));
        if (!*s->topology_key)
            fail(err, "%s.topologyKey: Required value: can not be empty", path);
        if (!strcmp(when, "DoNotSchedule"))
            s->do_not_schedule = true;
        else if (strcmp(when, "ScheduleAnyway"))
            fail(err, "%s.whenUnsatisfiable: Unsupported value: \"%s\"", path, when);
        s->min_domains = cJSON_IsNumber(md) ? (int32_t)md->valuedouble : 1;
        if (s->min_domains < 1)
            fail(err, "%s.minDomains: Invalid value: %d: must be greater than 0", path,
                 s->min_domains);
        s->honor_taints = !strcmp(get_str(c, "nodeTaintsPolicy"), "Honor");
        s->ignore_affinity = !strcmp(get_str(c, "nodeAffinityPolicy"), "Ignore");
        {
            char sp[160];
            (void)snprintf(sp, sizeof(sp), "%s.labelSelector", path);
            s->selector = spread_selector(c, labels, sp, err);
        }
        n++;
    }
    p->nspread = n;
}

/* ---- pods ---- */

static void decode_tolerations(const cJSON *a, struct sched_pod *p, struct decode_err *err)
{
    const cJSON *t;
    size_t n = 0;

    if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))
        return;
    p->tolerations = xcalloc((size_t)cJSON_GetArraySize(a), sizeof(*p->tolerations));
    cJSON_ArrayForEach(t, a)
    {
        struct sched_toleration *x = &p->tolerations[n];
        const char *op = get_str(t, "operator");

        x->key = xstrdup(get_str(t, "key"));
        x->value = xstrdup(get_str(t, "value"));
        x->exists = !strcmp(op, "Exists");
        if (!x->exists && *op && strcmp(op, "Equal"))
            fail(err, "spec.tolerations[%zu].operator: Unsupported value: \"%s\"", n, op);
        if (sched_effect_parse(get_str(t, "effect"), true, &x->effect) < 0)
            fail(err, "spec.tolerations[%zu].effect: Unsupported value: \"%s\"", n,
                 get_str(t, "effect"));
        n++;
    }
    p->ntolerations = n;
}

static void decode_ports(const cJSON *spec, struct sched_pod *p)
{
    const cJSON *c, *port;
    size_t n = 0, cap = 0;

    for (int init = 0; init < 2; init++) {
        cJSON_ArrayForEach(c, get(spec, init ? "initContainers" : "containers"))
        {
            /* Of the init containers only sidecars hold their ports for the pod's life
             * (schedutil.GetHostPorts); kube-scheduler never counts the others. */
            if (init && strcmp(get_str(c, "restartPolicy"), "Always"))
                continue;
            cJSON_ArrayForEach(port, get(c, "ports"))
            {
                const cJSON *hp = get(port, "hostPort");
                const char *proto = get_str(port, "protocol"), *ip = get_str(port, "hostIP");
                struct sched_host_port *h;
                if (!cJSON_IsNumber(hp) || hp->valuedouble <= 0)
                    continue;
                if (n == cap) {
                    cap = cap ? 2 * cap : 4;
                    p->ports = xrealloc(p->ports, cap * sizeof(*p->ports));
                }
                h = &p->ports[n++];
                memset(h, 0, sizeof(*h));
                (void)snprintf(h->ip, sizeof(h->ip), "%s", *ip ? ip : "0.0.0.0");
                h->port = (int32_t)hp->valuedouble;
                h->protocol = !strcmp(proto, "UDP") ? 1 : !strcmp(proto, "SCTP") ? 2 : 0;
            }
        }
    }
    p->nports = n;
}

static void decode_affinity(const cJSON *aff, struct sched_pod *p, struct decode_err *err)
{
    const cJSON *na = get(aff, "nodeAffinity"), *req, *pref, *e;
    const cJSON *pa = get(aff, "podAffinity"), *paa = get(aff, "podAntiAffinity");
    size_t n = 0;

    req = get(na, "requiredDuringSchedulingIgnoredDuringExecution");
    if (req && !cJSON_IsNull(req))
        p->required_node = decode_node_selector(
            req, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", err);
    pref = get(na, "preferredDuringSchedulingIgnoredDuringExecution");
    if (cJSON_IsArray(pref) && cJSON_GetArraySize(pref)) {
        p->preferred_node = xcalloc((size_t)cJSON_GetArraySize(pref), sizeof(*p->preferred_node));
        cJSON_ArrayForEach(e, pref)
        {
            char path[160];
            const cJSON *w = get(e, "weight");
            (void)snprintf(path, sizeof(path),
                           "spec.affinity.nodeAffinity."
                           "preferredDuringSchedulingIgnoredDuringExecution[%zu].preference",
                           n);
            p->preferred_node[n].weight = cJSON_IsNumber(w) ? (int32_t)w->valuedouble : 0;
            decode_term(get(e, "preference"), path, &p->preferred_node[n].term, err);
            n++;
        }
        p->npreferred_node = n;
    }
    p->affinity = decode_pod_terms(get(pa, "requiredDuringSchedulingIgnoredDuringExecution"), false,
                                   "spec.affinity.podAffinity."
                                   "requiredDuringSchedulingIgnoredDuringExecution",
                                   &p->naffinity, err);
    p->pref_affinity =
        decode_pod_terms(get(pa, "preferredDuringSchedulingIgnoredDuringExecution"), true,
                         "spec.affinity.podAffinity."
                         "preferredDuringSchedulingIgnoredDuringExecution",
                         &p->npref_affinity, err);
    p->anti_affinity =
        decode_pod_terms(get(paa, "requiredDuringSchedulingIgnoredDuringExecution"), false,
                         "spec.affinity.podAntiAffinity."
                         "requiredDuringSchedulingIgnoredDuringExecution",
                         &p->nanti_affinity, err);
    p->pref_anti_affinity =
        decode_pod_terms(get(paa, "preferredDuringSchedulingIgnoredDuringExecution"), true,
                         "spec.affinity.podAntiAffinity."
                         "preferredDuringSchedulingIgnoredDuringExecution",
                         &p->npref_anti_affinity, err);
}

static double timestamp(const char *s)
{
    int64_t sec;
    int32_t nsec;

    if (!*s || rfc3339_parse(s, &sec, &nsec) < 0)
        return 0;
    return (double)sec + nsec / 1e9;
}

/* The Reservation a pod stands for or was placed into (sched_pod.reservation). */
static void decode_reservation(const cJSON *annotations, struct sched_pod *p)
{
    const char *v =
        cJSON_GetStringValue(get(annotations, "scheduling.koordinator.sh/reservation-allocated"));
    cJSON *a;

    if (!strcmp(get_str(annotations, "scheduling.koordinator.sh/reserve-pod"), "true")) {
        const char *node = get_str(annotations, "scheduling.koordinator.sh/reservation-node");
        p->reservation =
            xstrdup(get_str(annotations, "scheduling.koordinator.sh/reservation-name"));
        if (*node)
            p->reservation_node = xstrdup(node);
    }
    /* {"name": "...", "uid": "..."}: a malformed one places the pod in no Reservation. */
    if (v && (a = cJSON_Parse(v))) {
        const char *uid = get_str(a, "uid");
        if (*uid)
            p->allocated_from = xstrdup(uid);
        cJSON_Delete(a);
    }
}

int sched_pod_decode(const cJSON *obj, struct sched_pod **ret)
{
    const cJSON *meta = get(obj, "metadata"), *spec = get(obj, "spec"),
                *status = get(obj, "status"), *x, *labels = get(meta, "labels");
    struct sched_pod *p = xcalloc(1, sizeof(*p));
    struct decode_err err = {NULL};
    const char *phase, *ns = get_str(meta, "namespace");
    struct strbuf sb = STRBUF_INIT;

    atomic_init(&p->refs, 1);
    p->uid = xstrdup(get_str(meta, "uid"));
    p->namespace = xstrdup(*ns ? ns : "default");
    p->name = xstrdup(get_str(meta, "name"));
    strbuf_addf(&sb, "%s/%s", p->namespace, p->name);
    p->key = strbuf_detach(&sb, NULL);
    p->resource_version = xstrdup(get_str(meta, "resourceVersion"));
    p->node_name = xstrdup(get_str(spec, "nodeName"));
    p->scheduler_name = xstrdup(*get_str(spec, "schedulerName") ? get_str(spec, "schedulerName")
                                                                : "default-scheduler");
    p->nominated_node = xstrdup(get_str(status, "nominatedNodeName"));
    x = get(spec, "priority");
    p->priority = cJSON_IsNumber(x) ? (int32_t)x->valuedouble : 0;
    p->preempt_never = !strcmp(get_str(spec, "preemptionPolicy"), "Never");
    p->deleting = get(meta, "deletionTimestamp") && !cJSON_IsNull(get(meta, "deletionTimestamp"));
    phase = get_str(status, "phase");
    p->terminal = !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
    p->created = timestamp(get_str(meta, "creationTimestamp"));
    if (cJSON_IsObject(labels) && labels->child && !(p->labels = cJSON_Duplicate(labels, true)))
        abort();
    p->owner_kind = xstrdup("");
    p->owner_uid = xstrdup("");
    cJSON_ArrayForEach(x, get(meta, "ownerReferences"))
    {
        if (!cJSON_IsTrue(get(x, "controller")))
            continue;
        free(p->owner_kind);
        free(p->owner_uid);
        p->owner_kind = xstrdup(get_str(x, "kind"));
        p->owner_uid = xstrdup(get_str(x, "uid"));
        break;
    }
    decode_reservation(get(meta, "annotations"), p);

    decode_requests(spec, p, &err);
    decode_limits(spec, p);
    p->koord_priority = (int)api_pod_priority(obj);
    cJSON_ArrayForEach(x, get(status, "conditions"))
    {
        if (!strcmp(get_str(x, "type"), "PodScheduled") && !strcmp(get_str(x, "status"), "True"))
            p->scheduled = timestamp(get_str(x, "lastTransitionTime"));
    }
    decode_ports(spec, p);
    decode_tolerations(get(spec, "tolerations"), p, &err);
    x = get(spec, "nodeSelector");
    if (cJSON_IsObject(x) && x->child) {
        const cJSON *l;
        size_t n = 0;
        p->node_selector = xcalloc((size_t)cJSON_GetArraySize(x), sizeof(*p->node_selector));
        cJSON_ArrayForEach(l, x)
        {
            struct sched_sel_req *r = &p->node_selector[n++];
            r->key = xstrdup(l->string);
            r->op = SCHED_OP_IN;
            r->values = xcalloc(1, sizeof(char *));
            r->values[0] = xstrdup(cJSON_IsString(l) ? l->valuestring : "");
            r->nvalues = 1;
        }
        p->nnode_selector = n;
    }
    decode_affinity(get(spec, "affinity"), p, &err);
    decode_spread(get(spec, "topologySpreadConstraints"), labels, p, &err);
    cJSON_ArrayForEach(x, get(spec, "schedulingGates"))
    {
        if (p->ngates)
            strbuf_addch(&sb, ' ');
        strbuf_addstr(&sb, get_str(x, "name"));
        p->ngates++;
    }
    p->gates = sb.len ? strbuf_detach(&sb, NULL) : xstrdup("");
    strbuf_release(&sb);
    p->invalid = err.msg;
    *ret = p;
    return 0;
}

struct sched_pod *sched_pod_ref(struct sched_pod *p)
{
    if (p)
        atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    return p;
}

static void pod_free(struct sched_pod *p)
{
    free(p->uid);
    free(p->namespace);
    free(p->name);
    free(p->key);
    free(p->node_name);
    free(p->scheduler_name);
    free(p->nominated_node);
    free(p->resource_version);
    cJSON_Delete(p->labels);
    free(p->owner_kind);
    free(p->owner_uid);
    free(p->reservation);
    free(p->reservation_node);
    free(p->allocated_from);
    sched_resv_pod_free(p->resv);
    free(p->ports);
    for (size_t i = 0; i < p->ntolerations; i++) {
        free(p->tolerations[i].key);
        free(p->tolerations[i].value);
    }
    free(p->tolerations);
    for (size_t i = 0; i < p->nnode_selector; i++)
        free_req(&p->node_selector[i]);
    free(p->node_selector);
    free_node_selector(p->required_node);
    for (size_t i = 0; i < p->npreferred_node; i++)
        free_term(&p->preferred_node[i].term);
    free(p->preferred_node);
    free_pod_terms(p->affinity, p->naffinity);
    free_pod_terms(p->anti_affinity, p->nanti_affinity);
    free_pod_terms(p->pref_affinity, p->npref_affinity);
    free_pod_terms(p->pref_anti_affinity, p->npref_anti_affinity);
    for (size_t i = 0; i < p->nspread; i++) {
        free(p->spread[i].topology_key);
        label_selector_free(p->spread[i].selector);
    }
    free(p->spread);
    free(p->gates);
    for (size_t i = 0; i < p->nunoffered; i++)
        free(p->unoffered[i]);
    free(p->unoffered);
    free(p->invalid);
    free(p);
}

struct sched_pod *sched_pod_unref(struct sched_pod *p)
{
    if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
        pod_free(p);
    return NULL;
}

/* ---- nodes ---- */

int sched_node_decode(const cJSON *obj, struct sched_node **ret)
{
    const cJSON *meta = get(obj, "metadata"), *spec = get(obj, "spec"),
                *status = get(obj, "status"), *x, *labels = get(meta, "labels");
    struct sched_node *n = xcalloc(1, sizeof(*n));
    struct decode_err err = {NULL};
    bool bad_alloc = false;
    size_t k = 0;

    atomic_init(&n->refs, 1);
    n->name = xstrdup(get_str(meta, "name"));
    n->resource_version = xstrdup(get_str(meta, "resourceVersion"));
    if (cJSON_IsObject(labels) && labels->child && !(n->labels = cJSON_Duplicate(labels, true)))
        abort();
    n->unschedulable = cJSON_IsTrue(get(spec, "unschedulable"));
    x = get(spec, "taints");
    if (cJSON_IsArray(x) && cJSON_GetArraySize(x)) {
        const cJSON *t;
        n->taints = xcalloc((size_t)cJSON_GetArraySize(x), sizeof(*n->taints));
        cJSON_ArrayForEach(t, x)
        {
            struct sched_taint *tt = &n->taints[k];
            if (sched_effect_parse(get_str(t, "effect"), false, &tt->effect) < 0) {
                fail(&err, "spec.taints[%zu].effect: Unsupported value: \"%s\"", k,
                     get_str(t, "effect"));
                continue;
            }
            tt->key = xstrdup(get_str(t, "key"));
            tt->value = xstrdup(get_str(t, "value"));
            k++;
        }
        n->ntaints = k;
    }
    cJSON_ArrayForEach(x, get(status, "allocatable"))
    {
        struct quantity q;
        int64_t v;
        int i;

        if (!cJSON_IsString(x) || quantity_parse(x->valuestring, &q) < 0) {
            fail(&err, "status.allocatable.%s: Invalid value: not a quantity", x->string);
            bad_alloc = true;
            continue;
        }
        if (!strcmp(x->string, "pods")) {
            (void)quantity_value(&q, &n->allowed_pods);
            continue;
        }
        if ((i = sched_res_index(x->string)) == -E2BIG)
            fail(&err, "status.allocatable.%s: more than %d distinct resource names, not counted",
                 x->string, SCHED_RES_MAX);
        if (i < 0)
            continue;
        if (i == SCHED_RES_CPU)
            (void)quantity_milli(&q, &v);
        else
            (void)quantity_value(&q, &v);
        n->allocatable.v[i] = v;
    }
    /* An allocatable we cannot read whole counts as empty (types.h): no pod fits there
     * rather than pods fitting by the entries that happened to parse. */
    if (bad_alloc) {
        memset(&n->allocatable, 0, sizeof(n->allocatable));
        n->allowed_pods = 0;
    }
    x = get(status, "conditions");
    if (cJSON_IsArray(x) && !(n->conditions = cJSON_Duplicate(x, true)))
        abort();
    n->invalid = err.msg;
    *ret = n;
    return 0;
}

struct sched_node *sched_node_ref(struct sched_node *n)
{
    if (n)
        atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
    return n;
}

struct sched_node *sched_node_unref(struct sched_node *n)
{
    if (!n || atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) != 1)
        return NULL;
    free(n->name);
    free(n->resource_version);
    cJSON_Delete(n->labels);
    for (size_t i = 0; i < n->ntaints; i++) {
        free(n->taints[i].key);
        free(n->taints[i].value);
    }
    free(n->taints);
    cJSON_Delete(n->conditions);
    free(n->invalid);
    free(n);
    return NULL;
}
