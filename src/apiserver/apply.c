/*
 * Server-side apply and managedFields over trees (see apply.h). The entries of
 * metadata.managedFields are decoded into a small list, changed with the set algebra of
 * api/fieldset.h the way structured-merge-diff's Updater does (update() and Apply() in
 * merge/update.go), and encoded again in kube's member order.
 */
#include "apiserver/apply.h"

#include <stdlib.h>
#include <string.h>

#include "api/fieldset.h"
#include "api/patchmeta.h"
#include "api/schema.h"
#include "apiserver/registry.h"
#include "apiserver/status.h"
#include "base/base.h"
#include "codec/patch.h"

/* ---- list types of a resource ---- */

/* listType/listMapKey tags of k8s.io/api that patch metadata does not give (core/v1
 * types.go: ContainerPort and ServicePort are keyed by port and protocol; TopologySpread
 * constraints by topologyKey and whenUnsatisfiable), the mapType=atomic node selectors, and the
 * atomic selectors of workloads and Services (below). Matched on the end of the path. */
struct type_override {
    const char *suffix;
    enum api_fs_kind kind;
    const char *keys[3];
    const char *dflt[2];
};

static const struct type_override overrides[] = {
    {"containers.ports", API_FS_MAP, {"containerPort", "protocol"}, {NULL, "\"TCP\""}},
    {"initContainers.ports", API_FS_MAP, {"containerPort", "protocol"}, {NULL, "\"TCP\""}},
    {"ephemeralContainers.ports", API_FS_MAP, {"containerPort", "protocol"}, {NULL, "\"TCP\""}},
    {"topologySpreadConstraints", API_FS_MAP, {"topologyKey", "whenUnsatisfiable"}, {NULL, NULL}},
    {"nodeSelector", API_FS_ATOMIC, {NULL}, {NULL, NULL}}, /* PodSpec: mapType=atomic */
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && !strcmp(s + n - m, suffix) && (n == m || s[n - m - 1] == '.');
}

/* The schema node at path (member names joined by '.', list levels left out), or NULL. */
static const struct api_schema *schema_at(const struct api_schema *s, const char *path)
{
    char name[256];

    while (s && *path) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);

        while (s && s->type == API_ARRAY)
            s = s->items;
        if (!s || len >= sizeof(name))
            return NULL;
        memcpy(name, path, len);
        name[len] = '\0';
        if (s->type == API_OBJECT) {
            const struct api_prop *p = api_schema_prop(s, name);
            s = p ? p->schema : NULL;
        } else if (s->type == API_MAP) {
            s = s->items;
        } else {
            return NULL;
        }
        path += len + (dot ? 1 : 0);
    }
    return s;
}

static void resource_type(const char *path, const void *userdata, struct api_fs_type *ret)
{
    const struct api_resource *res = userdata;
    const struct api_schema *s = res->schema ? schema_at(res->schema, path) : NULL;
    const struct api_patch_meta *meta;
    struct smp_list_meta lm;

    if (s && (s->flags & API_S_LIST_MAP) && s->map_keys) {
        ret->kind = API_FS_MAP;
        for (size_t i = 0; i < API_FS_MAX_KEYS && s->map_keys[i]; i++) {
            const struct api_prop *p = s->items && s->items->type == API_OBJECT
                                           ? api_schema_prop(s->items, s->map_keys[i])
                                           : NULL;
            ret->keys[i] = s->map_keys[i];
            ret->key_dflt[i] = p ? p->dflt : NULL;
        }
        return;
    }
    if (s && (s->flags & API_S_LIST_SET)) {
        ret->kind = API_FS_SET;
        return;
    }
    if (s && (s->flags & API_S_ATOMIC)) {
        ret->kind = API_FS_ATOMIC;
        return;
    }
    if (!res->crd_name) {
        for (size_t i = 0; i < ARRAY_SIZE(overrides); i++) {
            if (!ends_with(path, overrides[i].suffix))
                continue;
            ret->kind = overrides[i].kind;
            for (size_t k = 0; k < 2; k++) {
                ret->keys[k] = overrides[i].keys[k];
                ret->key_dflt[k] = overrides[i].dflt[k];
            }
            return;
        }
        if (!strcmp(path, "spec.ports") && !*res->group && !strcmp(res->kind, "Service")) {
            ret->kind = API_FS_MAP; /* ServicePort: listMapKey port and protocol */
            ret->keys[0] = "port";
            ret->keys[1] = "protocol";
            ret->key_dflt[1] = "\"TCP\"";
            return;
        }
        /* LabelSelector (structType=atomic) of the workloads, ServiceSpec.selector
         * (mapType=atomic). */
        if (!strcmp(path, "spec.selector") &&
            (!strcmp(res->group, "apps") || !strcmp(res->group, "batch") ||
             (!*res->group && !strcmp(res->kind, "Service")))) {
            ret->kind = API_FS_ATOMIC;
            return;
        }
    }
    /* ObjectMeta's lists are the same for every kind (custom resources included). */
    if (!strcmp(path, "metadata.finalizers")) {
        ret->kind = API_FS_SET;
        return;
    }
    if (!strcmp(path, "metadata.ownerReferences")) {
        ret->kind = API_FS_MAP;
        ret->keys[0] = "uid";
        return;
    }
    meta = res->crd_name ? NULL : api_patch_meta_find(res->group, res->kind);
    if (meta && api_patch_meta_lookup(path, meta, &lm) && lm.merge) {
        ret->kind = lm.merge_key ? API_FS_MAP : API_FS_SET;
        ret->keys[0] = lm.merge_key;
    }
}

/* ---- entries ---- */

struct mf_entry {
    char *manager, *operation, *api_version, *time, *subresource;
    cJSON *set;
};

struct mf_list {
    struct mf_entry *v;
    size_t n, alloc;
};

static void mf_list_release(struct mf_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].manager);
        free(l->v[i].operation);
        free(l->v[i].api_version);
        free(l->v[i].time);
        free(l->v[i].subresource);
        cJSON_Delete(l->v[i].set);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static struct mf_entry *mf_add(struct mf_list *l, const char *manager, const char *operation,
                               const char *api_version, const char *time, const char *sub)
{
    struct mf_entry *e;

    if (l->n == l->alloc) {
        l->alloc = l->alloc ? 2 * l->alloc : 4;
        l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
    }
    e = &l->v[l->n++];
    e->manager = xstrdup(manager);
    e->operation = xstrdup(operation);
    e->api_version = xstrdup(api_version ? api_version : "");
    e->time = time ? xstrdup(time) : NULL;
    e->subresource = xstrdup(sub ? sub : "");
    e->set = api_fieldset_new();
    return e;
}

static struct mf_entry *mf_find(struct mf_list *l, const char *manager, const char *operation,
                                const char *sub)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].manager, manager) && !strcmp(l->v[i].operation, operation) &&
            !strcmp(l->v[i].subresource, sub))
            return &l->v[i];
    return NULL;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * Decodes a managedFields array. With errs (a client's entries), a malformed entry is an error
 * (ValidateManagedFields); without (stored entries), it is skipped.
 */
static int mf_decode(const cJSON *arr, struct mf_list *l, struct field_errors *errs)
{
    const cJSON *it;
    int i = 0, r = 0;

    if (arr && !cJSON_IsArray(arr)) {
        if (errs)
            field_error_add(errs, FIELD_INVALID, "metadata.managedFields", NULL,
                            "must be a list of entries");
        return errs ? -EINVAL : 0;
    }
    cJSON_ArrayForEach(it, arr)
    {
        char path[64];
        const char *m = str(it, "manager"), *op = str(it, "operation"), *ft = str(it, "fieldsType");
        const cJSON *fv = cJSON_GetObjectItemCaseSensitive(it, "fieldsV1");
        struct strbuf err = STRBUF_INIT;
        cJSON *set = NULL;
        bool bad = false;

        (void)snprintf(path, sizeof(path), "metadata.managedFields[%d]", i++);
        if (!cJSON_IsObject(it)) {
            if (errs)
                field_error_add(errs, FIELD_INVALID, path, NULL, "must be an object");
            r = -EINVAL;
            continue;
        }
        if (!op || (strcmp(op, "Apply") && strcmp(op, "Update"))) {
            if (errs)
                field_error_add(errs, FIELD_NOT_SUPPORTED, path, op ? op : "",
                                "supported values: \"Apply\", \"Update\"");
            bad = true;
        }
        if (fv && (!ft || strcmp(ft, "FieldsV1"))) {
            if (errs)
                field_error_add(errs, FIELD_NOT_SUPPORTED, path, ft ? ft : "",
                                "supported values: \"FieldsV1\"");
            bad = true;
        }
        if (m && strlen(m) > APPLY_MANAGER_MAX) {
            if (errs)
                field_error_add(errs, FIELD_TOO_LONG, path, NULL, "may not be more than %d bytes",
                                APPLY_MANAGER_MAX);
            bad = true;
        }
        if (!bad && fv && api_fieldset_decode(fv, &set, &err) < 0) {
            if (errs)
                field_error_add(errs, FIELD_INVALID, path, NULL, "fieldsV1 %s", err.buf);
            bad = true;
        }
        strbuf_release(&err);
        if (bad) {
            r = -EINVAL;
            continue;
        }
        {
            struct mf_entry *e = mf_add(l, m ? m : "", op, str(it, "apiVersion"), str(it, "time"),
                                        str(it, "subresource"));
            if (set) {
                cJSON_Delete(e->set);
                e->set = set;
            }
        }
    }
    return errs ? r : 0;
}

static cJSON *mf_encode(const struct mf_list *l)
{
    cJSON *arr = cJSON_CreateArray();

    CHECK(arr);
    for (size_t i = 0; i < l->n; i++) {
        const struct mf_entry *e = &l->v[i];
        cJSON *o = cJSON_CreateObject();

        CHECK(o && cJSON_AddItemToArray(arr, o));
        CHECK(cJSON_AddStringToObject(o, "manager", e->manager));
        CHECK(cJSON_AddStringToObject(o, "operation", e->operation));
        CHECK(cJSON_AddStringToObject(o, "apiVersion", e->api_version));
        if (e->time)
            CHECK(cJSON_AddStringToObject(o, "time", e->time));
        CHECK(cJSON_AddStringToObject(o, "fieldsType", "FieldsV1"));
        CHECK(cJSON_AddItemToObject(o, "fieldsV1", api_fieldset_encode(e->set)));
        if (*e->subresource)
            CHECK(cJSON_AddStringToObject(o, "subresource", e->subresource));
    }
    return arr;
}

/* Drops the entries that own nothing (kube removes a manager whose set is empty). */
static void mf_drop_empty(struct mf_list *l)
{
    size_t j = 0;

    for (size_t i = 0; i < l->n; i++) {
        if (!api_fieldset_is_empty(l->v[i].set)) {
            l->v[j++] = l->v[i];
            continue;
        }
        free(l->v[i].manager);
        free(l->v[i].operation);
        free(l->v[i].api_version);
        free(l->v[i].time);
        free(l->v[i].subresource);
        cJSON_Delete(l->v[i].set);
    }
    l->n = j;
}

/*
 * At most APPLY_MAX_UPDATERS Update entries (fieldmanager/internal/capmanagers.go): past that,
 * the oldest are folded, per apiVersion, into one "ancient-changes" entry holding the union of
 * their fields and the time of the latest folded in. Bounds what every distinct writer adds.
 */
static void mf_cap_updaters(struct mf_list *l)
{
    size_t n = 0;

    for (size_t i = 0; i < l->n; i++)
        n += !strcmp(l->v[i].operation, "Update");
    while (n > APPLY_MAX_UPDATERS) {
        struct mf_entry *oldest = NULL, *bucket = NULL;

        for (size_t i = 0; i < l->n; i++) {
            struct mf_entry *e = &l->v[i];
            if (strcmp(e->operation, "Update") || !strcmp(e->manager, "ancient-changes"))
                continue;
            if (!oldest || strcmp(e->time ? e->time : "", oldest->time ? oldest->time : "") < 0)
                oldest = e;
        }
        if (!oldest)
            return;
        for (size_t i = 0; i < l->n; i++)
            if (!strcmp(l->v[i].manager, "ancient-changes") &&
                !strcmp(l->v[i].operation, "Update") &&
                !strcmp(l->v[i].api_version, oldest->api_version))
                bucket = &l->v[i];
        if (!bucket) {
            /* The oldest becomes the bucket of its version. */
            free(oldest->manager);
            oldest->manager = xstrdup("ancient-changes");
            free(oldest->subresource);
            oldest->subresource = xstrdup("");
            continue; /* no fewer entries yet: fold the next oldest into it */
        }
        api_fieldset_union(bucket->set, oldest->set);
        free(bucket->time);
        bucket->time = oldest->time ? xstrdup(oldest->time) : NULL;
        api_fieldset_subtract(oldest->set, oldest->set); /* dropped as empty below */
        mf_drop_empty(l);
        n--;
    }
}

/* ---- what kube never tracks ---- */

static bool has_status(const struct api_resource *res)
{
    for (const char *const *s = res->subresources; s && *s; s++)
        if (!strcmp(*s, "status"))
            return true;
    return false;
}

/*
 * The fields of s that managedFields leave out: apiVersion, kind and the server's metadata
 * (fieldmanager/internal/stripmeta.go), and what the write cannot change (the strategies'
 * GetResetFields): status on the main resource of a kind with a status subresource, everything
 * but status on /status.
 */
static void strip(const struct api_resource *res, const char *sub, cJSON *s)
{
    static const char *const meta_fields[] = {
        "name",        "namespace",  "creationTimestamp", "selfLink",        "uid",
        "clusterName", "generation", "managedFields",     "resourceVersion",
    };
    static const char *const status[] = {"status", NULL};

    api_fieldset_remove(s, (const char *const[]){"apiVersion", NULL}, true);
    api_fieldset_remove(s, (const char *const[]){"kind", NULL}, true);
    api_fieldset_remove(s, (const char *const[]){"metadata", NULL}, false);
    for (size_t i = 0; i < ARRAY_SIZE(meta_fields); i++)
        api_fieldset_remove(s, (const char *const[]){"metadata", meta_fields[i], NULL}, true);
    if (!strcmp(sub, "status"))
        api_fieldset_keep_only(s, status);
    else if (has_status(res))
        api_fieldset_remove(s, status, true);
}

static void set_managed(cJSON *obj, cJSON *mf)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    if (!cJSON_IsObject(meta)) {
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "metadata");
        CHECK(meta = cJSON_AddObjectToObject(obj, "metadata"));
    }
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    if (mf)
        CHECK(cJSON_AddItemToObject(meta, "managedFields", mf));
}

/* ---- Update ---- */

void apply_field_manager(const char *query, const char *user_agent, struct strbuf *out)
{
    const unsigned char *p;

    if (query && *query) {
        strbuf_addstr(out, query);
        return;
    }
    for (p = (const unsigned char *)(user_agent ? user_agent : "");
         *p && *p != '/' && out->len < APPLY_MANAGER_MAX; p++)
        if (*p >= 0x20 && *p != 0x7f)
            strbuf_addch(out, (char)*p);
}

void apply_check_field_manager(const char *manager, struct field_errors *errs)
{
    if (!manager)
        return;
    if (strlen(manager) > APPLY_MANAGER_MAX) {
        field_error_add(errs, FIELD_TOO_LONG, "fieldManager", NULL, "may not be more than %d bytes",
                        APPLY_MANAGER_MAX);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)manager; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            field_error_add(errs, FIELD_INVALID, "fieldManager", manager,
                            "must only contain printable characters");
            return;
        }
    }
}

int apply_update_managed_fields(const struct api_resource *res, const char *subresource,
                                const cJSON *live, const cJSON *obj, const char *manager,
                                const char *now, cJSON **ret_mf, struct field_errors *errs)
{
    const struct api_fs_types types = {resource_type, res};
    const cJSON *cmf = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "managedFields");
    struct mf_list l = {0};
    struct mf_entry *mine;
    cJSON *chg = NULL, *rem = NULL;
    int r;

    if (cJSON_IsArray(cmf) && !cmf->child) {
        *ret_mf = NULL; /* an empty list resets them: nothing is recorded */
        return 0;
    }
    if (cmf && !cJSON_IsNull(cmf)) {
        if ((r = mf_decode(cmf, &l, errs)) < 0)
            goto out;
    } else if (live) {
        (void)mf_decode(cJSON_GetObjectItemCaseSensitive(
                            cJSON_GetObjectItemCaseSensitive(live, "metadata"), "managedFields"),
                        &l, NULL);
    }
    api_fieldset_compare(live, obj, &types, &chg, &rem);
    strip(res, subresource, chg);
    strip(res, subresource, rem);
    mine = mf_find(&l, manager, "Update", subresource);
    for (size_t i = 0; i < l.n; i++) {
        if (&l.v[i] == mine)
            continue;
        api_fieldset_subtract(l.v[i].set, chg);
        api_fieldset_subtract(l.v[i].set, rem);
    }
    if (!api_fieldset_is_empty(chg)) {
        if (!mine)
            mine = mf_add(&l, manager, "Update", str(obj, "apiVersion"), now, subresource);
        free(mine->time);
        mine->time = xstrdup(now);
        free(mine->api_version);
        mine->api_version = xstrdup(str(obj, "apiVersion") ? str(obj, "apiVersion") : "");
    }
    if (mine) {
        api_fieldset_subtract(mine->set, rem);
        api_fieldset_union(mine->set, chg);
    }
    mf_drop_empty(&l);
    mf_cap_updaters(&l);
    *ret_mf = l.n ? mf_encode(&l) : NULL;
    r = 0;
out:
    cJSON_Delete(chg);
    cJSON_Delete(rem);
    mf_list_release(&l);
    return r;
}

/* ---- Apply ---- */

/* printManager of fieldmanager/internal/conflict.go. */
static void print_manager(const struct mf_entry *e, struct strbuf *out)
{
    strbuf_addf(out, "\"%s\"", e->manager);
    if (*e->subresource)
        strbuf_addf(out, " with subresource \"%s\"", e->subresource);
    if (!strcmp(e->operation, "Update"))
        strbuf_addf(out, " using %s", e->api_version);
}

struct conflict {
    const struct mf_entry *e;
    cJSON *set;
};

static int cmp_conflict(const void *a, const void *b)
{
    const struct conflict *x = a, *y = b;
    int d = strcmp(x->e->manager, y->e->manager);

    return d ? d : strcmp(x->e->operation, y->e->operation);
}

/* The 409 of NewConflictError: one cause per path, the message as getConflictMessage. */
static cJSON *conflict_status(struct conflict *cs, size_t n)
{
    struct strbuf msg = STRBUF_INIT, who = STRBUF_INIT, paths = STRBUF_INIT, all = STRBUF_INIT;
    size_t total = 0;
    cJSON *st, *details, *causes;

    qsort(cs, n, sizeof(*cs), cmp_conflict);
    for (size_t i = 0; i < n; i++) {
        strbuf_reset(&paths);
        api_fieldset_paths(cs[i].set, &paths);
        for (const char *p = paths.buf; *p; p = strchr(p, '\n') + 1)
            total++;
    }
    st = api_status_failure(409, "Conflict", "", NULL);
    details = cJSON_GetObjectItemCaseSensitive(st, "details");
    if (!details)
        CHECK(details = cJSON_AddObjectToObject(st, "details"));
    CHECK(causes = cJSON_AddArrayToObject(details, "causes"));
    for (size_t i = 0; i < n; i++) {
        strbuf_reset(&who);
        strbuf_reset(&paths);
        print_manager(cs[i].e, &who);
        api_fieldset_paths(cs[i].set, &paths);
        if (total > 1)
            strbuf_addf(&all, "%sconflicts with %s:", all.len ? "\n" : "", who.buf);
        for (char *p = paths.buf, *eol; *p; p = eol + 1) {
            cJSON *cause = cJSON_CreateObject();
            struct strbuf m = STRBUF_INIT;

            eol = strchr(p, '\n');
            *eol = '\0';
            CHECK(cause && cJSON_AddItemToArray(causes, cause));
            strbuf_addf(&m, "conflict with %s", who.buf);
            CHECK(cJSON_AddStringToObject(cause, "reason", "FieldManagerConflict"));
            CHECK(cJSON_AddStringToObject(cause, "message", m.buf));
            CHECK(cJSON_AddStringToObject(cause, "field", p));
            if (total == 1)
                strbuf_addf(&all, "conflict with %s: %s", who.buf, p);
            else
                strbuf_addf(&all, "\n- %s", p);
            strbuf_release(&m);
        }
    }
    strbuf_addf(&msg, "Apply failed with %zu conflict%s: %s", total, total == 1 ? "" : "s",
                all.buf);
    cJSON_ReplaceItemInObjectCaseSensitive(st, "message", cJSON_CreateString(msg.buf));
    strbuf_release(&msg);
    strbuf_release(&who);
    strbuf_release(&paths);
    strbuf_release(&all);
    return st;
}

static cJSON *unprocessable(const struct api_resource *res, const char *config_version,
                            const char *err)
{
    struct strbuf m = STRBUF_INIT;
    cJSON *st;

    (void)config_version;
    strbuf_addf(&m, "failed to create typed patch object (%s/%s, Kind=%s): %s", res->group,
                res->version, res->kind, err);
    st = api_status_failure(422, "Invalid", m.buf, NULL);
    strbuf_release(&m);
    return st;
}

int apply_patch(const struct api_resource *res, const char *subresource, const cJSON *live,
                const cJSON *config, const char *manager, bool force, const char *now,
                cJSON **ret_obj, bool *ret_unchanged, cJSON **ret_status)
{
    const struct api_fs_types types = {resource_type, res};
    const char *api_version = str(config, "apiVersion");
    struct mf_list l = {0};
    struct conflict *cs = NULL;
    size_t ncs = 0;
    struct strbuf err = STRBUF_INIT;
    cJSON *cfgset = NULL, *base = NULL, *merged = NULL, *chg = NULL, *rem = NULL, *drop = NULL,
          *keep = NULL, *old_mf = NULL, *mf = NULL;
    struct mf_entry *mine;
    char *old_time = NULL;
    int r = -EINVAL;

    if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(config, "metadata"),
                                         "managedFields")) {
        *ret_status =
            api_status_failure(400, "BadRequest", "metadata.managedFields must be nil", NULL);
        goto out;
    }
    if (api_fieldset_from_object(config, &types, &cfgset, &err) < 0) {
        *ret_status = unprocessable(res, api_version, err.buf);
        goto out;
    }
    strip(res, subresource, cfgset);
    if (live) {
        CHECK(base = cJSON_Duplicate(live, true));
        old_mf = cJSON_DetachItemFromObjectCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(base, "metadata"), "managedFields");
        (void)mf_decode(old_mf, &l, NULL);
        if (!l.n) {
            /* An object no manager owns yet: what it has belongs to before-first-apply, so
             * that applying over it is a conflict rather than a silent take-over. */
            cJSON *all = NULL, *none = NULL;
            api_fieldset_compare(NULL, base, &types, &all, &none);
            strip(res, subresource, all);
            if (!api_fieldset_is_empty(all)) {
                struct mf_entry *e =
                    mf_add(&l, "before-first-apply", "Update", str(live, "apiVersion"), now, "");
                cJSON_Delete(e->set);
                e->set = all;
                all = NULL;
            }
            cJSON_Delete(all);
            cJSON_Delete(none);
        }
    }
    strbuf_reset(&err);
    if (api_fieldset_merge(base, config, &types, &merged, &err) < 0) {
        *ret_status = unprocessable(res, api_version, err.buf);
        goto out;
    }
    api_fieldset_compare(base, merged, &types, &chg, &rem);
    strip(res, subresource, chg);
    strip(res, subresource, rem);
    mine = mf_find(&l, manager, "Apply", subresource);
    cs = xcalloc(l.n ? l.n : 1, sizeof(*cs));
    for (size_t i = 0; i < l.n; i++) {
        cJSON *c;
        if (&l.v[i] == mine)
            continue;
        c = api_fieldset_intersect(l.v[i].set, chg);
        if (api_fieldset_is_empty(c)) {
            cJSON_Delete(c);
            continue;
        }
        cs[ncs++] = (struct conflict){&l.v[i], c};
    }
    if (ncs && !force) {
        *ret_status = conflict_status(cs, ncs);
        r = -EBUSY;
        goto out;
    }
    for (size_t i = 0; i < ncs; i++)
        api_fieldset_subtract(((struct mf_entry *)cs[i].e)->set, cs[i].set);
    for (size_t i = 0; i < l.n; i++)
        if (&l.v[i] != mine)
            api_fieldset_subtract(l.v[i].set, rem);
    if (!mine)
        mine = mf_add(&l, manager, "Apply", api_version, NULL, subresource);
    old_time = mine->time;
    mine->time = NULL;
    /* What the manager applied before and no longer does goes, unless someone owns it. */
    drop = mine->set;
    mine->set = cJSON_Duplicate(cfgset, true);
    CHECK(mine->set);
    api_fieldset_subtract(drop, cfgset);
    keep = api_fieldset_new();
    for (size_t i = 0; i < l.n; i++)
        api_fieldset_union(keep, l.v[i].set);
    api_fieldset_prune(merged, drop, keep, &types);
    cJSON_Delete(rem);
    cJSON_Delete(chg);
    api_fieldset_compare(base, merged, &types, &chg, &rem);
    strip(res, subresource, rem);
    for (size_t i = 0; i < l.n; i++)
        if (&l.v[i] != mine)
            api_fieldset_subtract(l.v[i].set, rem);
    free(mine->api_version);
    mine->api_version = xstrdup(api_version ? api_version : "");
    /* Unchanged when the object and every entry are as they were (the time aside). */
    mine->time = old_time ? old_time : xstrdup(now);
    old_time = NULL;
    mf_drop_empty(&l);
    mf_cap_updaters(&l);
    mine = mf_find(&l, manager, "Apply", subresource);
    mf = l.n ? mf_encode(&l) : NULL;
    *ret_unchanged = live && json_value_equal(base, merged) &&
                     ((!mf && !old_mf) || (mf && old_mf && json_value_equal(mf, old_mf)));
    if (!*ret_unchanged && mine) {
        free(mine->time);
        mine->time = xstrdup(now);
        cJSON_Delete(mf);
        mf = mf_encode(&l);
    }
    set_managed(merged, mf);
    mf = NULL;
    *ret_obj = merged;
    merged = NULL;
    r = 0;
out:
    for (size_t i = 0; i < ncs; i++)
        cJSON_Delete(cs[i].set);
    free(cs);
    free(old_time);
    cJSON_Delete(cfgset);
    cJSON_Delete(base);
    cJSON_Delete(merged);
    cJSON_Delete(chg);
    cJSON_Delete(rem);
    cJSON_Delete(drop);
    cJSON_Delete(keep);
    cJSON_Delete(old_mf);
    cJSON_Delete(mf);
    mf_list_release(&l);
    strbuf_release(&err);
    return r;
}
