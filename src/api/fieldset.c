/*
 * Field sets and the apply merge (see fieldset.h). Sets are fieldsV1 trees with an explicit "."
 * on every member; the walks below carry two paths: the type path handed to the caller's
 * api_fs_type_fn (member names, list levels left out) and the display path of error messages
 * (fieldpath's String form).
 */
#include "api/fieldset.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "base/base.h"
#include "codec/patch.h"

struct walk {
    const struct api_fs_types *types;
    struct strbuf tpath; /* "spec.containers.ports" */
    struct strbuf disp;  /* ".spec.containers[name=\"app\"].ports" */
    struct strbuf *err;  /* may be NULL */
};

static void walk_init(struct walk *w, const struct api_fs_types *types, struct strbuf *err)
{
    w->types = types;
    strbuf_init(&w->tpath);
    strbuf_init(&w->disp);
    w->err = err;
}

static void walk_release(struct walk *w)
{
    strbuf_release(&w->tpath);
    strbuf_release(&w->disp);
}

static void type_at(const struct walk *w, struct api_fs_type *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (w->types && w->types->fn)
        w->types->fn(w->tpath.buf, w->types->userdata, ret);
}

/* Enters member name; returns the lengths to restore with leave(). */
static void enter(struct walk *w, const char *name, size_t *ret_t, size_t *ret_d)
{
    *ret_t = w->tpath.len;
    *ret_d = w->disp.len;
    if (w->tpath.len)
        strbuf_addch(&w->tpath, '.');
    strbuf_addstr(&w->tpath, name);
    strbuf_addf(&w->disp, ".%s", name);
}

static void leave(struct walk *w, size_t t, size_t d)
{
    strbuf_setlen(&w->tpath, t);
    strbuf_setlen(&w->disp, d);
}

/* ---- nodes ---- */

static bool is_member(const cJSON *n)
{
    return cJSON_GetObjectItemCaseSensitive(n, ".") != NULL;
}

/*
 * Lists longer than this are owned whole, as atomic lists are. Items are matched by id with
 * linear searches here, so a granular list costs time quadratic in its length, and a 3 MiB
 * body holds lists of 100,000 items: minutes of CPU for one write. kube keeps such lists
 * granular at any length; here an owner of one owns all of it, and a conflict names the list.
 */
#define FS_GRANULAR_MAX 512

/* Whether a (NULL or not a list: no bound) is a set or map list matched item by item. */
static bool granular(const cJSON *a, const struct api_fs_type *t)
{
    const cJSON *c;
    int n = 0;

    if (t->kind != API_FS_SET && t->kind != API_FS_MAP)
        return false;
    if (!cJSON_IsArray(a))
        return true;
    cJSON_ArrayForEach(c, a)
    {
        if (++n > FS_GRANULAR_MAX)
            return false;
    }
    return true;
}

static void mark(cJSON *n)
{
    if (!is_member(n))
        CHECK(cJSON_AddObjectToObject(n, "."));
}

static cJSON *child(cJSON *n, const char *key)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(n, key);

    if (!c)
        CHECK(c = cJSON_AddObjectToObject(n, key));
    return c;
}

/* Deletes n's child key when it holds nothing. */
static void drop_if_empty(cJSON *n, const char *key)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(n, key);

    if (c && !c->child)
        cJSON_DeleteItemFromObjectCaseSensitive(n, key);
}

static char *member_key(const char *name)
{
    struct strbuf k = STRBUF_INIT;

    strbuf_addf(&k, "f:%s", name);
    return strbuf_detach(&k, NULL);
}

cJSON *api_fieldset_new(void)
{
    cJSON *s = cJSON_CreateObject();

    CHECK(s);
    return s;
}

/* ---- item identity ---- */

static char *print_json(const cJSON *v)
{
    char *p = cJSON_PrintUnformatted(v);

    CHECK(p);
    return p;
}

static bool is_scalar(const cJSON *v)
{
    return cJSON_IsString(v) || cJSON_IsNumber(v) || cJSON_IsBool(v) || cJSON_IsNull(v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The "k:" or "v:" name of a list item, a new string; NULL when it has none: a map-list item
 * that is not an object or lacks a key without default (*ret_missing names the key, or is NULL
 * for a non-object), a set item that is not a scalar.
 */
static char *item_id(const cJSON *item, const struct api_fs_type *t, const char **ret_missing)
{
    struct strbuf id = STRBUF_INIT;
    const char *names[API_FS_MAX_KEYS];
    size_t n = 0;
    cJSON *k;
    char *p;

    *ret_missing = NULL;
    if (t->kind == API_FS_SET) {
        if (!is_scalar(item))
            return NULL;
        p = print_json(item);
        strbuf_addf(&id, "v:%s", p);
        cJSON_free(p);
        return strbuf_detach(&id, NULL);
    }
    if (!cJSON_IsObject(item))
        return NULL;
    while (n < API_FS_MAX_KEYS && t->keys[n]) {
        names[n] = t->keys[n];
        n++;
    }
    qsort(names, n, sizeof(names[0]), cmp_str);
    CHECK(k = cJSON_CreateObject());
    for (size_t i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, names[i]);
        cJSON *dv = NULL;

        if (!v || cJSON_IsNull(v)) {
            const char *d = NULL;
            for (size_t j = 0; t->keys[j]; j++)
                if (!strcmp(t->keys[j], names[i]))
                    d = t->key_dflt[j];
            if (!d || !(dv = cJSON_Parse(d))) {
                *ret_missing = names[i];
                cJSON_Delete(k);
                return NULL;
            }
        } else {
            CHECK(dv = cJSON_Duplicate(v, true));
        }
        CHECK(cJSON_AddItemToObject(k, names[i], dv));
    }
    p = print_json(k);
    cJSON_Delete(k);
    strbuf_addf(&id, "k:%s", p);
    cJSON_free(p);
    return strbuf_detach(&id, NULL);
}

/* Appends the display form of a node name: ".x", "[k=v,...]", "[=v]", "[n]". */
static void disp_name(struct strbuf *out, const char *key)
{
    if (!strncmp(key, "f:", 2)) {
        strbuf_addf(out, ".%s", key + 2);
    } else if (!strncmp(key, "k:", 2)) {
        cJSON *k = cJSON_Parse(key + 2), *m;
        bool first = true;

        strbuf_addch(out, '[');
        cJSON_ArrayForEach(m, k)
        {
            char *p = print_json(m);
            strbuf_addf(out, "%s%s=%s", first ? "" : ",", m->string, p);
            cJSON_free(p);
            first = false;
        }
        strbuf_addch(out, ']');
        cJSON_Delete(k);
    } else if (!strncmp(key, "v:", 2)) {
        strbuf_addf(out, "[=%s]", key + 2);
    } else if (!strncmp(key, "i:", 2)) {
        strbuf_addf(out, "[%s]", key + 2);
    }
}

static int fail(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct walk *w, const char *fmt, ...)
{
    va_list ap;

    if (w->err) {
        strbuf_addf(w->err, "%s: ", w->disp.len ? w->disp.buf : ".");
        va_start(ap, fmt);
        strbuf_vaddf(w->err, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

/* ---- the set of an object ---- */

static int fs_value(struct walk *w, const cJSON *v, cJSON *node);

static int fs_members(struct walk *w, const cJSON *obj, cJSON *node)
{
    const cJSON *m;

    cJSON_ArrayForEach(m, obj)
    {
        char *key = member_key(m->string);
        size_t t, d;
        int r;

        enter(w, m->string, &t, &d);
        r = fs_value(w, m, child(node, key));
        leave(w, t, d);
        free(key);
        if (r < 0)
            return r;
    }
    return 0;
}

static int fs_items(struct walk *w, const cJSON *arr, cJSON *node, const struct api_fs_type *t)
{
    const cJSON *item;

    cJSON_ArrayForEach(item, arr)
    {
        const char *missing;
        char *id = item_id(item, t, &missing);
        size_t d = w->disp.len;
        int r = 0;

        if (!id) {
            if (t->kind == API_FS_SET)
                return fail(w, "a set list may only hold scalar values");
            if (!missing)
                return fail(w, "associative list with keys may not have non-map elements");
            return fail(w,
                        "associative list with keys has an element that omits key field \"%s\" "
                        "(and doesn't have default value)",
                        missing);
        }
        if (cJSON_GetObjectItemCaseSensitive(node, id)) {
            struct strbuf k = STRBUF_INIT;
            disp_name(&k, id);
            r = fail(w, "duplicate entries for key %s", k.buf);
            strbuf_release(&k);
            free(id);
            return r;
        }
        mark(child(node, id));
        disp_name(&w->disp, id);
        if (t->kind == API_FS_MAP)
            r = fs_members(w, item, child(node, id));
        strbuf_setlen(&w->disp, d);
        free(id);
        if (r < 0)
            return r;
    }
    return 0;
}

static int fs_value(struct walk *w, const cJSON *v, cJSON *node)
{
    struct api_fs_type t;

    type_at(w, &t);
    if (cJSON_IsObject(v) && v->child && t.kind != API_FS_ATOMIC)
        return fs_members(w, v, node);
    if (cJSON_IsArray(v) && v->child && granular(v, &t))
        return fs_items(w, v, node, &t);
    mark(node);
    return 0;
}

int api_fieldset_from_object(const cJSON *obj, const struct api_fs_types *types, cJSON **ret,
                             struct strbuf *err)
{
    struct walk w;
    cJSON *s = api_fieldset_new();
    int r = 0;

    walk_init(&w, types, err);
    if (cJSON_IsObject(obj))
        r = fs_members(&w, obj, s);
    walk_release(&w);
    if (r < 0) {
        cJSON_Delete(s);
        return r;
    }
    *ret = s;
    return 0;
}

/* ---- compare ---- */

/* The ids of arr's items (a new array of n strings), or NULL when one has none. */
static char **item_ids(const cJSON *arr, const struct api_fs_type *t, size_t *ret_n)
{
    size_t n = (size_t)cJSON_GetArraySize(arr), i = 0;
    char **ids = xcalloc(n ? n : 1, sizeof(*ids));
    const cJSON *item;

    cJSON_ArrayForEach(item, arr)
    {
        const char *missing;
        if (!(ids[i++] = item_id(item, t, &missing))) {
            for (size_t j = 0; j < i; j++)
                free(ids[j]);
            free(ids);
            return NULL;
        }
    }
    *ret_n = n;
    return ids;
}

static void free_ids(char **ids, size_t n)
{
    for (size_t i = 0; ids && i < n; i++)
        free(ids[i]);
    free(ids);
}

static ssize_t find_id(char *const *ids, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] && !strcmp(ids[i], id))
            return (ssize_t)i;
    return -1;
}

static void cmp_value(struct walk *w, const cJSON *o, const cJSON *n, cJSON *chg, cJSON *rem,
                      bool top);

static void cmp_members(struct walk *w, const cJSON *o, const cJSON *n, cJSON *chg, cJSON *rem,
                        bool root)
{
    const cJSON *m;

    cJSON_ArrayForEach(m, n)
    {
        char *key = member_key(m->string);
        size_t t, d;

        enter(w, m->string, &t, &d);
        cmp_value(w, cJSON_GetObjectItemCaseSensitive(o, m->string), m, child(chg, key),
                  child(rem, key), root);
        leave(w, t, d);
        drop_if_empty(chg, key);
        drop_if_empty(rem, key);
        free(key);
    }
    cJSON_ArrayForEach(m, o)
    {
        char *key;
        size_t t, d;

        if (cJSON_GetObjectItemCaseSensitive(n, m->string))
            continue;
        key = member_key(m->string);
        enter(w, m->string, &t, &d);
        cmp_value(w, m, NULL, child(chg, key), child(rem, key), root);
        leave(w, t, d);
        drop_if_empty(chg, key);
        drop_if_empty(rem, key);
        free(key);
    }
}

static bool empty_or_absent(const cJSON *v)
{
    return !v || cJSON_IsNull(v) || ((cJSON_IsObject(v) || cJSON_IsArray(v)) && !v->child);
}

/* Both lists granular: items by id. Returns false when an item has no id (then atomic). */
static bool cmp_items(struct walk *w, const cJSON *o, const cJSON *n, cJSON *chg, cJSON *rem,
                      const struct api_fs_type *t)
{
    size_t no = 0, nn = 0, i = 0;
    char **oid = o ? item_ids(o, t, &no) : NULL, **nid = n ? item_ids(n, t, &nn) : NULL;
    const cJSON *item;

    if ((o && !oid) || (n && !nid)) {
        free_ids(oid, no);
        free_ids(nid, nn);
        return false;
    }
    cJSON_ArrayForEach(item, n)
    {
        ssize_t j = find_id(oid, no, nid[i]);
        if (find_id(nid, i, nid[i]) < 0) { /* a repeated item counts once */
            if (j < 0)
                mark(child(chg, nid[i]));
            if (t->kind == API_FS_MAP)
                cmp_members(w, j < 0 ? NULL : cJSON_GetArrayItem(o, (int)j), item,
                            child(chg, nid[i]), child(rem, nid[i]), false);
            drop_if_empty(chg, nid[i]);
            drop_if_empty(rem, nid[i]);
        }
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(item, o)
    {
        if (find_id(nid, nn, oid[i]) < 0 && find_id(oid, i, oid[i]) < 0) {
            mark(child(rem, oid[i]));
            if (t->kind == API_FS_MAP)
                cmp_members(w, item, NULL, child(chg, oid[i]), child(rem, oid[i]), false);
            drop_if_empty(chg, oid[i]);
        }
        i++;
    }
    free_ids(oid, no);
    free_ids(nid, nn);
    return true;
}

static void cmp_value(struct walk *w, const cJSON *o, const cJSON *n, cJSON *chg, cJSON *rem,
                      bool top)
{
    struct api_fs_type t;
    bool both_empty = empty_or_absent(o) && empty_or_absent(n);

    type_at(w, &t);
    if (!both_empty && t.kind != API_FS_ATOMIC && (!o || cJSON_IsObject(o)) &&
        (!n || cJSON_IsObject(n))) {
        if (!o && !top)
            mark(chg);
        if (!n && !top)
            mark(rem);
        cmp_members(w, o, n, chg, rem, false);
        return;
    }
    if (!both_empty && granular(o, &t) && granular(n, &t) && (!o || cJSON_IsArray(o)) &&
        (!n || cJSON_IsArray(n)) && cmp_items(w, o, n, chg, rem, &t))
        return;
    if (o && !n)
        mark(rem);
    else if (n && (!o || !json_value_equal(o, n)))
        mark(chg); /* added or modified */
}

void api_fieldset_compare(const cJSON *old, const cJSON *new_obj, const struct api_fs_types *types,
                          cJSON **ret_changed, cJSON **ret_removed)
{
    struct walk w;
    cJSON *chg = api_fieldset_new(), *rem = api_fieldset_new();

    walk_init(&w, types, NULL);
    cmp_members(&w, cJSON_IsObject(old) ? old : NULL, cJSON_IsObject(new_obj) ? new_obj : NULL, chg,
                rem, true);
    walk_release(&w);
    *ret_changed = chg;
    *ret_removed = rem;
}

/* ---- algebra ---- */

void api_fieldset_union(cJSON *a, const cJSON *b)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, b)
    {
        if (!strcmp(c->string, "."))
            mark(a);
        else
            api_fieldset_union(child(a, c->string), c);
    }
}

void api_fieldset_subtract(cJSON *a, const cJSON *b)
{
    const cJSON *c;

    if (a == b) {
        while (a->child)
            cJSON_Delete(cJSON_DetachItemViaPointer(a, a->child));
        return;
    }

    cJSON_ArrayForEach(c, b)
    {
        cJSON *ac = cJSON_GetObjectItemCaseSensitive(a, c->string);

        if (!ac)
            continue;
        if (!strcmp(c->string, ".")) {
            cJSON_DeleteItemFromObjectCaseSensitive(a, ".");
            continue;
        }
        api_fieldset_subtract(ac, c);
        drop_if_empty(a, c->string);
    }
}

static void remove_at(cJSON *s, const char *const *path, bool subtree)
{
    char *key = member_key(path[0]);
    cJSON *c = cJSON_GetObjectItemCaseSensitive(s, key);

    if (c && path[1])
        remove_at(c, path + 1, subtree);
    else if (c && subtree)
        cJSON_DeleteItemFromObjectCaseSensitive(s, key);
    else if (c)
        cJSON_DeleteItemFromObjectCaseSensitive(c, ".");
    drop_if_empty(s, key);
    free(key);
}

void api_fieldset_remove(cJSON *s, const char *const *path, bool subtree)
{
    if (path[0])
        remove_at(s, path, subtree);
}

void api_fieldset_keep_only(cJSON *s, const char *const *path)
{
    char *key;
    cJSON *c, *next;

    if (!path[0])
        return;
    key = member_key(path[0]);
    for (c = s->child; c; c = next) {
        next = c->next;
        if (strcmp(c->string, key))
            cJSON_Delete(cJSON_DetachItemViaPointer(s, c));
    }
    if ((c = cJSON_GetObjectItemCaseSensitive(s, key)))
        api_fieldset_keep_only(c, path + 1);
    free(key);
}

cJSON *api_fieldset_intersect(const cJSON *a, const cJSON *b)
{
    cJSON *s = api_fieldset_new();
    const cJSON *c;

    if (is_member(a) && is_member(b))
        mark(s);
    cJSON_ArrayForEach(c, a)
    {
        const cJSON *bc;
        cJSON *i;

        if (!strcmp(c->string, ".") || !(bc = cJSON_GetObjectItemCaseSensitive(b, c->string)))
            continue;
        i = api_fieldset_intersect(c, bc);
        if (i->child)
            CHECK(cJSON_AddItemToObject(s, c->string, i));
        else
            cJSON_Delete(i);
    }
    return s;
}

bool api_fieldset_is_empty(const cJSON *s)
{
    return !s || !s->child;
}

bool api_fieldset_equal(const cJSON *a, const cJSON *b)
{
    const cJSON *c;

    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return false;
    cJSON_ArrayForEach(c, a)
    {
        const cJSON *bc = cJSON_GetObjectItemCaseSensitive(b, c->string);
        if (!bc || !api_fieldset_equal(c, bc))
            return false;
    }
    return true;
}

/* ---- wire form ---- */

/* The canonical name of a decoded node: "k:" keys reprinted in sorted order, "v:" reprinted. */
static char *canonical_name(const char *key)
{
    struct strbuf out = STRBUF_INIT;
    cJSON *v;

    if (!strcmp(key, ".") || !strncmp(key, "f:", 2)) {
        strbuf_addstr(&out, key);
        return strbuf_detach(&out, NULL);
    }
    if (!strncmp(key, "i:", 2)) {
        const char *p = key + 2;
        if (!*p)
            return NULL;
        for (; *p; p++)
            if (*p < '0' || *p > '9')
                return NULL;
        strbuf_addstr(&out, key);
        return strbuf_detach(&out, NULL);
    }
    if (strncmp(key, "k:", 2) && strncmp(key, "v:", 2))
        return NULL;
    if (!(v = cJSON_Parse(key + 2)))
        return NULL;
    if (key[0] == 'k') {
        const char *names[API_FS_MAX_KEYS + 1] = {0};
        struct api_fs_type t = {.kind = API_FS_MAP};
        const char *missing;
        size_t n = 0;
        const cJSON *m;
        char *id;

        if (!cJSON_IsObject(v) || cJSON_GetArraySize(v) > API_FS_MAX_KEYS) {
            cJSON_Delete(v);
            return NULL;
        }
        cJSON_ArrayForEach(m, v) names[n++] = m->string;
        memcpy(t.keys, names, sizeof(names));
        id = item_id(v, &t, &missing);
        cJSON_Delete(v);
        return id;
    }
    {
        char *p = print_json(v);
        strbuf_addf(&out, "v:%s", p);
        cJSON_free(p);
    }
    cJSON_Delete(v);
    return strbuf_detach(&out, NULL);
}

static int decode_node(const cJSON *v, cJSON *node, struct strbuf *path, struct strbuf *err)
{
    const cJSON *c;
    bool children = false;

    if (!cJSON_IsObject(v)) {
        if (err)
            strbuf_addf(err, "%s: must be an object", path->len ? path->buf : ".");
        return -EINVAL;
    }
    cJSON_ArrayForEach(c, v)
    {
        char *name = canonical_name(c->string);
        size_t len = path->len;
        int r;

        if (!name) {
            if (err)
                strbuf_addf(err, "%s: invalid field name \"%s\"", path->len ? path->buf : ".",
                            c->string);
            return -EINVAL;
        }
        if (!strcmp(name, ".")) {
            free(name);
            if (!cJSON_IsObject(c)) {
                if (err)
                    strbuf_addf(err, "%s: \".\" must be an object", path->len ? path->buf : ".");
                return -EINVAL;
            }
            mark(node);
            continue;
        }
        children = true;
        disp_name(path, name);
        r = decode_node(c, child(node, name), path, err);
        strbuf_setlen(path, len);
        free(name);
        if (r < 0)
            return r;
    }
    if (!children)
        mark(node);
    return 0;
}

int api_fieldset_decode(const cJSON *v, cJSON **ret, struct strbuf *err)
{
    cJSON *s = api_fieldset_new();
    struct strbuf path = STRBUF_INIT;
    int r;

    if (cJSON_IsObject(v) && !v->child) {
        *ret = s; /* the empty set: no member at the root */
        return 0;
    }
    r = decode_node(v, s, &path, err);
    strbuf_release(&path);
    cJSON_Delete(cJSON_DetachItemFromObjectCaseSensitive(s, ".")); /* never the root */
    if (r < 0) {
        cJSON_Delete(s);
        return r;
    }
    *ret = s;
    return 0;
}

/* structured-merge-diff's PathElement order: field names, keys, values, indexes. */
static int name_rank(const char *k)
{
    return k[0] == '.' ? 0 : k[0] == 'f' ? 1 : k[0] == 'k' ? 2 : k[0] == 'v' ? 3 : 4;
}

static int cmp_names(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int d = name_rank(x) - name_rank(y);

    return d ? d : strcmp(x, y);
}

cJSON *api_fieldset_encode(const cJSON *s)
{
    cJSON *out = api_fieldset_new();
    size_t n = (size_t)cJSON_GetArraySize(s), i = 0;
    const char **names = xcalloc(n ? n : 1, sizeof(*names));
    const cJSON *c;

    cJSON_ArrayForEach(c, s) names[i++] = c->string;
    qsort(names, n, sizeof(*names), cmp_names);
    for (i = 0; i < n; i++) {
        if (!strcmp(names[i], ".")) {
            if (n > 1)
                CHECK(cJSON_AddObjectToObject(out, "."));
            continue;
        }
        CHECK(cJSON_AddItemToObject(
            out, names[i], api_fieldset_encode(cJSON_GetObjectItemCaseSensitive(s, names[i]))));
    }
    free(names);
    return out;
}

static void paths_of(const cJSON *s, struct strbuf *path, struct strbuf *out)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, s)
    {
        size_t len = path->len;

        if (!strcmp(c->string, "."))
            continue;
        disp_name(path, c->string);
        if (is_member(c))
            strbuf_addf(out, "%s\n", path->buf);
        paths_of(c, path, out);
        strbuf_setlen(path, len);
    }
}

void api_fieldset_paths(const cJSON *s, struct strbuf *out)
{
    struct strbuf path = STRBUF_INIT;

    paths_of(s, &path, out);
    strbuf_release(&path);
}

/* ---- merge ---- */

static int mg_value(struct walk *w, const cJSON *l, const cJSON *c, cJSON **ret);

/* Applies config object c's members to res (owned). */
static int mg_members(struct walk *w, cJSON *res, const cJSON *c)
{
    const cJSON *m;

    cJSON_ArrayForEach(m, c)
    {
        cJSON *v = NULL;
        size_t t, d;
        int r;

        if (cJSON_IsNull(m)) {
            cJSON_DeleteItemFromObjectCaseSensitive(res, m->string);
            continue;
        }
        enter(w, m->string, &t, &d);
        r = mg_value(w, cJSON_GetObjectItemCaseSensitive(res, m->string), m, &v);
        leave(w, t, d);
        if (r < 0)
            return r;
        if (cJSON_GetObjectItemCaseSensitive(res, m->string))
            CHECK(cJSON_ReplaceItemInObjectCaseSensitive(res, m->string, v));
        else
            CHECK(cJSON_AddItemToObject(res, m->string, v));
    }
    return 0;
}

/* One merged list item: a map item merged member by member, a set item as it is. */
static int mg_item(struct walk *w, const cJSON *li, const cJSON *ci, const struct api_fs_type *t,
                   cJSON **ret)
{
    cJSON *res;
    int r;

    if (t->kind != API_FS_MAP) {
        CHECK(*ret = cJSON_Duplicate(ci, true));
        return 0;
    }
    CHECK(res = li ? cJSON_Duplicate(li, true) : cJSON_CreateObject());
    if ((r = mg_members(w, res, ci)) < 0) {
        cJSON_Delete(res);
        return r;
    }
    *ret = res;
    return 0;
}

/*
 * A set or map list merged: live's items in their order, each item config also names merged
 * and preceded by the config items before it not yet placed, then config's remaining items.
 */
static int mg_list(struct walk *w, const cJSON *l, const cJSON *c, const struct api_fs_type *t,
                   cJSON **ret)
{
    size_t nl = 0, nc = 0, next = 0;
    char **lid = NULL, **cid = NULL;
    bool *placed = NULL;
    cJSON *res = NULL, *tmp = NULL;
    int r;

    /* Config items must have ids and be unique: the same checks as its field set. */
    tmp = api_fieldset_new();
    r = fs_items(w, c, tmp, t);
    cJSON_Delete(tmp);
    if (r < 0)
        return r;
    cid = item_ids(c, t, &nc);
    CHECK(cid);
    if (cJSON_IsArray(l))
        lid = item_ids(l, t, &nl); /* NULL: live breaks the list type, config replaces it */
    placed = xcalloc(nc ? nc : 1, sizeof(*placed));
    CHECK(res = cJSON_CreateArray());
    for (size_t i = 0; lid && i < nl; i++) {
        const cJSON *li = cJSON_GetArrayItem(l, (int)i);
        ssize_t j = find_id(cid, nc, lid[i]);
        cJSON *v = NULL;

        if (find_id(lid, i, lid[i]) >= 0 && j >= 0)
            continue; /* a repeated live item config names: merged once */
        if (j < 0) {
            CHECK(cJSON_AddItemToArray(res, cJSON_Duplicate(li, true)));
            continue;
        }
        if (placed[j])
            continue;
        for (; next <= (size_t)j; next++) {
            ssize_t k;
            if (placed[next])
                continue;
            k = find_id(lid, nl, cid[next]);
            r = mg_item(w, k < 0 ? NULL : cJSON_GetArrayItem(l, (int)k),
                        cJSON_GetArrayItem(c, (int)next), t, &v);
            if (r < 0)
                goto out;
            CHECK(cJSON_AddItemToArray(res, v));
            placed[next] = true;
        }
    }
    for (size_t j = 0; j < nc; j++) {
        ssize_t k;
        cJSON *v = NULL;

        if (placed[j])
            continue;
        k = lid ? find_id(lid, nl, cid[j]) : -1;
        r = mg_item(w, k < 0 ? NULL : cJSON_GetArrayItem(l, (int)k), cJSON_GetArrayItem(c, (int)j),
                    t, &v);
        if (r < 0)
            goto out;
        CHECK(cJSON_AddItemToArray(res, v));
    }
    *ret = res;
    res = NULL;
    r = 0;
out:
    cJSON_Delete(res);
    free(placed);
    free_ids(lid, nl);
    free_ids(cid, nc);
    return r;
}

static int mg_value(struct walk *w, const cJSON *l, const cJSON *c, cJSON **ret)
{
    struct api_fs_type t;
    cJSON *res;
    int r;

    type_at(w, &t);
    if (cJSON_IsObject(c) && t.kind != API_FS_ATOMIC) {
        CHECK(res = cJSON_IsObject(l) ? cJSON_Duplicate(l, true) : cJSON_CreateObject());
        if ((r = mg_members(w, res, c)) < 0) {
            cJSON_Delete(res);
            return r;
        }
        *ret = res;
        return 0;
    }
    if (cJSON_IsArray(c) && granular(c, &t) && granular(l, &t))
        return mg_list(w, l, c, &t, ret);
    CHECK(*ret = cJSON_Duplicate(c, true));
    return 0;
}

int api_fieldset_merge(const cJSON *live, const cJSON *config, const struct api_fs_types *types,
                       cJSON **ret, struct strbuf *err)
{
    struct walk w;
    cJSON *res;
    int r;

    CHECK(res = cJSON_IsObject(live) ? cJSON_Duplicate(live, true) : cJSON_CreateObject());
    walk_init(&w, types, err);
    r = cJSON_IsObject(config) ? mg_members(&w, res, config) : 0;
    walk_release(&w);
    if (r < 0) {
        cJSON_Delete(res);
        return r;
    }
    *ret = res;
    return 0;
}

/* ---- prune ---- */

static void pr_value(struct walk *w, cJSON *v, const cJSON *drop, const cJSON *keep);

static bool is_key(const struct api_fs_type *item_t, const char *name)
{
    for (size_t i = 0; item_t && item_t->keys[i]; i++)
        if (!strcmp(item_t->keys[i], name))
            return true;
    return false;
}

/* item_t: the list type when obj is a map-list item, whose key fields stay while it does. */
static void pr_members(struct walk *w, cJSON *obj, const cJSON *drop, const cJSON *keep,
                       const struct api_fs_type *item_t)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, drop)
    {
        const cJSON *kc = keep ? cJSON_GetObjectItemCaseSensitive(keep, c->string) : NULL;
        const char *name = c->string + 2;
        cJSON *target;
        size_t t, d;

        if (strncmp(c->string, "f:", 2) || is_key(item_t, name) ||
            !(target = cJSON_GetObjectItemCaseSensitive(obj, name)))
            continue;
        if (is_member(c) && !kc) {
            cJSON_DeleteItemFromObjectCaseSensitive(obj, name);
            continue;
        }
        if (kc && is_member(kc))
            continue;
        enter(w, name, &t, &d);
        pr_value(w, target, c, kc);
        leave(w, t, d);
    }
}

static void pr_value(struct walk *w, cJSON *v, const cJSON *drop, const cJSON *keep)
{
    struct api_fs_type t;
    const cJSON *c;
    size_t n = 0;
    char **ids;

    if (cJSON_IsObject(v)) {
        pr_members(w, v, drop, keep, NULL);
        return;
    }
    type_at(w, &t);
    if (!cJSON_IsArray(v) || !granular(v, &t) || !(ids = item_ids(v, &t, &n)))
        return;
    cJSON_ArrayForEach(c, drop)
    {
        const cJSON *kc = keep ? cJSON_GetObjectItemCaseSensitive(keep, c->string) : NULL;
        ssize_t j;

        if (strncmp(c->string, "k:", 2) && strncmp(c->string, "v:", 2))
            continue;
        j = find_id(ids, n, c->string);
        if (j < 0 || (kc && is_member(kc)))
            continue;
        if (is_member(c) && !kc) {
            cJSON_DeleteItemFromArray(v, (int)j);
            free(ids[j]);
            memmove(ids + j, ids + j + 1, (n - (size_t)j - 1) * sizeof(*ids));
            n--;
        } else if (t.kind == API_FS_MAP) {
            pr_members(w, cJSON_GetArrayItem(v, (int)j), c, kc, &t);
        }
    }
    free_ids(ids, n);
}

void api_fieldset_prune(cJSON *obj, const cJSON *drop, const cJSON *keep,
                        const struct api_fs_types *types)
{
    struct walk w;

    walk_init(&w, types, NULL);
    pr_members(&w, obj, drop, keep, NULL);
    walk_release(&w);
}
