/* The quota tree and runtime calculator of quota_tree.h. */
#include "sched/plugins/elasticquota/quota_tree.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "base/base.h"
#include "base/hmap.h"
#include "base/strbuf.h"

/* Runtime shares multiply weights (up to MaxInt64/5) by budgets: 128-bit products. */
__extension__ typedef __int128 i128;

struct eq_tree {
    struct hmap by_name; /* name -> struct eq_quota * */
    struct hmap by_ns;   /* namespace -> quota name (borrowed), rebuilt when ns_dirty */
    bool ns_dirty;
    struct sched_res total;
    /*
     * The tree's shape, kept between computes (a compute runs on every pod event that charges
     * a quota, the shape changes only with the quotas): every quota in name order, the parent
     * and children links, and the tops, trees of their own (is-root with a total) apart from
     * those sharing the cluster. Rebuilt by the compute after shape_dirty.
     */
    bool shape_dirty;
    struct eq_quota **order, **own, **shared;
    size_t norder, nown, nshared;
    struct eq_quota **sums, **special; /* where sum_up() starts; the default and system quotas */
    size_t nsums, nspecial;
};

/* ---- decoding ---- */

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static void warnf(struct strbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(struct strbuf *w, const char *fmt, ...)
{
    va_list ap;

    if (w->len)
        strbuf_addstr(w, "; ");
    va_start(ap, fmt);
    strbuf_vaddf(w, fmt, ap);
    va_end(ap);
}

/* A ResourceList into r (and the names it holds into *mask); bad entries warned and skipped. */
static void decode_res(const cJSON *list, const char *what, struct sched_res *r, uint64_t *mask,
                       struct strbuf *w)
{
    const cJSON *q;

    cJSON_ArrayForEach(q, list)
    {
        struct quantity qty;
        int64_t v;
        int i;

        if (!cJSON_IsString(q) || quantity_parse(q->valuestring, &qty) < 0 ||
            quantity_sign(&qty) < 0) {
            warnf(w, "%s.%s: not a non-negative quantity", what, q->string);
            continue;
        }
        /* Quotas are few and written by administrators: their names may intern. */
        i = sched_res_index(q->string);
        if (i < 0)
            continue; /* "pods", or names the scheduler does not count */
        if (i == SCHED_RES_CPU)
            (void)quantity_milli(&qty, &v);
        else
            (void)quantity_value(&qty, &v);
        r->v[i] = v;
        if (mask)
            *mask |= UINT64_C(1) << i;
    }
}

/* An annotation holding JSON, parsed (NULL when absent or malformed, warned). */
static cJSON *json_annotation(const cJSON *ann, const char *key, struct strbuf *w)
{
    const char *s = cJSON_GetStringValue(get(ann, key));
    cJSON *v;

    if (!s || !*s)
        return NULL;
    v = cJSON_Parse(s);
    if (!v)
        warnf(w, "annotation %s: not JSON", key);
    return v;
}

int eq_spec_decode(const cJSON *obj, struct eq_spec *ret, char **ret_warn)
{
    const cJSON *meta = get(obj, "metadata"), *labels = get(meta, "labels");
    const cJSON *ann = get(meta, "annotations"), *spec = get(obj, "spec");
    const char *name = cJSON_GetStringValue(get(meta, "name"));
    const char *ns = cJSON_GetStringValue(get(meta, "namespace"));
    const char *parent = sched_label(labels, EQ_LABEL_PARENT);
    const char *tree = sched_label(labels, EQ_LABEL_TREE_ID);
    const char *s;
    struct strbuf w = STRBUF_INIT;
    cJSON *j;
    bool any = false;

    memset(ret, 0, sizeof(*ret));
    *ret_warn = NULL;
    if (!name || !*name)
        return -EINVAL;
    ret->name = xstrdup(name);
    ret->namespace = xstrdup(ns ? ns : "");
    ret->parent = xstrdup(parent && *parent ? parent : EQ_ROOT_QUOTA);
    ret->tree_id = xstrdup(tree ? tree : "");
    ret->is_parent = (s = sched_label(labels, EQ_LABEL_IS_PARENT)) && !strcmp(s, "true");
    ret->is_root = (s = sched_label(labels, EQ_LABEL_IS_ROOT)) && !strcmp(s, "true");
    /* Any value but "false" lends (elastic_quota.go IsAllowLentResource). */
    ret->allow_lent = !((s = sched_label(labels, EQ_LABEL_LENT)) && !strcmp(s, "false"));
    decode_res(get(spec, "min"), "spec.min", &ret->min, NULL, &w);
    decode_res(get(spec, "max"), "spec.max", &ret->max, &ret->max_mask, &w);
    if ((j = json_annotation(ann, EQ_ANN_WEIGHT, &w))) {
        decode_res(j, "annotation " EQ_ANN_WEIGHT, &ret->weight, NULL, &w);
        cJSON_Delete(j);
    }
    for (int i = 0; i < SCHED_RES_MAX; i++)
        any |= ret->weight.v[i] != 0;
    /* Missing, or all zero: the weight is max (elastic_quota.go GetSharedWeight). */
    if (!any)
        ret->weight = ret->max;
    if (ret->is_root && (j = json_annotation(ann, EQ_ANN_TOTAL, &w))) {
        decode_res(j, "annotation " EQ_ANN_TOTAL, &ret->total, NULL, &w);
        ret->has_total = true;
        cJSON_Delete(j);
    }
    if ((j = json_annotation(ann, EQ_ANN_NAMESPACES, &w))) {
        const cJSON *e;
        if (!cJSON_IsArray(j))
            warnf(&w, "annotation %s: not a JSON list of strings", EQ_ANN_NAMESPACES);
        const cJSON *list = cJSON_IsArray(j) ? j : NULL;
        cJSON_ArrayForEach(e, list)
        {
            if (!cJSON_IsString(e))
                continue;
            ret->namespaces =
                xrealloc(ret->namespaces, (ret->nnamespaces + 1) * sizeof(*ret->namespaces));
            ret->namespaces[ret->nnamespaces++] = xstrdup(e->valuestring);
        }
        cJSON_Delete(j);
    }
    if (w.len)
        *ret_warn = strbuf_detach(&w, NULL);
    strbuf_release(&w);
    return 0;
}

void eq_spec_release(struct eq_spec *s)
{
    if (!s)
        return;
    free(s->name);
    free(s->namespace);
    free(s->parent);
    free(s->tree_id);
    for (size_t i = 0; i < s->nnamespaces; i++)
        free(s->namespaces[i]);
    free(s->namespaces);
    memset(s, 0, sizeof(*s));
}

/* ---- the tree ---- */

struct eq_tree *eq_tree_new(void)
{
    struct eq_tree *t = xcalloc(1, sizeof(*t));

    hmap_init(&t->by_name);
    hmap_init(&t->by_ns);
    t->shape_dirty = true;
    return t;
}

static void quota_free(struct eq_quota *q)
{
    eq_spec_release(&q->spec);
    free(q->children);
    free(q);
}

void eq_tree_free(struct eq_tree *t)
{
    struct hmap_entry *e;
    size_t it;

    if (!t)
        return;
    for (e = hmap_first(&t->by_name, &it); e; e = hmap_next(&t->by_name, e, &it))
        quota_free(e->value);
    hmap_release(&t->by_name);
    hmap_release(&t->by_ns);
    free(t->order);
    free(t->own);
    free(t->shared);
    free(t->sums);
    free(t->special);
    free(t);
}

void eq_tree_put(struct eq_tree *t, struct eq_spec *spec)
{
    struct eq_quota *q = hmap_get(&t->by_name, spec->name);

    if (!q) {
        q = xcalloc(1, sizeof(*q));
        q->spec = *spec;
        (void)hmap_put(&t->by_name, q->spec.name, q);
    } else {
        eq_spec_release(&q->spec);
        q->spec = *spec;
    }
    memset(spec, 0, sizeof(*spec));
    t->ns_dirty = true;
    t->shape_dirty = true;
}

int eq_tree_del(struct eq_tree *t, const char *name)
{
    struct eq_quota *q = hmap_del(&t->by_name, name);

    if (!q)
        return -ENOENT;
    /* Children and parents may point at it until the next compute. */
    for (size_t i = 0; i < q->nchildren; i++)
        q->children[i]->parent = NULL;
    if (q->parent) {
        struct eq_quota *p = q->parent;
        for (size_t i = 0; i < p->nchildren; i++)
            if (p->children[i] == q)
                p->children[i] = p->children[--p->nchildren];
    }
    quota_free(q);
    t->ns_dirty = true;
    t->shape_dirty = true;
    return 0;
}

struct eq_quota *eq_tree_get(const struct eq_tree *t, const char *name)
{
    return hmap_get(&t->by_name, name);
}

static int cmp_quota(const void *a, const void *b)
{
    const struct eq_quota *x = *(struct eq_quota *const *)a, *y = *(struct eq_quota *const *)b;

    return strcmp(x->spec.name, y->spec.name);
}

size_t eq_tree_list(const struct eq_tree *t, struct eq_quota ***ret)
{
    struct hmap_entry *e;
    size_t it, n = 0;

    *ret = NULL;
    if (!t->by_name.n)
        return 0;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    *ret = xcalloc(t->by_name.n, sizeof(**ret));
    for (e = hmap_first(&t->by_name, &it); e; e = hmap_next(&t->by_name, e, &it))
        (*ret)[n++] = e->value;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
    qsort(*ret, n, sizeof(**ret), cmp_quota);
    return n;
}

static void build_ns_index(struct eq_tree *t)
{
    struct eq_quota **v;
    size_t n;

    hmap_release(&t->by_ns);
    hmap_init(&t->by_ns);
    /* In name order, so that two quotas claiming one namespace resolve the same way always
     * (the webhook refuses that; a standalone server may not have it). */
    n = eq_tree_list(t, &v);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < v[i]->spec.nnamespaces; k++)
            if (!hmap_get(&t->by_ns, v[i]->spec.namespaces[k]))
                (void)hmap_put(&t->by_ns, v[i]->spec.namespaces[k], v[i]->spec.name);
    free(v);
    t->ns_dirty = false;
}

const char *eq_tree_resolve(struct eq_tree *t, const cJSON *pod_labels, const char *ns)
{
    const char *name = sched_label(pod_labels, EQ_LABEL_POD_QUOTA);
    struct eq_quota *q;
    const char *by_ns;

    if (name && *name) {
        q = hmap_get(&t->by_name, name);
        return q ? q->spec.name : EQ_DEFAULT_QUOTA;
    }
    q = hmap_get(&t->by_name, ns);
    if (q && !strcmp(q->spec.namespace, ns))
        return q->spec.name;
    if (t->ns_dirty)
        build_ns_index(t);
    by_ns = hmap_get(&t->by_ns, ns);
    return by_ns ? by_ns : EQ_DEFAULT_QUOTA;
}

int eq_tree_charge(struct eq_tree *t, const char *name, const struct sched_res *req,
                   int request_sign, int used_sign)
{
    struct eq_quota *q = hmap_get(&t->by_name, name);

    if (!q)
        return -ENOENT;
    for (int i = 0; i < SCHED_RES_MAX; i++) {
        q->pod_request.v[i] += request_sign * req->v[i];
        q->pod_used.v[i] += used_sign * req->v[i];
    }
    return 0;
}

void eq_tree_set_total(struct eq_tree *t, const struct sched_res *total)
{
    t->total = *total;
}

/* ---- runtime ---- */

static bool is_special(const struct eq_quota *q)
{
    return !strcmp(q->spec.name, EQ_DEFAULT_QUOTA) || !strcmp(q->spec.name, EQ_SYSTEM_QUOTA);
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

void eq_share(size_t n, const int64_t *m, const int64_t *req, const int64_t *w, const bool *lent,
              const char *const *names, int64_t total, int64_t *rt)
{
    bool *borrow = xcalloc(n + 1, sizeof(*borrow));
    size_t *idx = xcalloc(n + 1, sizeof(*idx));
    i128 *rem = xcalloc(n + 1, sizeof(*rem));
    i128 rest = total;

    for (size_t i = 0; i < n; i++) {
        if (req[i] > m[i]) {
            rt[i] = m[i];
            borrow[i] = true;
        } else {
            rt[i] = lent[i] ? req[i] : m[i];
        }
        rest -= rt[i];
    }
    while (rest > 0) {
        i128 wsum = 0, given = 0, surplus = 0;
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
            /* A borrower with no weight stays at its min (runtime_quota_calculator.go). */
            if (borrow[i] && w[i] <= 0)
                borrow[i] = false;
            if (borrow[i]) {
                wsum += w[i];
                idx[k++] = i;
            }
        }
        if (!k)
            break;
        /* Largest remainder: floor shares, then one unit each to the largest remainders,
         * ties by name ascending. Products in 128 bits (weights may be MaxInt64/5). */
        for (size_t j = 0; j < k; j++) {
            i128 p = (i128)w[idx[j]] * rest;
            int64_t base = (int64_t)(p / wsum);
            rem[idx[j]] = p % wsum;
            rt[idx[j]] += base;
            given += base;
        }
        for (size_t a = 1; a < k; a++) {
            size_t x = idx[a], b = a;
            while (b > 0 &&
                   (rem[idx[b - 1]] < rem[x] ||
                    (rem[idx[b - 1]] == rem[x] && strcmp(names[idx[b - 1]], names[x]) > 0))) {
                idx[b] = idx[b - 1];
                b--;
            }
            idx[b] = x;
        }
        for (size_t j = 0; j < k && given < rest; j++, given++)
            rt[idx[j]]++;
        for (size_t j = 0; j < k; j++) {
            size_t i = idx[j];
            if (rt[i] >= req[i]) {
                surplus += rt[i] - req[i];
                rt[i] = req[i];
                borrow[i] = false;
            }
        }
        rest = surplus;
    }
    free(borrow);
    free(idx);
    free(rem);
}

/* request and used of q and below (post-order); depth guards against parent cycles. */
static void sum_up(struct eq_quota *q, int nres, int depth)
{
    q->request = q->pod_request;
    q->used = q->pod_used;
    if (depth > 64)
        return;
    for (size_t c = 0; c < q->nchildren; c++) {
        struct eq_quota *ch = q->children[c];
        sum_up(ch, nres, depth + 1);
        for (int i = 0; i < nres; i++) {
            q->request.v[i] += min64(ch->request.v[i], ch->spec.max.v[i]);
            q->used.v[i] += ch->used.v[i];
        }
    }
}

/* Runtime of the n quotas v sharing budget, then of their children, recursively. */
static void distribute(struct eq_quota **v, size_t n, const struct sched_res *budget,
                       bool scale_min, int depth)
{
    /* Siblings are few: their arrays on the stack, on the heap past that (every pod event
     * that charges a quota runs this). */
    enum { SMALL = 32 };
    int64_t m_s[SMALL], req_s[SMALL], w_s[SMALL], rt_s[SMALL];
    const char *names_s[SMALL];
    bool lent_s[SMALL];
    int64_t *m = m_s, *req = req_s, *w = w_s, *rt = rt_s;
    const char **names = names_s;
    bool *lent = lent_s;

    if (!n || depth > 64)
        return;
    if (n > SMALL) {
        m = xcalloc(n, sizeof(*m));
        req = xcalloc(n, sizeof(*req));
        w = xcalloc(n, sizeof(*w));
        rt = xcalloc(n, sizeof(*rt));
        lent = xcalloc(n, sizeof(*lent));
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        names = xcalloc(n, sizeof(*names));
    }
    for (size_t i = 0; i < n; i++) {
        names[i] = v[i]->spec.name;
        lent[i] = v[i]->spec.allow_lent;
    }
    /* Only the resource names in use: a recompute happens on every pod event. */
    for (int r = 0; r < sched_res_count() && r < SCHED_RES_MAX; r++) {
        i128 summin = 0;
        for (size_t i = 0; i < n; i++) {
            m[i] = v[i]->spec.min.v[r];
            summin += m[i];
        }
        /* Min auto-scaling: guarantees that do not fit the budget shrink in proportion. */
        if (scale_min && summin > budget->v[r] && summin > 0)
            for (size_t i = 0; i < n; i++)
                m[i] = budget->v[r] <= 0 ? 0 : (int64_t)((i128)budget->v[r] * m[i] / summin);
        for (size_t i = 0; i < n; i++) {
            v[i]->scaled_min.v[r] = m[i];
            req[i] = min64(v[i]->request.v[r], v[i]->spec.max.v[r]);
            w[i] = v[i]->spec.weight.v[r];
        }
        eq_share(n, m, req, w, lent, names, budget->v[r], rt);
        for (size_t i = 0; i < n; i++)
            v[i]->runtime.v[r] = rt[i];
    }
    for (size_t i = 0; i < n; i++)
        distribute(v[i]->children, v[i]->nchildren, &v[i]->runtime, scale_min, depth + 1);
    if (n > SMALL) {
        free(m);
        free(req);
        free(w);
        free(rt);
        free(lent);
        free((void *)names);
    }
}

/* The links and lists of the tree's shape (struct eq_tree), from the quotas' specs. */
static void rebuild_shape(struct eq_tree *t)
{
    struct eq_quota **v;
    size_t n;

    n = eq_tree_list(t, &v);
    free(t->order);
    free(t->own);
    free(t->shared);
    free(t->sums);
    free(t->special);
    t->order = v;
    t->norder = n;
    t->nown = t->nshared = t->nsums = t->nspecial = 0;
    /* NOLINTBEGIN(bugprone-sizeof-expression): arrays of pointers */
    t->own = xcalloc(n + 1, sizeof(*t->own));
    t->shared = xcalloc(n + 1, sizeof(*t->shared));
    t->sums = xcalloc(n + 1, sizeof(*t->sums));
    t->special = xcalloc(n + 1, sizeof(*t->special));
    /* NOLINTEND(bugprone-sizeof-expression) */
    for (size_t i = 0; i < n; i++) {
        free(v[i]->children);
        v[i]->children = NULL;
        v[i]->nchildren = 0;
        v[i]->parent = NULL;
        v[i]->has_runtime = !is_special(v[i]);
    }
    for (size_t i = 0; i < n; i++) {
        struct eq_quota *q = v[i], *p;
        if (is_special(q))
            continue;
        p = hmap_get(&t->by_name, q->spec.parent);
        if (!p || p == q || is_special(p) || q->spec.is_root) {
            /* Trees of their own (is-root with a total, from an ElasticQuotaProfile) take
             * that total and share it among their children; the others share the cluster. */
            if (q->spec.is_root && q->spec.has_total)
                t->own[t->nown++] = q;
            else
                t->shared[t->nshared++] = q;
            continue;
        }
        q->parent = p;
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
        p->children = xrealloc(p->children, (p->nchildren + 1) * sizeof(*p->children));
        p->children[p->nchildren++] = q; /* in name order, as v is */
    }
    for (size_t i = 0; i < n; i++) {
        if (is_special(v[i]))
            t->special[t->nspecial++] = v[i];
        if (is_special(v[i]) || !v[i]->parent || v[i]->spec.is_root)
            t->sums[t->nsums++] = v[i];
    }
    t->shape_dirty = false;
}

void eq_tree_compute(struct eq_tree *t, bool scale_min)
{
    struct sched_res budget = t->total;
    int nres = sched_res_count() < SCHED_RES_MAX ? sched_res_count() : SCHED_RES_MAX;
    struct eq_quota **v;
    size_t n;

    if (t->shape_dirty)
        rebuild_shape(t);
    v = t->order;
    n = t->norder;
    /* Resources past sched_res_count() are never named, hence 0 everywhere. */
    for (size_t i = 0; i < n; i++) {
        v[i]->request = v[i]->pod_request;
        v[i]->used = v[i]->pod_used;
        memset(&v[i]->runtime, 0, sizeof(v[i]->runtime));
        memset(&v[i]->scaled_min, 0, sizeof(v[i]->scaled_min));
    }
    for (size_t i = 0; i < t->nsums; i++)
        sum_up(t->sums[i], nres, 0);
    /* The default and system quotas' pods always fit: what they use is not shared. */
    for (size_t i = 0; i < t->nspecial; i++)
        for (int r = 0; r < nres; r++)
            budget.v[r] -= t->special[i]->used.v[r];
    for (int r = 0; r < nres; r++)
        if (budget.v[r] < 0)
            budget.v[r] = 0;
    for (size_t i = 0; i < t->nown; i++) {
        struct eq_quota *q = t->own[i];
        for (int r = 0; r < nres; r++)
            q->runtime.v[r] = q->spec.total.v[r];
        q->scaled_min = q->spec.min;
        distribute(q->children, q->nchildren, &q->runtime, scale_min, 1);
    }
    distribute(t->shared, t->nshared, &budget, scale_min, 0);
}

/* ---- rendering ---- */

static void res_value(int i, int64_t v, char buf[QUANTITY_STR_MAX])
{
    struct quantity q;

    if (i == SCHED_RES_CPU)
        quantity_from_milli(v, QUANTITY_DECIMAL_SI, &q);
    else
        quantity_from_int(v,
                          i == SCHED_RES_MEMORY || i == SCHED_RES_EPHEMERAL ? QUANTITY_BINARY_SI
                                                                            : QUANTITY_DECIMAL_SI,
                          &q);
    (void)quantity_format(&q, buf);
}

static int cmp_res_name(const void *a, const void *b)
{
    return strcmp(sched_res_name(*(const int *)a), sched_res_name(*(const int *)b));
}

/* The dimensions of mask in name order; the count. */
static int sorted_dims(uint64_t mask, int out[SCHED_RES_MAX])
{
    int n = 0;

    for (int i = 0; i < SCHED_RES_MAX && i < sched_res_count(); i++)
        if (mask & (UINT64_C(1) << i))
            out[n++] = i;
    qsort(out, (size_t)n, sizeof(*out), cmp_res_name);
    return n;
}

void eq_res_format(const struct sched_res *r, uint64_t mask, struct strbuf *out)
{
    int dims[SCHED_RES_MAX], n = sorted_dims(mask, dims);

    strbuf_addstr(out, "map[");
    for (int k = 0; k < n; k++) {
        char buf[QUANTITY_STR_MAX];
        res_value(dims[k], r->v[dims[k]], buf);
        strbuf_addf(out, "%s%s:%s", k ? " " : "", sched_res_name(dims[k]), buf);
    }
    strbuf_addch(out, ']');
}

cJSON *eq_res_json(const struct sched_res *r, uint64_t mask)
{
    int dims[SCHED_RES_MAX], n = sorted_dims(mask, dims);
    cJSON *o = cJSON_CreateObject();

    for (int k = 0; k < n; k++) {
        char buf[QUANTITY_STR_MAX];
        res_value(dims[k], r->v[dims[k]], buf);
        cJSON_AddStringToObject(o, sched_res_name(dims[k]), buf);
    }
    return o;
}
