/*
 * The ElasticQuota admission rules of Koordinator's quota webhooks (manager-behaviour.md 6.2;
 * upstream pkg/webhook/elasticquota/{mutating,validating}, quota_topology*.go), as pure
 * functions over the quota tree a caller hands in (elasticquota.h says why they live here).
 * Upstream's messages are kept where known (they are what its users search for); the rules
 * upstream added later (tree ids, namespaces, strict max keys) use messages in the same style.
 */
#include "api/elasticquota.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "base/base.h"
#include "codec/codec.h"
#include "codec/patch.h"

#define LABEL_PREFIX    "quota.scheduling.koordinator.sh/"
#define L_PARENT        LABEL_PREFIX "parent"
#define L_IS_PARENT     LABEL_PREFIX "is-parent"
#define L_TREE_ID       LABEL_PREFIX "tree-id"
#define L_IS_ROOT       LABEL_PREFIX "is-root"
#define L_FORCE         LABEL_PREFIX "allow-force-update"
#define L_QUOTA_NAME    LABEL_PREFIX "name"
#define L_PREEMPTIBLE   LABEL_PREFIX "preemptible"
#define A_SHARED_WEIGHT LABEL_PREFIX "shared-weight"
#define A_NAMESPACES    LABEL_PREFIX "namespaces"
#define A_STRICT_KEYS   LABEL_PREFIX "max-strict-check-resource-keys"

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
    return *p ? p : API_QUOTA_ROOT;
}

static bool is_parent(const cJSON *q)
{
    return !strcmp(label(q, L_IS_PARENT), "true");
}

static const cJSON *spec_list(const cJSON *q, const char *k)
{
    return get(get(q, "spec"), k);
}

/* Writes upstream's message into why. */
static int deny(struct strbuf *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int deny(struct strbuf *why, const char *fmt, ...)
{
    va_list ap;

    strbuf_reset(why);
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

/* Quota names are unique cluster-wide (upstream indexes them by name only). */
static const cJSON *quota_named(const struct api_quota_lookup *qs, const char *name)
{
    for (size_t i = 0; i < qs->n; i++)
        if (!strcmp(meta_str(qs->quotas[i], "name"), name))
            return qs->quotas[i];
    return NULL;
}

bool api_quota_binds_namespace(const cJSON *q, const char *ns)
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

bool api_quota_pod_bound(const cJSON *q, const cJSON *pod, bool by_namespace)
{
    const char *name = meta_str(q, "name"), *ns = meta_str(pod, "namespace");

    return !strcmp(label(pod, L_QUOTA_NAME), name) ||
           (by_namespace && (!strcmp(ns, name) || api_quota_binds_namespace(q, ns)));
}

static int pods_bound(const struct api_quota_lookup *qs, const cJSON *q, bool by_namespace,
                      bool *ret)
{
    *ret = false;
    return qs->pods_bound ? qs->pods_bound(qs->userdata, q, by_namespace, ret) : 0;
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

int api_quota_mutate(const struct api_quota_lookup *qs, cJSON *q, struct strbuf *why)
{
    cJSON *meta = object_at(q, "metadata"), *labels, *annots;
    const char *parent, *tid;

    if (!strcmp(meta_str(q, "name"), API_QUOTA_ROOT))
        return 0;
    labels = object_at(meta, "labels");
    annots = object_at(meta, "annotations");
    parent = get_str(labels, L_PARENT);
    if (!parent || !*parent)
        set_str(labels, L_PARENT, API_QUOTA_ROOT);
    parent = get_str(labels, L_PARENT);
    tid = get_str(labels, L_TREE_ID);
    if ((!tid || !*tid) && strcmp(parent, API_QUOTA_ROOT)) {
        const cJSON *p = quota_named(qs, parent);
        if (!p)
            return deny(why, "parent not exist");
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
        r = deny(why, "%s quota.Spec.Max's value < 0, in dimensions :%s", name, b.buf);
        goto out;
    }
    strbuf_reset(&b);
    if (negatives(min, &b)) {
        r = deny(why, "%s quota.Spec.Min's value < 0, in dimensions :%s", name, b.buf);
        goto out;
    }
    if (*sw) {
        cJSON *w = NULL;
        if (json_parse(sw, strlen(sw), NULL, &w, NULL) < 0 || !cJSON_IsObject(w)) {
            r = deny(why, "%s quota.Annotation[%s] is not a valid ResourceList", name,
                     A_SHARED_WEIGHT);
            cJSON_Delete(w);
            goto out;
        }
        strbuf_reset(&b);
        if (negatives(w, &b))
            r = deny(why, "%s quota.Annotation[%s]'s value < 0, in dimension :%s", name,
                     A_SHARED_WEIGHT, b.buf);
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
            r = deny(why, "%s min :%s > max,%s", name, b.buf, b2.buf);
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
                    r = deny(why,
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
static int check_namespaces(const struct api_quota_lookup *qs, const cJSON *q, struct strbuf *why)
{
    const char *a = annotation(q, A_NAMESPACES), *name = meta_str(q, "name");
    cJSON *list = NULL, *c;
    int r = 0;

    if (!*a)
        return 0;
    if (json_parse(a, strlen(a), NULL, &list, NULL) < 0 || !cJSON_IsArray(list)) {
        cJSON_Delete(list);
        return deny(why, "%s annotation %s is not a JSON list of namespaces", name, A_NAMESPACES);
    }
    cJSON_ArrayForEach(c, list)
    {
        if (!cJSON_IsString(c))
            continue;
        for (size_t i = 0; i < qs->n && r == 0; i++) {
            const char *other = meta_str(qs->quotas[i], "name");
            if (strcmp(other, name) && api_quota_binds_namespace(qs->quotas[i], c->valuestring))
                r = deny(why, "namespace %s is already bound to quota %s", c->valuestring, other);
        }
        if (r < 0)
            break;
    }
    cJSON_Delete(list);
    return r;
}

/* Upstream's validateQuotaTopology() at koordinator HEAD (manager-behaviour.md 6.2). old is the
 * stored quota on update, NULL on create; qs holds the stored quotas (old among them). */
static int check_topology(const struct api_quota_lookup *qs, const cJSON *old, const cJSON *q,
                          struct strbuf *why)
{
    const char *name = meta_str(q, "name"), *parent = parent_of(q), *tid = label(q, L_TREE_ID);
    const bool to_root = !strcmp(parent, API_QUOTA_ROOT);
    const cJSON *p = to_root ? NULL : quota_named(qs, parent);
    const cJSON *min = spec_list(q, "min"), *max = spec_list(q, "max");
    cJSON *sum = NULL;
    bool has_children = false;
    int r = 0;

    if (!strcmp(name, API_QUOTA_ROOT))
        return 0;
    for (size_t i = 0; i < qs->n; i++)
        has_children |= strcmp(meta_str(qs->quotas[i], "name"), name) != 0 &&
                        !strcmp(parent_of(qs->quotas[i]), name);
    if (old && is_parent(old) && !is_parent(q) && has_children)
        return deny(why, "IsParent is forbidden modify now, quotaName:%s has child quotas", name);
    if (old && !is_parent(old) && is_parent(q)) {
        bool bound;
        if ((r = pods_bound(qs, q, true, &bound)) < 0)
            return r;
        if (bound)
            return deny(why, "IsParent is forbidden modify now, quotaName:%s has bound pods", name);
    }
    if (old && strcmp(label(old, L_TREE_ID), tid))
        return deny(why, "TreeID is forbidden modify now, quotaName:%s", name);
    if (p && strcmp(label(p, L_TREE_ID), tid))
        return deny(why, "%s has tree id \"%s\" but its parent %s has tree id \"%s\"", name, tid,
                    parent, label(p, L_TREE_ID));
    for (size_t i = 0; i < qs->n; i++) {
        const cJSON *c = qs->quotas[i];
        if (strcmp(meta_str(c, "name"), name) && !strcmp(parent_of(c), name) &&
            strcmp(label(c, L_TREE_ID), tid))
            return deny(why, "%s has tree id \"%s\" but its child %s has tree id \"%s\"", name, tid,
                        meta_str(c, "name"), label(c, L_TREE_ID));
    }
    if (to_root && !is_parent(q))
        return 0;
    if (!to_root) {
        if (!p)
            return deny(why, "%s has parentName %s but not find parentInfo in quotaInfoMap", name,
                        parent);
        if (!is_parent(p))
            return deny(why, "%s has parentName %s but the parentQuotaInfo's IsParent is false",
                        name, parent);
        if (!keys_in(max, spec_list(p, "max")) || !keys_in(spec_list(p, "max"), max))
            return deny(why,
                        "checkSubAndParentGroupMaxQuotaKeySame failed: %s's key is not the same "
                        "with %s",
                        parent, name);
        if (!keys_in(min, spec_list(p, "min")))
            return deny(why,
                        "checkSubAndParentGroupMinQuotaKey failed: %s's min key is not included "
                        "in %s's",
                        name, parent);
    }
    for (size_t i = 0; i < qs->n; i++) {
        const cJSON *c = qs->quotas[i], *cm = spec_list(c, "max");
        if (strcmp(meta_str(c, "name"), name) && !strcmp(parent_of(c), name) &&
            (!keys_in(max, cm) || !keys_in(cm, max)))
            return deny(why,
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
            if (strcmp(meta_str(qs->quotas[i], "name"), name) &&
                !strcmp(parent_of(qs->quotas[i]), parent))
                sum_add(sum, spec_list(qs->quotas[i], "min"));
        if (!list_le(sum, spec_list(p, "min")))
            r = deny(why, "checkMinQuotaSum allChildren SumMinQuota > parentMinQuota, parent: %s",
                     parent);
        cJSON_Delete(sum);
        if (r < 0)
            return r;
    }
    if (has_children) {
        sum = cJSON_CreateObject();
        CHECK(sum);
        for (size_t i = 0; i < qs->n; i++)
            if (strcmp(meta_str(qs->quotas[i], "name"), name) &&
                !strcmp(parent_of(qs->quotas[i]), name))
                sum_add(sum, spec_list(qs->quotas[i], "min"));
        if (!list_le(sum, min))
            r = deny(why, "checkMinQuotaSum allChildrn SumMinQuota > MinQuota, parent: %s", name);
        cJSON_Delete(sum);
    }
    return r;
}

int api_quota_validate_create(const struct api_quota_lookup *qs, const cJSON *q, struct strbuf *why)
{
    const char *name = meta_str(q, "name");
    int r;

    if (quota_named(qs, name))
        return deny(why, "AddQuota quota already exist:%s", name);
    if ((r = check_namespaces(qs, q, why)) < 0 || (r = check_self(q, why)) < 0)
        return r;
    return check_topology(qs, NULL, q, why);
}

/* Upstream lets an update through unchecked unless it touches the tree: the parent, is-parent
 * and tree-id labels, the namespaces annotation or the spec. */
bool api_quota_touches_tree(const cJSON *old, const cJSON *q)
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

int api_quota_validate_update(const struct api_quota_lookup *qs, const cJSON *old, const cJSON *q,
                              bool need_known, struct strbuf *why)
{
    const char *name = meta_str(q, "name");
    int r;

    if (!api_quota_touches_tree(old, q))
        return 0;
    if (!strcmp(name, API_QUOTA_SYSTEM) || !strcmp(name, API_QUOTA_ROOT))
        return deny(why, "invalid quota %s", name);
    if (need_known && !quota_named(qs, name))
        return deny(why, "UpdateQuota quota not exist in quotaInfoMap:%s", name);
    if ((r = check_namespaces(qs, q, why)) < 0 || (r = check_self(q, why)) < 0)
        return r;
    return check_topology(qs, old, q, why);
}

int api_quota_validate_delete(const struct api_quota_lookup *qs, const cJSON *q, bool need_known,
                              struct strbuf *why)
{
    const char *name = meta_str(q, "name");
    bool bound = false;
    int r;

    if (!strcmp(name, API_QUOTA_SYSTEM) || !strcmp(name, API_QUOTA_ROOT) ||
        !strcmp(name, API_QUOTA_DEFAULT))
        return deny(why, "can not delete quotaGroup :%s", name);
    if (need_known && !quota_named(qs, name))
        return deny(why, "delete quota not exist in quotaInfoMap:%s", name);
    for (size_t i = 0; i < qs->n; i++)
        if (strcmp(meta_str(qs->quotas[i], "name"), name) &&
            !strcmp(parent_of(qs->quotas[i]), name))
            return deny(why, "delete quota failed, quota%s has child quota", name);
    if ((r = pods_bound(qs, q, false, &bound)) < 0)
        return r;
    if (bound)
        return deny(why, "delete quota failed:%s, has linked pods", name);
    return 0;
}

const char *api_quota_of_pod(const struct api_quota_lookup *qs, const cJSON *pod)
{
    const char *ns = meta_str(pod, "namespace"), *l = label(pod, L_QUOTA_NAME);

    if (*l)
        return l;
    for (size_t i = 0; i < qs->n; i++)
        if (!strcmp(meta_str(qs->quotas[i], "name"), ns) &&
            !strcmp(meta_str(qs->quotas[i], "namespace"), ns))
            return ns;
    for (size_t i = 0; i < qs->n; i++)
        if (api_quota_binds_namespace(qs->quotas[i], ns))
            return meta_str(qs->quotas[i], "name");
    return API_QUOTA_DEFAULT;
}

int api_quota_validate_pod(const struct api_quota_lookup *qs, const cJSON *old, const cJSON *pod,
                           struct strbuf *why)
{
    const char *name;
    const cJSON *q;

    if (old) {
        if (strcmp(label(old, L_PREEMPTIBLE), label(pod, L_PREEMPTIBLE)))
            return deny(why, "%s label is forbidden to modify", L_PREEMPTIBLE);
        return 0;
    }
    name = api_quota_of_pod(qs, pod);
    q = quota_named(qs, name);
    if (q && is_parent(q))
        return deny(why, "pod can not be linked to a parentQuotaGroup %s", name);
    return 0;
}
