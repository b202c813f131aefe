/*
 * The ElasticQuota admission of Koordinator's quota webhooks (manager-behaviour.md 6.2;
 * upstream pkg/webhook/elasticquota/{mutating,validating}, quota_topology*.go), for `koord
 * apiserver` run without koord-manager's webhook server. Upstream keeps the quota tree in
 * memory, fed by an informer; here the tree is read from the store on every write, under the
 * admit lock (admit_serialized()), so two writes cannot both pass a sum check the pair breaks.
 *
 * Refusals read as kube-apiserver words a webhook denial (kubernetes-api.md 7.3): HTTP 400,
 * `admission webhook "vquota.kb.io" denied the request: <upstream's message>`. Upstream's
 * messages are kept where known (they are what its users search for); the rules upstream added
 * later (tree ids, namespaces, strict max keys) use messages in the same style.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "apiserver/admit.h"
#include "apiserver/store.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"

#define EQ_PREFIX       "/scheduling.sigs.k8s.io/elasticquotas/"
#define POD_PREFIX      "/core/pods/"
#define MAX_QUOTAS      100000
#define LABEL_PREFIX    "quota.scheduling.koordinator.sh/"
#define L_PARENT        LABEL_PREFIX "parent"
#define L_IS_PARENT     LABEL_PREFIX "is-parent"
#define L_TREE_ID       LABEL_PREFIX "tree-id"
#define L_IS_ROOT       LABEL_PREFIX "is-root"
#define L_FORCE         LABEL_PREFIX "allow-force-update"
#define L_QUOTA_NAME    LABEL_PREFIX "name"
#define A_SHARED_WEIGHT LABEL_PREFIX "shared-weight"
#define A_NAMESPACES    LABEL_PREFIX "namespaces"
#define A_STRICT_KEYS   LABEL_PREFIX "max-strict-check-resource-keys"
#define MUTATING_NAME   "mquota.kb.io"
#define VALIDATING_NAME "vquota.kb.io"

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *meta_str(const cJSON *o, const char *k)
{
    const char *s = get_str(get(o, "metadata"), k);
    return s ? s : "";
}

static const char *label(const cJSON *o, const char *k)
{
    const char *s = get_str(get(get(o, "metadata"), "labels"), k);
    return s ? s : "";
}

static const char *annotation(const cJSON *o, const char *k)
{
    const char *s = get_str(get(get(o, "metadata"), "annotations"), k);
    return s ? s : "";
}

static const char *parent_of(const cJSON *q)
{
    const char *p = label(q, L_PARENT);
    return *p ? p : ADMIT_ROOT_QUOTA;
}

static bool is_parent(const cJSON *q)
{
    return !strcmp(label(q, L_IS_PARENT), "true");
}

static const cJSON *spec_list(const cJSON *q, const char *k)
{
    return get(get(q, "spec"), k);
}

/* Starts the denial; the caller appends upstream's message. */
static int deny(struct strbuf *why, const char *webhook, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int deny(struct strbuf *why, const char *webhook, const char *fmt, ...)
{
    va_list ap;

    strbuf_reset(why);
    strbuf_addf(why, "admission webhook \"%s\" denied the request: ", webhook);
    va_start(ap, fmt);
    strbuf_vaddf(why, fmt, ap);
    va_end(ap);
    return -EACCES;
}

/* ---- resource lists ---- */

/* Whether every key of a is in b. */
static bool keys_in(const cJSON *a, const cJSON *b)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, a)
    {
        if (!get(b, c->string))
            return false;
    }
    return true;
}

static bool quantity_of(const cJSON *v, struct quantity *ret)
{
    return cJSON_IsString(v) && quantity_parse(v->valuestring, ret) == 0;
}

/* The keys with a negative value, as Go prints a []ResourceName ("[cpu memory]"). */
static bool negatives(const cJSON *list, struct strbuf *out)
{
    const cJSON *c;
    struct quantity q;
    bool any = false;

    strbuf_addch(out, '[');
    cJSON_ArrayForEach(c, list)
    {
        if (quantity_of(c, &q) && quantity_sign(&q) < 0) {
            strbuf_addf(out, "%s%s", any ? " " : "", c->string);
            any = true;
        }
    }
    strbuf_addch(out, ']');
    return any;
}

/* A ResourceList as Go's %v prints a map: keys sorted, "map[cpu:1 memory:1Gi]". */
static void print_list(const cJSON *list, struct strbuf *out)
{
    const char *keys[64];
    size_t n = 0;
    const cJSON *c;

    cJSON_ArrayForEach(c, list)
    {
        if (n < ARRAY_SIZE(keys))
            keys[n++] = c->string;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            const char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    strbuf_addstr(out, "map[");
    for (size_t i = 0; i < n; i++) {
        const char *v = get_str(list, keys[i]);
        strbuf_addf(out, "%s%s:%s", i ? " " : "", keys[i], v ? v : "");
    }
    strbuf_addch(out, ']');
}

/* Adds list into the sum (an object of canonical quantity strings). Unparseable values are
 * left to validation and count as 0. */
static void sum_add(cJSON *sum, const cJSON *list)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, list)
    {
        struct quantity a = {0}, b;
        char buf[QUANTITY_STR_MAX];
        if (!quantity_of(c, &b))
            continue;
        (void)quantity_of(get(sum, c->string), &a);
        if (quantity_add(&a, &b) < 0)
            continue;
        (void)quantity_format(&a, buf);
        cJSON_DeleteItemFromObjectCaseSensitive(sum, c->string);
        CHECK(cJSON_AddStringToObject(sum, c->string, buf));
    }
}

/* Whether every entry of a is at most b's value for its key, a missing key of b counting as 0
 * (manager-behaviour.md 6.2). */
static bool list_le(const cJSON *a, const cJSON *b)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, a)
    {
        struct quantity x, y = {0};
        if (!quantity_of(c, &x))
            continue;
        (void)quantity_of(get(b, c->string), &y);
        if (quantity_cmp(&x, &y) > 0)
            return false;
    }
    return true;
}

/* ---- the other quotas and pods ---- */

struct quotas {
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

static int quotas_load(struct store *store, struct quotas *qs)
{
    return store_list(store, EQ_PREFIX, NULL, MAX_QUOTAS, note_quota, qs, NULL);
}

static void quotas_release(struct quotas *qs)
{
    for (size_t i = 0; i < qs->n; i++)
        cJSON_Delete(qs->v[i]);
    free(qs->v);
}

/* Quota names are unique cluster-wide (upstream indexes them by name only). */
static const cJSON *quota_named(const struct quotas *qs, const char *name)
{
    for (size_t i = 0; i < qs->n; i++)
        if (!strcmp(meta_str(qs->v[i], "name"), name))
            return qs->v[i];
    return NULL;
}

/* Whether the namespaces annotation (a JSON list) of q names ns. */
static bool binds_namespace(const cJSON *q, const char *ns)
{
    const char *a = annotation(q, A_NAMESPACES);
    cJSON *list = NULL, *c;
    bool found = false;

    if (!*a || json_parse(a, strlen(a), NULL, &list, NULL) < 0) {
        cJSON_Delete(list);
        return false;
    }
    cJSON_ArrayForEach(c, list)
    {
        found |= cJSON_IsString(c) && !strcmp(c->valuestring, ns);
    }
    cJSON_Delete(list);
    return found;
}

struct pod_count {
    const cJSON *quota;
    bool by_namespace; /* also pods of the quota-named or annotated namespaces */
    size_t n;
};

static int count_pod(const struct store_item *it, void *ud)
{
    struct pod_count *pc = ud;
    const char *name = meta_str(pc->quota, "name");
    cJSON *pod = NULL;

    if (json_parse(it->value, it->len, NULL, &pod, NULL) == 0) {
        const char *ns = meta_str(pod, "namespace"), *ql = label(pod, L_QUOTA_NAME);
        if (!strcmp(ql, name) ||
            (pc->by_namespace && (!strcmp(ns, name) || binds_namespace(pc->quota, ns))))
            pc->n++;
    }
    cJSON_Delete(pod);
    return pc->n ? 1 : 0;
}

static int pods_bound(struct store *store, const cJSON *q, bool by_namespace, bool *ret)
{
    struct pod_count pc = {q, by_namespace, 0};
    int r = store_list(store, POD_PREFIX, NULL, 0, count_pod, &pc, NULL);

    *ret = pc.n > 0;
    return r < 0 ? r : 0;
}

/* ---- the mutating webhook (CREATE) ---- */

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

static void set_str(cJSON *o, const char *k, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, k);
    CHECK(cJSON_AddStringToObject(o, k, v));
}

/* shared-weight: JSON of max when absent; when given, exactly max's keys (missing ones from
 * max, extra ones dropped). A value that does not parse is left for the validating checks. */
static void fill_shared_weight(cJSON *annots, const cJSON *max)
{
    const char *sw = get_str(annots, A_SHARED_WEIGHT);
    cJSON *w = NULL, *c, *next;
    struct strbuf out = STRBUF_INIT;

    if (sw && *sw) {
        if (json_parse(sw, strlen(sw), NULL, &w, NULL) < 0 || !cJSON_IsObject(w)) {
            cJSON_Delete(w);
            return;
        }
        for (c = w->child; c; c = next) {
            next = c->next;
            if (!get(max, c->string))
                cJSON_DeleteItemFromObjectCaseSensitive(w, c->string);
        }
        cJSON_ArrayForEach(c, max)
        {
            if (!get(w, c->string))
                CHECK(cJSON_AddItemToObject(w, c->string, cJSON_Duplicate(c, true)));
        }
    } else {
        w = cJSON_IsObject(max) ? cJSON_Duplicate(max, true) : cJSON_CreateObject();
        CHECK(w);
    }
    CHECK(json_print(w, &out) == 0);
    set_str(annots, A_SHARED_WEIGHT, out.buf);
    strbuf_release(&out);
    cJSON_Delete(w);
}

static int mutate(const struct quotas *qs, cJSON *q, struct strbuf *why)
{
    cJSON *meta = object_at(q, "metadata"), *labels, *annots;
    const char *parent, *tid;

    if (!strcmp(meta_str(q, "name"), ADMIT_ROOT_QUOTA))
        return 0;
    labels = object_at(meta, "labels");
    annots = object_at(meta, "annotations");
    parent = get_str(labels, L_PARENT);
    if (!parent || !*parent)
        set_str(labels, L_PARENT, ADMIT_ROOT_QUOTA);
    parent = get_str(labels, L_PARENT);
    tid = get_str(labels, L_TREE_ID);
    if ((!tid || !*tid) && strcmp(parent, ADMIT_ROOT_QUOTA)) {
        const cJSON *p = quota_named(qs, parent);
        if (!p)
            return deny(why, MUTATING_NAME, "parent not exist");
        if (*label(p, L_TREE_ID))
            set_str(labels, L_TREE_ID, label(p, L_TREE_ID));
    }
    fill_shared_weight(annots, spec_list(q, "max"));
    return 0;
}

/* ---- the validating webhook ---- */

/* Upstream's validateQuotaSelfItem() plus the strict max keys. */
static int check_self(const cJSON *q, struct strbuf *why)
{
    const char *name = meta_str(q, "name"), *sw = annotation(q, A_SHARED_WEIGHT);
    const char *strict = annotation(q, A_STRICT_KEYS);
    const cJSON *min = spec_list(q, "min"), *max = spec_list(q, "max"), *c;
    struct strbuf b = STRBUF_INIT, b2 = STRBUF_INIT;
    int r = 0;

    if (negatives(max, &b)) {
        r = deny(why, VALIDATING_NAME, "%s quota.Spec.Max's value < 0, in dimensions :%s", name,
                 b.buf);
        goto out;
    }
    strbuf_reset(&b);
    if (negatives(min, &b)) {
        r = deny(why, VALIDATING_NAME, "%s quota.Spec.Min's value < 0, in dimensions :%s", name,
                 b.buf);
        goto out;
    }
    if (*sw) {
        cJSON *w = NULL;
        if (json_parse(sw, strlen(sw), NULL, &w, NULL) < 0 || !cJSON_IsObject(w)) {
            r = deny(why, VALIDATING_NAME, "%s quota.Annotation[%s] is not a valid ResourceList",
                     name, A_SHARED_WEIGHT);
            cJSON_Delete(w);
            goto out;
        }
        strbuf_reset(&b);
        if (negatives(w, &b))
            r = deny(why, VALIDATING_NAME, "%s quota.Annotation[%s]'s value < 0, in dimension :%s",
                     name, A_SHARED_WEIGHT, b.buf);
        cJSON_Delete(w);
        if (r < 0)
            goto out;
    }
    cJSON_ArrayForEach(c, min)
    {
        struct quantity a, m;
        const cJSON *mx = get(max, c->string);
        if (!quantity_of(c, &a))
            continue;
        if (!mx || (quantity_of(mx, &m) && quantity_cmp(&m, &a) < 0)) {
            strbuf_reset(&b);
            print_list(min, &b);
            print_list(max, &b2);
            r = deny(why, VALIDATING_NAME, "%s min :%s > max,%s", name, b.buf, b2.buf);
            goto out;
        }
    }
    if (*strict) {
        cJSON *keys = NULL;
        const cJSON *used = get(get(q, "status"), "used");
        if (json_parse(strict, strlen(strict), NULL, &keys, NULL) == 0) {
            cJSON_ArrayForEach(c, keys)
            {
                const cJSON *u = cJSON_IsString(c) ? get(used, c->valuestring) : NULL, *mx;
                struct quantity uq, mq;
                if (!u || !quantity_of(u, &uq))
                    continue;
                mx = get(max, c->valuestring);
                if (!mx || (quantity_of(mx, &mq) && quantity_cmp(&mq, &uq) < 0)) {
                    r = deny(why, VALIDATING_NAME,
                             "%s quota.Spec.Max[%s] %s < quota.Status.Used[%s] %s, strictly "
                             "checked by %s",
                             name, c->valuestring,
                             mx && get_str(max, c->valuestring) ? get_str(max, c->valuestring)
                                                                : "<none>",
                             c->valuestring, u->valuestring, A_STRICT_KEYS);
                    break;
                }
            }
        }
        cJSON_Delete(keys);
    }
out:
    strbuf_release(&b);
    strbuf_release(&b2);
    return r;
}

/* A namespace may be bound to one quota only. */
static int check_namespaces(const struct quotas *qs, const cJSON *q, struct strbuf *why)
{
    const char *a = annotation(q, A_NAMESPACES), *name = meta_str(q, "name");
    cJSON *list = NULL, *c;
    int r = 0;

    if (!*a)
        return 0;
    if (json_parse(a, strlen(a), NULL, &list, NULL) < 0 || !cJSON_IsArray(list)) {
        cJSON_Delete(list);
        return deny(why, VALIDATING_NAME, "%s annotation %s is not a JSON list of namespaces", name,
                    A_NAMESPACES);
    }
    cJSON_ArrayForEach(c, list)
    {
        if (!cJSON_IsString(c))
            continue;
        for (size_t i = 0; i < qs->n && r == 0; i++) {
            const char *other = meta_str(qs->v[i], "name");
            if (strcmp(other, name) && binds_namespace(qs->v[i], c->valuestring))
                r = deny(why, VALIDATING_NAME, "namespace %s is already bound to quota %s",
                         c->valuestring, other);
        }
        if (r < 0)
            break;
    }
    cJSON_Delete(list);
    return r;
}

/* Upstream's validateQuotaTopology() at koordinator HEAD (manager-behaviour.md 6.2). old is the
 * stored quota on update, NULL on create; qs holds the stored quotas (old among them). */
static int check_topology(struct store *store, const struct quotas *qs, const cJSON *old,
                          const cJSON *q, struct strbuf *why)
{
    const char *name = meta_str(q, "name"), *parent = parent_of(q), *tid = label(q, L_TREE_ID);
    const bool to_root = !strcmp(parent, ADMIT_ROOT_QUOTA);
    const cJSON *p = to_root ? NULL : quota_named(qs, parent);
    const cJSON *min = spec_list(q, "min"), *max = spec_list(q, "max");
    cJSON *sum = NULL;
    bool has_children = false;
    int r = 0;

    if (!strcmp(name, ADMIT_ROOT_QUOTA))
        return 0;
    for (size_t i = 0; i < qs->n; i++)
        has_children |=
            strcmp(meta_str(qs->v[i], "name"), name) != 0 && !strcmp(parent_of(qs->v[i]), name);
    if (old && is_parent(old) && !is_parent(q) && has_children)
        return deny(why, VALIDATING_NAME,
                    "IsParent is forbidden modify now, quotaName:%s has child quotas", name);
    if (old && !is_parent(old) && is_parent(q)) {
        bool bound;
        if ((r = pods_bound(store, q, true, &bound)) < 0)
            return r;
        if (bound)
            return deny(why, VALIDATING_NAME,
                        "IsParent is forbidden modify now, quotaName:%s has bound pods", name);
    }
    if (old && strcmp(label(old, L_TREE_ID), tid))
        return deny(why, VALIDATING_NAME, "TreeID is forbidden modify now, quotaName:%s", name);
    if (p && strcmp(label(p, L_TREE_ID), tid))
        return deny(why, VALIDATING_NAME,
                    "%s has tree id \"%s\" but its parent %s has tree id \"%s\"", name, tid, parent,
                    label(p, L_TREE_ID));
    for (size_t i = 0; i < qs->n; i++) {
        const cJSON *c = qs->v[i];
        if (strcmp(meta_str(c, "name"), name) && !strcmp(parent_of(c), name) &&
            strcmp(label(c, L_TREE_ID), tid))
            return deny(why, VALIDATING_NAME,
                        "%s has tree id \"%s\" but its child %s has tree id \"%s\"", name, tid,
                        meta_str(c, "name"), label(c, L_TREE_ID));
    }
    if (to_root && !is_parent(q))
        return 0;
    if (!to_root) {
        if (!p)
            return deny(why, VALIDATING_NAME,
                        "%s has parentName %s but not find parentInfo in quotaInfoMap", name,
                        parent);
        if (!is_parent(p))
            return deny(why, VALIDATING_NAME,
                        "%s has parentName %s but the parentQuotaInfo's IsParent is false", name,
                        parent);
        if (!keys_in(max, spec_list(p, "max")) || !keys_in(spec_list(p, "max"), max))
            return deny(why, VALIDATING_NAME,
                        "checkSubAndParentGroupMaxQuotaKeySame failed: %s's key is not the same "
                        "with %s",
                        parent, name);
        if (!keys_in(min, spec_list(p, "min")))
            return deny(why, VALIDATING_NAME,
                        "checkSubAndParentGroupMinQuotaKey failed: %s's min key is not included "
                        "in %s's",
                        name, parent);
    }
    for (size_t i = 0; i < qs->n; i++) {
        const cJSON *c = qs->v[i], *cm = spec_list(c, "max");
        if (strcmp(meta_str(c, "name"), name) && !strcmp(parent_of(c), name) &&
            (!keys_in(max, cm) || !keys_in(cm, max)))
            return deny(why, VALIDATING_NAME,
                        "checkSubAndParentGroupMaxQuotaKeySame failed: %s's key is not the same "
                        "with %s",
                        name, meta_str(c, "name"));
    }
    if (!strcmp(label(q, L_FORCE), "true") || !strcmp(label(q, L_IS_ROOT), "true"))
        return 0;
    if (!to_root) {
        sum = cJSON_CreateObject();
        CHECK(sum);
        sum_add(sum, min);
        for (size_t i = 0; i < qs->n; i++)
            if (strcmp(meta_str(qs->v[i], "name"), name) && !strcmp(parent_of(qs->v[i]), parent))
                sum_add(sum, spec_list(qs->v[i], "min"));
        if (!list_le(sum, spec_list(p, "min")))
            r = deny(why, VALIDATING_NAME,
                     "checkMinQuotaSum allChildren SumMinQuota > parentMinQuota, parent: %s",
                     parent);
        cJSON_Delete(sum);
        if (r < 0)
            return r;
    }
    if (has_children) {
        sum = cJSON_CreateObject();
        CHECK(sum);
        for (size_t i = 0; i < qs->n; i++)
            if (strcmp(meta_str(qs->v[i], "name"), name) && !strcmp(parent_of(qs->v[i]), name))
                sum_add(sum, spec_list(qs->v[i], "min"));
        if (!list_le(sum, min))
            r = deny(why, VALIDATING_NAME,
                     "checkMinQuotaSum allChildrn SumMinQuota > MinQuota, parent: %s", name);
        cJSON_Delete(sum);
    }
    return r;
}

int admit_quota_create(struct store *store, cJSON *q, struct strbuf *why)
{
    struct quotas qs = {0};
    const char *name;
    int r;

    if ((r = quotas_load(store, &qs)) < 0)
        goto out;
    if ((r = mutate(&qs, q, why)) < 0)
        goto out;
    name = meta_str(q, "name");
    if (quota_named(&qs, name)) {
        r = deny(why, VALIDATING_NAME, "AddQuota quota already exist:%s", name);
        goto out;
    }
    if ((r = check_namespaces(&qs, q, why)) < 0 || (r = check_self(q, why)) < 0)
        goto out;
    r = check_topology(store, &qs, NULL, q, why);
out:
    quotas_release(&qs);
    return r;
}

/* Upstream lets an update through unchecked unless it touches the tree: the parent, is-parent
 * and tree-id labels, the namespaces annotation or the spec. */
static bool touches_tree(const cJSON *old, const cJSON *q)
{
    static const char *const labels[] = {L_PARENT, L_IS_PARENT, L_TREE_ID};

    for (size_t i = 0; i < ARRAY_SIZE(labels); i++)
        if (strcmp(label(old, labels[i]), label(q, labels[i])))
            return true;
    if (strcmp(annotation(old, A_NAMESPACES), annotation(q, A_NAMESPACES)))
        return true;
    if (!get(old, "spec") && !get(q, "spec"))
        return false;
    return !(get(old, "spec") && get(q, "spec") &&
             json_value_equal(get(old, "spec"), get(q, "spec")));
}

int admit_quota_update(struct store *store, const cJSON *old, cJSON *q, struct strbuf *why)
{
    struct quotas qs = {0};
    const char *name = meta_str(q, "name");
    int r;

    if (!touches_tree(old, q))
        return 0;
    if (!strcmp(name, ADMIT_SYSTEM_QUOTA) || !strcmp(name, ADMIT_ROOT_QUOTA))
        return deny(why, VALIDATING_NAME, "invalid quota %s", name);
    if ((r = quotas_load(store, &qs)) < 0)
        goto out;
    if ((r = check_namespaces(&qs, q, why)) < 0 || (r = check_self(q, why)) < 0)
        goto out;
    r = check_topology(store, &qs, old, q, why);
out:
    quotas_release(&qs);
    return r;
}

int admit_quota_delete(struct store *store, const cJSON *q, struct strbuf *why)
{
    struct quotas qs = {0};
    const char *name = meta_str(q, "name");
    bool bound = false;
    int r;

    if (!strcmp(name, ADMIT_SYSTEM_QUOTA) || !strcmp(name, ADMIT_ROOT_QUOTA) ||
        !strcmp(name, ADMIT_DEFAULT_QUOTA))
        return deny(why, VALIDATING_NAME, "can not delete quotaGroup :%s", name);
    if ((r = quotas_load(store, &qs)) < 0)
        goto out;
    for (size_t i = 0; i < qs.n; i++)
        if (strcmp(meta_str(qs.v[i], "name"), name) && !strcmp(parent_of(qs.v[i]), name)) {
            r = deny(why, VALIDATING_NAME, "delete quota failed, quota%s has child quota", name);
            goto out;
        }
    if ((r = pods_bound(store, q, false, &bound)) < 0)
        goto out;
    if (bound)
        r = deny(why, VALIDATING_NAME, "delete quota failed:%s, has linked pods", name);
out:
    quotas_release(&qs);
    return r;
}
