/*
 * The served-resource registry and its discovery documents (see registry.h). Entries are
 * refcounted; the registry's own reference goes when a CRD is removed or replaced, the
 * request's when it finishes.
 */
#include "apiserver/registry.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/crd.h"
#include "api/openapi.h"
#include "apiserver/reviews.h"
#include "apiserver/table.h"
#include "base/base.h"
#include "base/strbuf.h"

struct entry {
    struct api_resource res; /* first: entries are reached through &res */
    atomic_int refs;
    bool owned;  /* strings and arrays below belong to the entry (CRDs) */
    char **strs; /* every owned string and array, freed together */
    size_t nstrs;
    struct api_schema_tree *tree; /* CRD description */
};

struct api_registry {
    pthread_rwlock_t lock;
    struct entry **v;
    size_t n, alloc;
    atomic_ulong generation; /* api_registry_generation() */
};

static const char *const verbs_all[] = {
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch", NULL};
static const char *const verbs_status[] = {"get", "patch", "update", NULL};
static const char *const verbs_create[] = {"create", NULL};
static const char *const verbs_update[] = {"update", NULL}; /* namespaces/finalize */
static const char *const verbs_read[] = {"get", "list", "watch", NULL};

/* Subresources of built-in kinds beyond status (requestinfo.go, registry/core). */
static const struct {
    const char *plural;
    const char *const *subresources;
} builtin_subresources[] = {
    {"pods", (const char *const[]){"status", "binding", "eviction", NULL}},
    {"namespaces", (const char *const[]){"status", "finalize", NULL}},
    {"nodes", (const char *const[]){"status", NULL}},
    {"serviceaccounts", (const char *const[]){"token", NULL}},
};

static const char *const status_only[] = {"status", NULL};
static const char *const status_scale[] = {"status", "scale", NULL};
static const char *const scale_only[] = {"scale", NULL};
static const char *const category_all[] = {"all", NULL};
static const char *const category_api_extensions[] = {"api-extensions", NULL};

/* The built-in resources of `kubectl get all` (their storages' Categories()). */
static const struct {
    const char *group, *plural;
} category_all_members[] = {
    {"", "pods"},
    {"apps", "deployments"},
    {"apps", "replicasets"},
    {"apps", "statefulsets"},
    {"apps", "daemonsets"},
    {"batch", "jobs"},
    {"batch", "cronjobs"},
};

static char *own(struct entry *e, char *s)
{
    e->strs = xrealloc(e->strs, (e->nstrs + 1) * sizeof(char *));
    e->strs[e->nstrs++] = s;
    return s;
}

static void entry_free(struct entry *e)
{
    for (size_t i = 0; i < e->nstrs; i++)
        free(e->strs[i]);
    free(e->strs);
    api_schema_tree_free(e->tree);
    free(e);
}

const struct api_resource *api_resource_ref(const struct api_resource *res)
{
    atomic_fetch_add(&((struct entry *)res)->refs, 1);
    return res;
}

const struct api_resource *api_resource_unref(const struct api_resource *res)
{
    struct entry *e = (struct entry *)res;

    if (e && atomic_fetch_sub(&e->refs, 1) == 1)
        entry_free(e);
    return NULL;
}

static void append(struct api_registry *r, struct entry *e)
{
    if (r->n == r->alloc) {
        r->alloc = r->alloc ? r->alloc * 2 : 16;
        r->v = xrealloc(r->v, r->alloc * sizeof(struct entry *));
    }
    r->v[r->n++] = e;
}

/* Serves one built-in kind. */
static void add_kind(struct api_registry *r, const struct api_kind *k)
{
    struct entry *e = xcalloc(1, sizeof(*e));
    char *singular;

    atomic_init(&e->refs, 1);
    singular = own(e, xstrdup(k->kind));
    for (char *p = singular; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    e->res = (struct api_resource){
        .group = k->group,
        .version = k->version,
        .plural = k->plural,
        .singular = singular,
        .kind = k->kind,
        .short_names = k->short_names,
        .namespaced = k->namespaced,
        .builtin = k,
        .schema = api_kind_schema(k),
        .subresources = k->status_subresource ? status_only : NULL,
        .read_only = k->aggregated,
    };
    for (size_t i = 0; i < ARRAY_SIZE(builtin_subresources); i++)
        if (!strcmp(builtin_subresources[i].plural, k->plural))
            e->res.subresources = builtin_subresources[i].subresources;
    if (k->scale_subresource) {
        /* autoscaling/v1 Scale of apps/v1 workloads: replicas, and the selector as a string
         * (the path names the LabelSelector object; scale_of formats it). */
        e->res.subresources = k->status_subresource ? status_scale : scale_only;
        e->res.scale_spec_path = ".spec.replicas";
        e->res.scale_status_path = ".status.replicas";
        e->res.scale_selector_path = ".spec.selector";
    }
    for (size_t i = 0; i < ARRAY_SIZE(category_all_members); i++)
        if (!strcmp(k->group, category_all_members[i].group) &&
            !strcmp(k->plural, category_all_members[i].plural))
            e->res.categories = category_all;
    if (!strcmp(k->plural, "apiservices"))
        e->res.categories = category_api_extensions;
    append(r, e);
}

static struct api_registry *registry_alloc(void)
{
    struct api_registry *r = xcalloc(1, sizeof(*r));

    CHECK(pthread_rwlock_init(&r->lock, NULL) == 0);
    atomic_init(&r->generation, 0);
    return r;
}

struct api_registry *api_registry_new_kinds(const struct api_kind *const *kinds)
{
    struct api_registry *r = registry_alloc();

    for (const struct api_kind *const *k = kinds; *k; k++)
        add_kind(r, *k);
    return r;
}

struct api_registry *api_registry_new(void)
{
    struct api_registry *r = registry_alloc();

    for (const struct api_kind *const *k = api_kinds(); *k; k++)
        if (!(*k)->crd && !(*k)->aggregated)
            add_kind(r, *k);
    {
        /* CustomResourceDefinitions themselves: checked by api_crd_check when written. */
        static const char *const crd_short[] = {"crd", "crds", NULL};
        struct entry *e = xcalloc(1, sizeof(*e));
        atomic_init(&e->refs, 1);
        e->res = (struct api_resource){
            .group = "apiextensions.k8s.io",
            .version = "v1",
            .plural = "customresourcedefinitions",
            .singular = "customresourcedefinition",
            .kind = "CustomResourceDefinition",
            .short_names = crd_short,
            .subresources = status_only,
            .schema = &api_preserve_object,
        };
        append(r, e);
    }
    /* The reviews: questions answered, never stored (reviews.h). */
    for (const struct api_review_kind *k = api_review_kinds; k->kind; k++) {
        struct entry *e = xcalloc(1, sizeof(*e));
        char *singular = own(e, xstrdup(k->kind));
        for (char *p = singular; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        atomic_init(&e->refs, 1);
        e->res = (struct api_resource){
            .group = k->group,
            .version = "v1",
            .plural = k->plural,
            .singular = singular,
            .kind = k->kind,
            .namespaced = k->namespaced,
            .schema = &api_preserve_object,
            .create_only = true,
        };
        append(r, e);
    }
    return r;
}

void api_registry_free(struct api_registry *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        (void)api_resource_unref(&r->v[i]->res);
    free(r->v);
    (void)pthread_rwlock_destroy(&r->lock);
    free(r);
}

static const char *str_at(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(c) ? c->valuestring : NULL;
}

/* A NULL-terminated copy of a JSON string array, owned by e (NULL when absent or empty). */
static const char *const *own_list(struct entry *e, const cJSON *arr)
{
    int n = cJSON_GetArraySize(arr), i = 0;
    char **v;
    const cJSON *c;

    if (n == 0)
        return NULL;
    v = (char **)own(e, (char *)xcalloc((size_t)n + 1, sizeof(char *)));
    cJSON_ArrayForEach(c, arr)
    {
        if (cJSON_IsString(c))
            v[i++] = own(e, xstrdup(c->valuestring));
    }
    return (const char *const *)v;
}

/* A version's additionalPrinterColumns, owned by e (NULL and 0 when there are none). */
static const struct table_crd_column *own_columns(struct entry *e, const cJSON *arr, size_t *ret_n)
{
    int n = cJSON_GetArraySize(arr);
    struct table_crd_column *v;
    const cJSON *c;
    size_t i = 0;

    *ret_n = 0;
    if (n <= 0)
        return NULL;
    v = (struct table_crd_column *)own(e, (char *)xcalloc((size_t)n, sizeof(*v)));
    cJSON_ArrayForEach(c, arr)
    {
        const char *name = str_at(c, "name"), *type = str_at(c, "type");
        const char *path = str_at(c, "jsonPath"), *fmt = str_at(c, "format");
        const char *desc = str_at(c, "description");
        const cJSON *prio = cJSON_GetObjectItemCaseSensitive(c, "priority");

        if (!name || !type || !path)
            continue; /* api_crd_check refused such a CRD */
        v[i++] = (struct table_crd_column){
            .name = own(e, xstrdup(name)),
            .type = own(e, xstrdup(type)),
            .format = fmt ? own(e, xstrdup(fmt)) : NULL,
            .desc = desc ? own(e, xstrdup(desc)) : NULL,
            .json_path = own(e, xstrdup(path)),
            .priority = cJSON_IsNumber(prio) ? prio->valueint : 0,
        };
    }
    *ret_n = i;
    return v;
}

static bool same_resource(const struct api_resource *a, const char *group, const char *version,
                          const char *plural)
{
    return !strcmp(a->group, group) && !strcmp(a->version, version) && !strcmp(a->plural, plural);
}

/* Parses a Kubernetes-style version "v<major>[(alpha|beta)<minor>]"; false for any other. */
static bool kube_version(const char *v, long *major, int *level, long *minor)
{
    char *end;

    if (v[0] != 'v' || !isdigit((unsigned char)v[1]))
        return false;
    *major = strtol(v + 1, &end, 10);
    *level = 2;
    *minor = 0;
    if (!*end)
        return true;
    if (!strncmp(end, "beta", 4)) {
        *level = 1;
        end += 4;
    } else if (!strncmp(end, "alpha", 5)) {
        *level = 0;
        end += 5;
    } else {
        return false;
    }
    if (!isdigit((unsigned char)*end))
        return false;
    *minor = strtol(end, &end, 10);
    return !*end;
}

/* apimachinery version.CompareKubeAwareVersionStrings, as a qsort order (highest first). */
static int version_priority_cmp(const void *x, const void *y)
{
    const struct entry *a = *(struct entry *const *)x, *b = *(struct entry *const *)y;
    long amaj = 0, amin = 0, bmaj = 0, bmin = 0;
    int alev = 0, blev = 0;
    bool ak = kube_version(a->res.version, &amaj, &alev, &amin);
    bool bk = kube_version(b->res.version, &bmaj, &blev, &bmin);

    if (ak != bk)
        return ak ? -1 : 1;
    if (!ak)
        return strcmp(a->res.version, b->res.version);
    if (alev != blev)
        return alev > blev ? -1 : 1;
    if (amaj != bmaj)
        return amaj > bmaj ? -1 : 1;
    if (amin != bmin)
        return amin > bmin ? -1 : 1;
    return 0;
}

int api_registry_add_crd(struct api_registry *r, const cJSON *crd, struct field_errors *errs)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(spec, "names");
    const cJSON *versions = cJSON_GetObjectItemCaseSensitive(spec, "versions"), *v;
    const char *crd_name = str_at(cJSON_GetObjectItemCaseSensitive(crd, "metadata"), "name");
    struct entry **added = NULL;
    size_t nadded = 0;
    int rc = 0;

    if (api_crd_check(crd, errs) > 0 || !crd_name)
        return -EINVAL;
    {
        /* Like Kubernetes: a CRD group is a dotted DNS name, which also keeps CRDs out of the
         * store's "core" key space of the built-in group. */
        const char *group = str_at(spec, "group");
        if (!group || !strchr(group, '.')) {
            field_error_add(errs, FIELD_INVALID, "spec.group", NULL,
                            "should be a domain with at least one dot");
            return -EINVAL;
        }
    }
    {
        const char *strategy =
            str_at(cJSON_GetObjectItemCaseSensitive(spec, "conversion"), "strategy");
        if (strategy && strcmp(strategy, "None")) {
            field_error_add(errs, FIELD_NOT_SUPPORTED, "spec.conversion.strategy", NULL,
                            "koord apiserver converts between versions only with strategy "
                            "\"None\" (no conversion webhooks)");
            return -EINVAL;
        }
    }
    cJSON_ArrayForEach(v, versions)
    {
        const cJSON *oas = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(v, "schema"), "openAPIV3Schema");
        const cJSON *sub = cJSON_GetObjectItemCaseSensitive(v, "subresources");
        const cJSON *scale = cJSON_GetObjectItemCaseSensitive(sub, "scale");
        struct entry *e;

        /* Both replicas paths are required (the CRD's validation says so). */
        if (!str_at(scale, "specReplicasPath") || !str_at(scale, "statusReplicasPath"))
            scale = NULL;

        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "served")))
            continue;
        e = xcalloc(1, sizeof(*e));
        atomic_init(&e->refs, 1);
        e->owned = true;
        rc = api_schema_from_openapi(oas, &e->tree, errs);
        if (rc < 0) {
            entry_free(e);
            break;
        }
        e->res = (struct api_resource){
            .group = own(e, xstrdup(str_at(spec, "group"))),
            .version = own(e, xstrdup(str_at(v, "name") ? str_at(v, "name") : "")),
            .plural = own(e, xstrdup(str_at(names, "plural"))),
            .singular = own(e, xstrdup(str_at(names, "singular"))),
            .kind = own(e, xstrdup(str_at(names, "kind"))),
            .short_names = own_list(e, cJSON_GetObjectItemCaseSensitive(names, "shortNames")),
            .categories = own_list(e, cJSON_GetObjectItemCaseSensitive(names, "categories")),
            .subresources = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(sub, "status"))
                                ? (scale ? status_scale : status_only)
                                : (scale ? scale_only : NULL),
            .scale_spec_path = scale ? own(e, xstrdup(str_at(scale, "specReplicasPath"))) : NULL,
            .scale_status_path =
                scale ? own(e, xstrdup(str_at(scale, "statusReplicasPath"))) : NULL,
            .scale_selector_path = scale && str_at(scale, "labelSelectorPath")
                                       ? own(e, xstrdup(str_at(scale, "labelSelectorPath")))
                                       : NULL,
            .namespaced = !strcmp(str_at(spec, "scope"), "Namespaced"),
            .schema = api_schema_tree_root(e->tree),
            .crd_name = own(e, xstrdup(crd_name)),
            .multi_version = cJSON_GetArraySize(versions) > 1,
        };
        e->res.columns = own_columns(
            e, cJSON_GetObjectItemCaseSensitive(v, "additionalPrinterColumns"), &e->res.ncolumns);
        added = xrealloc(added, (nadded + 1) * sizeof(struct entry *));
        added[nadded++] = e;
    }
    if (nadded > 1)
        qsort(added, nadded, sizeof(struct entry *), version_priority_cmp);
    CHECK(pthread_rwlock_wrlock(&r->lock) == 0);
    for (size_t i = 0; rc == 0 && i < nadded; i++)
        for (size_t j = 0; j < r->n; j++)
            if (!r->v[j]->res.crd_name && !strcmp(r->v[j]->res.group, added[i]->res.group) &&
                !strcmp(r->v[j]->res.plural, added[i]->res.plural)) {
                field_error_add(errs, FIELD_FORBIDDEN, "spec.names.plural", NULL,
                                "%s is served by the API server itself", added[i]->res.plural);
                rc = -EEXIST;
            }
    if (rc == 0) {
        /* Replace what this CRD served before. */
        size_t k = 0;
        for (size_t j = 0; j < r->n; j++) {
            if (r->v[j]->res.crd_name && !strcmp(r->v[j]->res.crd_name, crd_name))
                (void)api_resource_unref(&r->v[j]->res);
            else
                r->v[k++] = r->v[j];
        }
        r->n = k;
        for (size_t i = 0; i < nadded; i++)
            append(r, added[i]);
        nadded = 0;
        atomic_fetch_add(&r->generation, 1);
    }
    CHECK(pthread_rwlock_unlock(&r->lock) == 0);
    for (size_t i = 0; i < nadded; i++)
        entry_free(added[i]);
    free(added);
    return rc;
}

int api_registry_remove_crd(struct api_registry *r, const char *crd_name)
{
    size_t k = 0;
    int rc = -ENOENT;

    CHECK(pthread_rwlock_wrlock(&r->lock) == 0);
    for (size_t j = 0; j < r->n; j++) {
        if (r->v[j]->res.crd_name && !strcmp(r->v[j]->res.crd_name, crd_name)) {
            (void)api_resource_unref(&r->v[j]->res);
            rc = 0;
            atomic_fetch_add(&r->generation, 1);
        } else {
            r->v[k++] = r->v[j];
        }
    }
    r->n = k;
    CHECK(pthread_rwlock_unlock(&r->lock) == 0);
    return rc;
}

unsigned long api_registry_generation(struct api_registry *r)
{
    return atomic_load(&r->generation);
}

static bool has_name(const char *const *list, const char *name)
{
    for (; list && *list; list++)
        if (!strcmp(*list, name))
            return true;
    return false;
}

static const struct api_resource *ref(struct entry *e)
{
    atomic_fetch_add(&e->refs, 1);
    return &e->res;
}

const struct api_resource *api_registry_lookup(struct api_registry *r, const char *group,
                                               const char *version, const char *plural)
{
    const struct api_resource *found = NULL;

    CHECK(pthread_rwlock_rdlock(&r->lock) == 0);
    for (size_t j = 0; j < r->n && !found; j++)
        if (same_resource(&r->v[j]->res, group, version, plural))
            found = ref(r->v[j]);
    for (size_t j = 0; j < r->n && !found; j++) {
        const struct api_resource *a = &r->v[j]->res;
        if (!strcmp(a->group, group) && !strcmp(a->version, version) &&
            (!strcmp(a->singular, plural) || has_name(a->short_names, plural)))
            found = ref(r->v[j]);
    }
    CHECK(pthread_rwlock_unlock(&r->lock) == 0);
    return found;
}

const struct api_resource *api_registry_lookup_kind(struct api_registry *r, const char *api_version,
                                                    const char *kind)
{
    const struct api_resource *found = NULL;
    struct strbuf av = STRBUF_INIT;

    CHECK(pthread_rwlock_rdlock(&r->lock) == 0);
    for (size_t j = 0; j < r->n && !found; j++) {
        const struct api_resource *a = &r->v[j]->res;
        strbuf_reset(&av);
        if (*a->group)
            strbuf_addf(&av, "%s/", a->group);
        strbuf_addstr(&av, a->version);
        if (!strcmp(av.buf, api_version) && !strcmp(a->kind, kind))
            found = ref(r->v[j]);
    }
    CHECK(pthread_rwlock_unlock(&r->lock) == 0);
    strbuf_release(&av);
    return found;
}

void api_registry_foreach(struct api_registry *r,
                          void (*fn)(const struct api_resource *res, void *userdata),
                          void *userdata)
{
    CHECK(pthread_rwlock_rdlock(&r->lock) == 0);
    for (size_t j = 0; j < r->n; j++)
        fn(&r->v[j]->res, userdata);
    CHECK(pthread_rwlock_unlock(&r->lock) == 0);
}

/* ---- discovery ---- */

static cJSON *obj(void)
{
    cJSON *o = cJSON_CreateObject();
    CHECK(o);
    return o;
}

static void add_s(cJSON *o, const char *k, const char *v)
{
    CHECK(cJSON_AddStringToObject(o, k, v));
}

static cJSON *string_array(const char *const *v)
{
    cJSON *a = cJSON_CreateArray();
    CHECK(a);
    for (; v && *v; v++)
        CHECK(cJSON_AddItemToArray(a, cJSON_CreateString(*v)));
    return a;
}

cJSON *api_registry_api_versions(struct api_registry *r)
{
    cJSON *o = obj();
    (void)r;

    add_s(o, "kind", "APIVersions");
    CHECK(cJSON_AddItemToObject(o, "versions", string_array((const char *const[]){"v1", NULL})));
    CHECK(cJSON_AddArrayToObject(o, "serverAddressByClientCIDRs"));
    return o;
}

/* {"groupVersion": "g/v", "version": "v"} */
static cJSON *group_version(const char *group, const char *version)
{
    cJSON *o = obj();
    struct strbuf gv = STRBUF_INIT;

    strbuf_addf(&gv, "%s/%s", group, version);
    add_s(o, "groupVersion", gv.buf);
    add_s(o, "version", version);
    strbuf_release(&gv);
    return o;
}

/* The APIGroup object of group (caller holds the lock); NULL when not served. */
static cJSON *group_doc(struct api_registry *r, const char *group)
{
    cJSON *g = NULL, *versions = NULL;

    for (size_t j = 0; j < r->n; j++) {
        const struct api_resource *a = &r->v[j]->res;
        bool seen = false;
        const cJSON *v;

        if (strcmp(a->group, group) || !*group)
            continue;
        if (!g) {
            g = obj();
            add_s(g, "name", group);
            versions = cJSON_AddArrayToObject(g, "versions");
            CHECK(versions);
        }
        cJSON_ArrayForEach(v, versions)
        {
            seen |= !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(v, "version")), a->version);
        }
        if (!seen)
            CHECK(cJSON_AddItemToArray(versions, group_version(group, a->version)));
    }
    if (g)
        CHECK(cJSON_AddItemToObject(g, "preferredVersion",
                                    cJSON_Duplicate(cJSON_GetArrayItem(versions, 0), true)));
    return g;
}

cJSON *api_registry_group_list(struct api_registry *r)
{
    cJSON *o = obj(), *groups;

    add_s(o, "kind", "APIGroupList");
    add_s(o, "apiVersion", "v1");
    groups = cJSON_AddArrayToObject(o, "groups");
    CHECK(groups);
    CHECK(pthread_rwlock_rdlock(&r->lock) == 0);
    for (size_t j = 0; j < r->n; j++) {
        const char *group = r->v[j]->res.group;
        bool seen = !*group;
        for (size_t i = 0; i < j && !seen; i++)
            seen = !strcmp(r->v[i]->res.group, group);
        if (!seen)
            CHECK(cJSON_AddItemToArray(groups, group_doc(r, group)));
    }
    CHECK(pthread_rwlock_unlock(&r->lock) == 0);
    api_registry_sort_groups(r, groups, NULL, NULL);
    return o;
}

/* A group's place among the groups of one priority: the least name of its APIServices. */
static void group_sort_name(const cJSON *g, struct strbuf *out)
{
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(g, "name"));
    struct strbuf cand = STRBUF_INIT;
    const cJSON *v;

    strbuf_reset(out);
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(g, "versions"))
    {
        const char *version = cJSON_GetStringValue(cJSON_GetObjectItem(v, "version"));

        strbuf_reset(&cand);
        strbuf_addf(&cand, "%s.%s", version ? version : "", name ? name : "");
        if (!out->len || strcmp(cand.buf, out->buf) < 0) {
            strbuf_reset(out);
            strbuf_addstr(out, cand.buf);
        }
    }
    strbuf_release(&cand);
}

struct sort_key {
    cJSON *g;
    int prio;
    struct strbuf name;
};

static int sort_key_cmp(const void *x, const void *y)
{
    const struct sort_key *a = x, *b = y;

    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    return strcmp(a->name.buf, b->name.buf);
}

void api_registry_sort_groups(struct api_registry *r, cJSON *groups,
                              int (*prio)(const char *group, void *userdata), void *userdata)
{
    size_t n = 0, total = (size_t)cJSON_GetArraySize(groups);
    struct sort_key *keys;
    cJSON *g;

    if (!total)
        return;
    keys = xcalloc(total, sizeof(*keys));
    /* Built-in groups keep their place in front (their priorities are all above 1000). */
    CHECK(pthread_rwlock_rdlock(&r->lock) == 0);
    cJSON_ArrayForEach(g, groups)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(g, "name"));
        bool builtin = false;

        for (size_t j = 0; j < r->n && name && !builtin; j++)
            builtin = !r->v[j]->res.crd_name && !strcmp(r->v[j]->res.group, name);
        if (builtin)
            continue;
        keys[n].g = g;
        keys[n].prio = prio && name ? prio(name, userdata) : 1000;
        keys[n].name = (struct strbuf)STRBUF_INIT;
        group_sort_name(g, &keys[n].name);
        n++;
    }
    CHECK(pthread_rwlock_unlock(&r->lock) == 0);
    qsort(keys, n, sizeof(*keys), sort_key_cmp);
    for (size_t i = 0; i < n; i++)
        keys[i].g = cJSON_DetachItemViaPointer(groups, keys[i].g);
    for (size_t i = 0; i < n; i++) {
        CHECK(cJSON_AddItemToArray(groups, keys[i].g));
        strbuf_release(&keys[i].name);
    }
    free(keys);
}

cJSON *api_registry_group(struct api_registry *r, const char *group)
{
    cJSON *g;

    CHECK(pthread_rwlock_rdlock(&r->lock) == 0);
    g = group_doc(r, group);
    CHECK(pthread_rwlock_unlock(&r->lock) == 0);
    if (!g)
        return NULL;
    /* Clients read these by key; their position in the object does not matter. */
    CHECK(cJSON_AddStringToObject(g, "kind", "APIGroup"));
    CHECK(cJSON_AddStringToObject(g, "apiVersion", "v1"));
    return g;
}

static cJSON *resource_doc(const struct api_resource *a, const char *sub)
{
    cJSON *o = obj();
    struct strbuf name = STRBUF_INIT;
    const char *kind = a->kind;
    const char *const *verbs = a->create_only ? verbs_create
                               : a->read_only ? verbs_read
                                              : verbs_all;

    strbuf_addstr(&name, a->plural);
    if (sub) {
        strbuf_addf(&name, "/%s", sub);
        if (!strcmp(sub, "finalize"))
            verbs = verbs_update;
        else if (!strcmp(sub, "status") || !strcmp(sub, "scale"))
            verbs = verbs_status;
        else
            verbs = verbs_create;
        if (!strcmp(sub, "binding"))
            kind = "Binding";
    }
    add_s(o, "name", name.buf);
    add_s(o, "singularName", sub ? "" : a->singular);
    CHECK(cJSON_AddBoolToObject(o, "namespaced", a->namespaced));
    if (sub && !strcmp(sub, "eviction")) {
        add_s(o, "group", "policy");
        add_s(o, "version", "v1");
        kind = "Eviction";
    } else if (sub && !strcmp(sub, "scale")) {
        add_s(o, "group", "autoscaling");
        add_s(o, "version", "v1");
        kind = "Scale";
    }
    add_s(o, "kind", kind);
    CHECK(cJSON_AddItemToObject(o, "verbs", string_array(verbs)));
    if (!sub && a->short_names)
        CHECK(cJSON_AddItemToObject(o, "shortNames", string_array(a->short_names)));
    if (!sub && a->categories)
        CHECK(cJSON_AddItemToObject(o, "categories", string_array(a->categories)));
    strbuf_release(&name);
    return o;
}

cJSON *api_registry_resource_list(struct api_registry *r, const char *group, const char *version)
{
    cJSON *o = obj(), *list;
    struct strbuf gv = STRBUF_INIT;
    bool any = false;

    add_s(o, "kind", "APIResourceList");
    add_s(o, "apiVersion", "v1");
    if (*group)
        strbuf_addf(&gv, "%s/", group);
    strbuf_addstr(&gv, version);
    add_s(o, "groupVersion", gv.buf);
    list = cJSON_AddArrayToObject(o, "resources");
    CHECK(list);
    CHECK(pthread_rwlock_rdlock(&r->lock) == 0);
    for (size_t j = 0; j < r->n; j++) {
        const struct api_resource *a = &r->v[j]->res;
        if (strcmp(a->group, group) || strcmp(a->version, version))
            continue;
        any = true;
        CHECK(cJSON_AddItemToArray(list, resource_doc(a, NULL)));
        for (const char *const *s = a->subresources; s && *s; s++)
            CHECK(cJSON_AddItemToArray(list, resource_doc(a, *s)));
    }
    CHECK(pthread_rwlock_unlock(&r->lock) == 0);
    strbuf_release(&gv);
    if (!any) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
