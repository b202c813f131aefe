/*
 * Strategic merge patch (see smp.h for the rules and where they come from). Like patch.c it
 * works on a private copy of the document and swaps it in only when everything succeeded.
 *
 * Bounds: recursion follows the patch, whose depth is checked against PATCH_MAX_DEPTH at every
 * level; the result can hold no more items than the document plus the patch, and is measured
 * before it is returned. Everything a list merge looks up (merge key values, set members,
 * ranks) goes through hashed sets of scalar values, so a patch with many elements cannot make
 * the merge quadratic.
 */
#include "codec/smp.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "codec/codec-int.h"
#include "codec/codec.h"
#include "codec/patch.h"

#define SMP_PATH_MAX 256
#define NONE         SIZE_MAX
#define PREVIEW_SIZE 96
/* Type tag + number text. */
#define VKEY_MAX (CODEC_NUMBER_MAX + 1)

static const char DIR_PATCH[] = "$patch";
static const char DIR_RETAIN[] = "$retainKeys";
static const char DIR_ORDER[] = "$setElementOrder/";
static const char DIR_DELETE[] = "$deleteFromPrimitiveList/";

struct smp_state {
    smp_lookup_fn lookup;
    const void *ud;
    struct codec_error *err;
    char path[SMP_PATH_MAX]; /* member names from the root, for lookups and messages */
    size_t len;
    size_t overflow; /* pushes that did not fit in path */
};

static int merge_object(struct smp_state *s, cJSON *target, const cJSON *patch, int level);

/* ---- path and errors ---- */

static size_t path_push(struct smp_state *s, const char *name)
{
    size_t old = s->len, n = strlen(name);

    if (s->overflow || old + n + 1 >= sizeof(s->path)) {
        s->overflow++;
        return old;
    }
    if (old)
        s->path[s->len++] = '.';
    memcpy(s->path + s->len, name, n);
    s->len += n;
    s->path[s->len] = '\0';
    return old;
}

static void path_pop(struct smp_state *s, size_t old)
{
    if (s->overflow) {
        s->overflow--;
        return;
    }
    s->len = old;
    s->path[old] = '\0';
}

/* Formats err->msg as '<path>: <fmt>' (just '<fmt>' at the root) and returns r. */
__attribute__((format(printf, 3, 4))) static int fail(struct smp_state *s, int r, const char *fmt,
                                                      ...)
{
    char reason[sizeof(s->err->msg)];
    va_list ap;

    if (!s->err)
        return r;
    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start initialised ap */
    (void)vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (s->len || s->overflow)
        codec__set_error(s->err, 0, 0, "%s%s: %s", s->path, s->overflow ? "..." : "", reason);
    else
        codec__set_error(s->err, 0, 0, "%s", reason);
    return r;
}

static int oom(struct smp_state *s)
{
    return fail(s, -ENOMEM, "out of memory");
}

static int too_deep(struct smp_state *s)
{
    return fail(s, -E2BIG, "the patch nests deeper than %d", PATCH_MAX_DEPTH);
}

static void preview(char dst[PREVIEW_SIZE], const char *str)
{
    codec__preview(dst, PREVIEW_SIZE, str, strlen(str));
}

static bool has_prefix(const char *str, const char *prefix)
{
    return strncmp(str, prefix, strlen(prefix)) == 0;
}

/* ---- scalar values ---- */

/* Values a merge key, a set member or a deletion may hold: Go compares them with ==. */
static bool is_key_scalar(const cJSON *v)
{
    return cJSON_IsString(v) || cJSON_IsNumber(v) || cJSON_IsBool(v);
}

/* Equality of two key scalars; false when either is absent or not a key scalar. */
static bool scalar_equal(const cJSON *a, const cJSON *b)
{
    if (!a || !b || !is_key_scalar(a) || !is_key_scalar(b) || (a->type & 0xff) != (b->type & 0xff))
        return false;
    if (cJSON_IsString(a))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (cJSON_IsNumber(a))
        return a->valuedouble == b->valuedouble;
    return true;
}

/* The merge key member of list element x when it holds a scalar, else NULL. */
static const cJSON *key_of(const cJSON *x, const char *key)
{
    const cJSON *m = cJSON_IsObject(x) ? cJSON_GetObjectItemCaseSensitive(x, key) : NULL;

    return m && is_key_scalar(m) ? m : NULL;
}

/*
 * A set of scalar values, each mapped to the position it was first added at. Strings and the
 * other scalars live in separate maps so "1" and 1 differ; keys are copies, as the trees they
 * come from change while the set is in use.
 */
struct vset {
    struct codec_strmap strs, others;
    char **owned; /* the keys */
    size_t *pos;  /* the positions, pointed to by the maps' values */
    size_t n, cap;
};

static int vset_init(struct vset *v, size_t cap)
{
    *v = (struct vset){.cap = cap};
    v->owned = ccalloc(cap ? cap : 1, sizeof(char *));
    v->pos = ccalloc(cap ? cap : 1, sizeof(size_t));
    return v->owned && v->pos ? 0 : -ENOMEM;
}

static void vset_release(struct vset *v)
{
    codec__strmap_release(&v->strs);
    codec__strmap_release(&v->others);
    for (size_t i = 0; i < v->n; i++)
        free(v->owned[i]);
    free(v->owned);
    free(v->pos);
    *v = (struct vset){0};
}

/* The map x belongs in, and its key text (buf is used for non-strings). */
static const char *vset_key(struct vset *v, const cJSON *x, char buf[VKEY_MAX],
                            struct codec_strmap **ret_map)
{
    if (cJSON_IsString(x)) {
        *ret_map = &v->strs;
        return x->valuestring;
    }
    *ret_map = &v->others;
    if (cJSON_IsNumber(x)) {
        buf[0] = 'n';
        (void)codec__format_number(x->valuedouble, buf + 1);
    } else {
        buf[0] = cJSON_IsTrue(x) ? 't' : 'f';
        buf[1] = '\0';
    }
    return buf;
}

/* Adds scalar x at position pos: 0 added, 1 already there (kept at its first position),
 * -ENOMEM. */
static int vset_add(struct vset *v, const cJSON *x, size_t pos)
{
    struct codec_strmap *m;
    char buf[VKEY_MAX], *copy;
    const char *k = vset_key(v, x, buf, &m);
    int r;

    if (codec__strmap_find(m, k))
        return 1;
    CHECK(v->n < v->cap);
    copy = cstrndup(k, strlen(k));
    if (!copy)
        return -ENOMEM;
    v->owned[v->n] = copy;
    v->pos[v->n] = pos;
    r = codec__strmap_add(m, copy, &v->pos[v->n]);
    v->n++;
    return r < 0 ? r : 0;
}

/* The position x was added at, or NONE (also for non-scalars). */
static size_t vset_find(const struct vset *v, const cJSON *x)
{
    struct codec_strmap *m;
    char buf[VKEY_MAX];
    const char *k;
    void **slot;

    if (!x || !is_key_scalar(x))
        return NONE;
    /* vset_key() only picks one of v's maps; nothing is written to v. */
    k = vset_key((struct vset *)v, x, buf, &m);
    slot = codec__strmap_find(m, k);
    return slot ? *(const size_t *)*slot : NONE;
}

/* ---- building values ---- */

static size_t count_children(const cJSON *v)
{
    size_t n = 0;

    for (const cJSON *c = v ? v->child : NULL; c; c = c->next)
        n++;
    return n;
}

static void clear_children(cJSON *v)
{
    while (v->child)
        cJSON_Delete(cJSON_DetachItemViaPointer(v, v->child));
}

/*
 * A patch value that has nothing to merge with: objects are merged into {} (so their
 * directives apply and their nulls go), arrays are built element by element, scalars copied.
 */
static int materialize(struct smp_state *s, const cJSON *pv, int level, cJSON **ret)
{
    cJSON *v, *x = NULL;
    int r = 0;

    if (level > PATCH_MAX_DEPTH)
        return too_deep(s);
    if (cJSON_IsObject(pv)) {
        v = cJSON_CreateObject();
        if (!v)
            return oom(s);
        r = merge_object(s, v, pv, level);
    } else if (cJSON_IsArray(pv)) {
        v = cJSON_CreateArray();
        if (!v)
            return oom(s);
        for (const cJSON *e = pv->child; e && r == 0; e = e->next) {
            r = materialize(s, e, level + 1, &x);
            if (r == 0)
                CHECK(cJSON_AddItemToArray(v, x));
        }
    } else {
        v = cJSON_Duplicate(pv, false);
        if (!v)
            return oom(s);
        codec__set_key(v, NULL);
    }
    if (r < 0) {
        cJSON_Delete(v);
        return r;
    }
    *ret = v;
    return 0;
}

/* ---- list order ---- */

struct elem {
    cJSON *item;
    size_t orig; /* position of its value or key in the original list, or NONE */
    size_t rank; /* position in the patch list or $setElementOrder, or NONE */
    size_t idx;  /* position now, to keep the sort stable */
};

static int cmp_rank(const void *a, const void *b)
{
    const struct elem *x = a, *y = b;

    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Puts the n elements of arr (described by es, in list order) in their final order: ranked
 * elements sorted by rank; unranked ones keep their order and are merged in before the first
 * ranked element that came after them in the original list (upstream normalizeElementOrder
 * and mergeSortedSlice).
 */
static int arrange(struct smp_state *s, cJSON *arr, struct elem *es, size_t n)
{
    struct elem *ranked;
    cJSON **out;
    size_t nr = 0, ns = 0, i = 0, j = 0, k;

    ranked = ccalloc(n ? n : 1, sizeof(*ranked));
    out = ccalloc(n ? n : 1, sizeof(cJSON *));
    if (!ranked || !out) {
        free(ranked);
        free(out);
        return oom(s);
    }
    for (k = 0; k < n; k++) {
        if (es[k].rank != NONE)
            ranked[nr++] = es[k];
        else
            es[ns++] = es[k]; /* unranked, compacted in place (ns <= k) */
    }
    qsort(ranked, nr, sizeof(*ranked), cmp_rank);
    for (k = 0; k < n; k++) {
        bool take_server;

        if (i < ns && j < nr)
            take_server =
                es[i].orig != NONE && ranked[j].orig != NONE && es[i].orig < ranked[j].orig;
        else
            take_server = i < ns;
        out[k] = take_server ? es[i++].item : ranked[j++].item;
    }
    arr->child = NULL;
    for (k = 0; k < n; k++) {
        out[k]->next = NULL;
        out[k]->prev = k ? out[k - 1] : NULL;
        if (k)
            out[k - 1]->next = out[k];
        else
            arr->child = out[k];
    }
    if (n)
        arr->child->prev = out[n - 1];
    free(ranked);
    free(out);
    return 0;
}

/* Whether a patch list element carries "$patch" (special elements take no place in orders). */
static bool is_special(const cJSON *e)
{
    return cJSON_IsObject(e) && cJSON_GetObjectItemCaseSensitive(e, DIR_PATCH);
}

/*
 * Checks that the ordinary elements of the patch list appear in $setElementOrder in the same
 * relative order (upstream validatePatchWithSetOrderList); key NULL compares whole scalars.
 */
static int check_order(struct smp_state *s, const cJSON *patch, const cJSON *order, const char *key)
{
    const cJSON *p = patch ? patch->child : NULL, *o = order->child;

    if (!p || !o)
        return 0;
    while (p && o) {
        if (is_special(p)) {
            p = p->next;
            continue;
        }
        if (key ? scalar_equal(key_of(p, key), key_of(o, key)) : scalar_equal(p, o))
            p = p->next;
        o = o->next;
    }
    while (p && is_special(p))
        p = p->next;
    if (p)
        return fail(s, -EINVAL, "the patch list is not in the order $setElementOrder gives");
    return 0;
}

/* Ranks for the elements of a $setElementOrder list (scalars, or objects with the key). */
static int rank_order(struct smp_state *s, const cJSON *order, const char *key, struct vset *rank)
{
    size_t i = 0;
    int r;

    r = vset_init(rank, count_children(order));
    if (r < 0)
        return oom(s);
    for (const cJSON *o = order->child; o; o = o->next, i++) {
        const cJSON *v = key ? key_of(o, key) : o;

        if (!v || !is_key_scalar(v))
            return key ? fail(s, -EINVAL, "$setElementOrder element %zu has no merge key \"%s\"", i,
                              key)
                       : fail(s, -EINVAL,
                              "$setElementOrder element %zu is not a string, number or boolean", i);
        if (vset_add(rank, v, i) < 0)
            return oom(s);
    }
    return 0;
}

/* Builds the element table of arr and arranges it. key NULL: the elements are scalars. */
static int order_list(struct smp_state *s, cJSON *arr, const struct vset *orig,
                      const struct vset *rank, const char *key)
{
    size_t n = count_children(arr), i = 0;
    struct elem *es;
    int r;

    es = ccalloc(n ? n : 1, sizeof(*es));
    if (!es)
        return oom(s);
    for (cJSON *x = arr->child; x; x = x->next, i++) {
        const cJSON *v = key ? key_of(x, key) : x;

        es[i] = (struct elem){x, vset_find(orig, v), vset_find(rank, v), i};
    }
    r = arrange(s, arr, es, n);
    free(es);
    return r;
}

/* ---- lists ---- */

/* An atomic list: the patch's elements, built afresh. */
static int replace_list(struct smp_state *s, cJSON *arr, const cJSON *patch, int level)
{
    cJSON *v = NULL;
    int r;

    clear_children(arr);
    for (const cJSON *e = patch->child; e; e = e->next) {
        r = materialize(s, e, level + 1, &v);
        if (r < 0)
            return r;
        CHECK(cJSON_AddItemToArray(arr, v));
    }
    return 0;
}

enum elem_kind { EK_NONE, EK_OBJECT, EK_STRING, EK_NUMBER, EK_BOOL };

/* All elements of a and b must be of one kind, and no lists or nulls (upstream
 * sliceElementType). */
static int list_kind(struct smp_state *s, const cJSON *a, const cJSON *b, enum elem_kind *ret)
{
    const cJSON *lists[2] = {a, b};
    enum elem_kind k = EK_NONE, ek;

    for (size_t l = 0; l < 2; l++) {
        for (const cJSON *e = lists[l] ? lists[l]->child : NULL; e; e = e->next) {
            if (cJSON_IsArray(e))
                return fail(s, -EINVAL, "lists of lists cannot be merged");
            if (cJSON_IsObject(e))
                ek = EK_OBJECT;
            else if (cJSON_IsString(e))
                ek = EK_STRING;
            else if (cJSON_IsNumber(e))
                ek = EK_NUMBER;
            else if (cJSON_IsBool(e))
                ek = EK_BOOL;
            else
                return fail(s, -EINVAL, "null list elements cannot be merged");
            if (k != EK_NONE && k != ek)
                return fail(s, -EINVAL, "list elements are not all of one type");
            k = ek;
        }
    }
    *ret = k;
    return 0;
}

/* A merge list of objects, by key. patch and order may each be NULL. */
static int merge_object_list(struct smp_state *s, cJSON *arr, const cJSON *patch,
                             const cJSON *order, const char *key, int level)
{
    struct vset orig = {0}, del = {0}, cur = {0}, rank = {0};
    size_t n0 = count_children(arr), np = count_children(patch), nslots = 0, i = 0;
    cJSON **slots = NULL, *x, *next, *v = NULL;
    bool replace = false;
    int r;

    if (vset_init(&orig, n0) < 0 || vset_init(&del, np) < 0 || vset_init(&cur, n0 + np) < 0 ||
        !(slots = ccalloc(n0 + np + 1, sizeof(cJSON *)))) {
        r = oom(s);
        goto out;
    }
    for (x = arr->child; x; x = x->next, i++) {
        const cJSON *kv = key_of(x, key);

        if (!kv) {
            r = fail(s, -EINVAL, "element %zu of the object has no merge key \"%s\"", i, key);
            goto out;
        }
        if (vset_add(&orig, kv, i) < 0) {
            r = oom(s);
            goto out;
        }
    }
    i = 0;
    for (const cJSON *e = patch ? patch->child : NULL; e; e = e->next, i++) {
        const cJSON *dir = cJSON_GetObjectItemCaseSensitive(e, DIR_PATCH), *kv = key_of(e, key);
        char pv[PREVIEW_SIZE];

        if (!dir && !kv) {
            r = fail(s, -EINVAL, "patch element %zu has no merge key \"%s\"", i, key);
            goto out;
        }
        if (!dir)
            continue;
        if (cJSON_IsString(dir) && !strcmp(dir->valuestring, "delete")) {
            if (!kv) {
                r = fail(s, -EINVAL, "patch element %zu deletes without merge key \"%s\"", i, key);
                goto out;
            }
            if (vset_add(&del, kv, i) < 0) {
                r = oom(s);
                goto out;
            }
        } else if (cJSON_IsString(dir) && !strcmp(dir->valuestring, "replace")) {
            replace = true;
        } else if (cJSON_IsString(dir) && !strcmp(dir->valuestring, "merge")) {
            r = fail(s, -EINVAL, "merging lists cannot yet be specified in the patch");
            goto out;
        } else {
            preview(pv, cJSON_IsString(dir) ? dir->valuestring : "(not a string)");
            r = fail(s, -EINVAL, "unknown patch type %s in patch element %zu", pv, i);
            goto out;
        }
    }

    if (replace)
        clear_children(arr);
    for (x = arr->child; x; x = next) {
        next = x->next;
        if (vset_find(&del, key_of(x, key)) != NONE) {
            cJSON_Delete(cJSON_DetachItemViaPointer(arr, x));
            continue;
        }
        r = vset_add(&cur, key_of(x, key), nslots);
        if (r < 0) {
            r = oom(s);
            goto out;
        }
        if (r == 0)
            slots[nslots++] = x;
    }
    for (const cJSON *e = patch ? patch->child : NULL; e; e = e->next) {
        size_t at;

        if (is_special(e))
            continue;
        at = vset_find(&cur, key_of(e, key));
        if (at != NONE) {
            r = merge_object(s, slots[at], e, level + 1);
            if (r < 0)
                goto out;
            continue;
        }
        r = materialize(s, e, level + 1, &v);
        if (r < 0)
            goto out;
        CHECK(cJSON_AddItemToArray(arr, v));
        if (vset_add(&cur, key_of(e, key), nslots) < 0) {
            v = NULL;
            r = oom(s);
            goto out;
        }
        slots[nslots++] = v;
        v = NULL;
    }

    /* The order: $setElementOrder, else the patch list's (nothing to do after a replace). */
    if (order) {
        r = rank_order(s, order, key, &rank);
        if (r == 0)
            r = check_order(s, patch, order, key);
    } else if (!replace && patch) {
        r = vset_init(&rank, np) < 0 ? oom(s) : 0;
        i = 0;
        for (const cJSON *e = patch->child; e && r == 0; e = e->next, i++)
            if (!is_special(e) && vset_add(&rank, key_of(e, key), i) < 0)
                r = oom(s);
    } else {
        r = 0;
        goto out;
    }
    if (r == 0)
        r = order_list(s, arr, &orig, &rank, key);
out:
    vset_release(&orig);
    vset_release(&del);
    vset_release(&cur);
    vset_release(&rank);
    free(slots);
    return r;
}

/* A merge list of scalars: a set. patch and order may each be NULL. */
static int merge_scalar_list(struct smp_state *s, cJSON *arr, const cJSON *patch,
                             const cJSON *order)
{
    struct vset orig = {0}, seen = {0}, rank = {0};
    size_t n0 = count_children(arr), np = count_children(patch), i = 0;
    cJSON *x, *next, *v;
    int r;

    if (vset_init(&orig, n0) < 0 || vset_init(&seen, n0 + np) < 0) {
        r = oom(s);
        goto out;
    }
    for (x = arr->child; x; x = next, i++) {
        next = x->next;
        if (vset_add(&orig, x, i) < 0 || (r = vset_add(&seen, x, i)) < 0) {
            r = oom(s);
            goto out;
        }
        if (r == 1)
            cJSON_Delete(cJSON_DetachItemViaPointer(arr, x));
    }
    for (const cJSON *e = patch ? patch->child : NULL; e; e = e->next) {
        r = vset_add(&seen, e, 0);
        if (r < 0) {
            r = oom(s);
            goto out;
        }
        if (r == 1)
            continue;
        v = cJSON_Duplicate(e, false);
        if (!v) {
            r = oom(s);
            goto out;
        }
        codec__set_key(v, NULL);
        CHECK(cJSON_AddItemToArray(arr, v));
    }
    if (order) {
        r = rank_order(s, order, NULL, &rank);
        if (r == 0)
            r = check_order(s, patch, order, NULL);
    } else {
        r = vset_init(&rank, np) < 0 ? oom(s) : 0;
        i = 0;
        for (const cJSON *e = patch ? patch->child : NULL; e && r == 0; e = e->next, i++)
            if (vset_add(&rank, e, i) < 0)
                r = oom(s);
    }
    if (r == 0)
        r = order_list(s, arr, &orig, &rank, NULL);
out:
    vset_release(&orig);
    vset_release(&seen);
    vset_release(&rank);
    return r;
}

/*
 * Merges the patch list (NULL when only $setElementOrder names the list) into arr, a list of
 * the working copy, by the strategy of the list at the current path.
 */
static int merge_list(struct smp_state *s, cJSON *arr, const cJSON *patch, const cJSON *order,
                      int level)
{
    struct smp_list_meta meta = {0};
    enum elem_kind k = EK_NONE;
    int r;

    if (level > PATCH_MAX_DEPTH)
        return too_deep(s);
    if (s->overflow || !s->lookup(s->path, s->ud, &meta) || !meta.merge)
        return patch ? replace_list(s, arr, patch, level) : 0;
    r = list_kind(s, arr, patch, &k);
    if (r < 0)
        return r;
    if (k == EK_NONE)
        return 0;
    if (k == EK_OBJECT && !meta.merge_key)
        return fail(s, -EINVAL, "a list of objects without a merge key cannot be merged");
    if (k != EK_OBJECT && meta.merge_key)
        return fail(s, -EINVAL, "the list elements must be objects with merge key \"%s\"",
                    meta.merge_key);
    if (k == EK_OBJECT)
        return merge_object_list(s, arr, patch, order, meta.merge_key, level);
    return merge_scalar_list(s, arr, patch, order);
}

/* $deleteFromPrimitiveList/<name>: removes the listed values from arr. */
static int delete_values(struct smp_state *s, cJSON *arr, const cJSON *values)
{
    struct vset del = {0};
    cJSON *x, *next;
    size_t i = 0;
    int r = 0;

    if (vset_init(&del, count_children(values)) < 0) {
        r = oom(s);
        goto out;
    }
    for (const cJSON *v = values->child; v; v = v->next, i++) {
        if (!is_key_scalar(v)) {
            r = fail(s, -EINVAL,
                     "$deleteFromPrimitiveList value %zu is not a string, number or boolean", i);
            goto out;
        }
        if (vset_add(&del, v, i) < 0) {
            r = oom(s);
            goto out;
        }
    }
    for (x = arr->child; x; x = next) {
        next = x->next;
        if (cJSON_IsArray(x) || cJSON_IsObject(x)) {
            r = fail(s, -EINVAL, "$deleteFromPrimitiveList on a list that is not of primitives");
            goto out;
        }
        if (vset_find(&del, x) != NONE)
            cJSON_Delete(cJSON_DetachItemViaPointer(arr, x));
    }
out:
    vset_release(&del);
    return r;
}

/* ---- objects ---- */

/*
 * Whether a "$" member name is meant as a directive: "$<word>/<field>", or a directive name
 * missing its "/<field>". Other "$" names ("$ref", "$schema" in a CRD's openAPIV3Schema) are
 * ordinary members, as upstream treats every name it does not recognise.
 */
static bool is_directive(const char *name)
{
    return strchr(name, '/') || !strcmp(name, "$setElementOrder") ||
           !strcmp(name, "$deleteFromPrimitiveList");
}

/* $retainKeys: checks that it names every member the patch sets, then drops the others. */
static int retain_keys(struct smp_state *s, cJSON *target, const cJSON *patch, const cJSON *retain)
{
    struct codec_strmap keep = {0};
    char pv[PREVIEW_SIZE];
    cJSON *c, *next;
    int r = 0;

    for (const cJSON *e = retain->child; e; e = e->next) {
        if (cJSON_IsString(e) && codec__strmap_add(&keep, e->valuestring, (void *)e) < 0) {
            r = oom(s);
            goto out;
        }
    }
    for (const cJSON *p = patch->child; p; p = p->next) {
        if (cJSON_IsNull(p) || !strcmp(p->string, DIR_PATCH) || !strcmp(p->string, DIR_RETAIN) ||
            has_prefix(p->string, DIR_ORDER) || has_prefix(p->string, DIR_DELETE))
            continue;
        if (!codec__strmap_find(&keep, p->string)) {
            preview(pv, p->string);
            r = fail(s, -EINVAL, "$retainKeys does not list %s, which the patch sets", pv);
            goto out;
        }
    }
    for (c = target->child; c; c = next) {
        next = c->next;
        if (!c->string || !codec__strmap_find(&keep, c->string))
            cJSON_Delete(cJSON_DetachItemViaPointer(target, c));
    }
out:
    codec__strmap_release(&keep);
    return r;
}

/*
 * Checks the "$" members of patch, records the $setElementOrder lists in orders (by the name
 * of their list), and applies $patch and $retainKeys to target. Returns 1 when the object is
 * deleted ("$patch": "delete": nothing more to merge), 0, or an error.
 */
static int object_directives(struct smp_state *s, cJSON *target, const cJSON *patch,
                             struct codec_strmap *orders)
{
    const cJSON *dir = NULL, *retain = NULL;
    char pv[PREVIEW_SIZE];

    for (const cJSON *p = patch->child; p; p = p->next) {
        const char *name = p->string;
        const char *list = NULL;

        if (name[0] != '$')
            continue;
        if (!strcmp(name, DIR_PATCH)) {
            dir = p;
            continue;
        }
        if (!strcmp(name, DIR_RETAIN)) {
            if (!cJSON_IsArray(p))
                return fail(s, -EINVAL, "$retainKeys must be a list");
            retain = p;
            continue;
        }
        if (has_prefix(name, DIR_ORDER))
            list = name + strlen(DIR_ORDER);
        else if (has_prefix(name, DIR_DELETE))
            list = name + strlen(DIR_DELETE);
        preview(pv, name);
        if (!list && is_directive(name))
            return fail(s, -EINVAL, "unknown directive %s", pv);
        if (!list)
            continue; /* an ordinary member ("$ref" in a CRD schema) */
        if (!*list)
            return fail(s, -EINVAL, "directive %s names no field", pv);
        if (!cJSON_IsArray(p))
            return fail(s, -EINVAL, "%s must be a list", pv);
        if (has_prefix(name, DIR_ORDER) && codec__strmap_add(orders, list, (void *)p) < 0)
            return oom(s);
    }
    if (dir) {
        bool del = cJSON_IsString(dir) && !strcmp(dir->valuestring, "delete");

        if (!del && !(cJSON_IsString(dir) && !strcmp(dir->valuestring, "replace"))) {
            preview(pv, cJSON_IsString(dir) ? dir->valuestring : "(not a string)");
            return fail(s, -EINVAL, "unknown patch type %s in an object", pv);
        }
        clear_children(target);
        if (del)
            return 1;
    }
    return retain ? retain_keys(s, target, patch, retain) : 0;
}

/* Puts v (owned) in target under name, replacing cur when there is one. 0 or -ENOMEM. */
static int install(struct smp_state *s, cJSON *target, struct codec_member_index *ix, cJSON *cur,
                   const char *name, cJSON *v)
{
    char *key;

    if (cur) {
        codec__swap_values(cur, v);
        cJSON_Delete(v);
        return 0;
    }
    key = cstrndup(name, strlen(name));
    if (!key) {
        cJSON_Delete(v);
        return oom(s);
    }
    codec__set_key(v, key);
    CHECK(cJSON_AddItemToArray(target, v));
    return codec__member_index_add(ix, v) < 0 ? oom(s) : 0;
}

/* Merges the patch object into target (an object of the working copy) at depth level. */
static int merge_object(struct smp_state *s, cJSON *target, const cJSON *patch, int level)
{
    struct codec_member_index ix = {0}, px = {0};
    struct codec_strmap orders = {0};
    cJSON *dead = NULL, *cur, *v;
    size_t saved;
    int r;

    if (level > PATCH_MAX_DEPTH)
        return too_deep(s);
    for (const cJSON *p = patch->child; p; p = p->next)
        if (!p->string)
            return fail(s, -EINVAL, "object member without a name");
    r = object_directives(s, target, patch, &orders);
    if (r != 0) {
        r = r > 0 ? 0 : r;
        goto out;
    }
    if (codec__member_index_init(&ix, target) < 0 || codec__member_index_init(&px, patch) < 0) {
        r = oom(s);
        goto out;
    }
    for (const cJSON *p = patch->child; p; p = p->next) {
        if (p->string[0] == '$' && (!strcmp(p->string, DIR_PATCH) ||
                                    !strcmp(p->string, DIR_RETAIN) || is_directive(p->string)))
            continue;
        cur = codec__member_index_get(&ix, p->string);
        if (cJSON_IsNull(p)) {
            if (cur) {
                codec__member_index_forget(&ix, cur);
                cur = cJSON_DetachItemViaPointer(target, cur);
                cur->next = dead;
                dead = cur;
            }
            continue;
        }
        saved = path_push(s, p->string);
        if (cJSON_IsObject(p) && cJSON_IsObject(cur)) {
            r = merge_object(s, cur, p, level + 1);
        } else if (cJSON_IsArray(p)) {
            void **order = codec__strmap_find(&orders, p->string);

            if (cJSON_IsArray(cur)) {
                r = merge_list(s, cur, p, order ? *order : NULL, level + 1);
            } else if (!(v = cJSON_CreateArray())) {
                r = oom(s);
            } else {
                r = merge_list(s, v, p, order ? *order : NULL, level + 1);
                if (r < 0)
                    cJSON_Delete(v);
                else
                    r = install(s, target, &ix, cur, p->string, v);
            }
        } else {
            v = NULL;
            r = materialize(s, p, level + 1, &v);
            if (r == 0)
                r = install(s, target, &ix, cur, p->string, v);
        }
        path_pop(s, saved);
        if (r < 0)
            goto out;
    }
    /* Orders of lists the patch does not touch, then deletions from primitive lists. */
    for (const cJSON *p = patch->child; p; p = p->next) {
        bool ord = has_prefix(p->string, DIR_ORDER), del = has_prefix(p->string, DIR_DELETE);
        const char *list;

        if (!ord && !del)
            continue;
        list = p->string + strlen(ord ? DIR_ORDER : DIR_DELETE);
        cur = codec__member_index_get(&ix, list);
        if (!cJSON_IsArray(cur) || (ord && codec__member_index_get(&px, list)))
            continue;
        saved = path_push(s, list);
        r = ord ? merge_list(s, cur, NULL, p, level + 1) : delete_values(s, cur, p);
        path_pop(s, saved);
        if (r < 0)
            goto out;
    }
    r = 0;
out:
    codec__member_index_release(&ix);
    codec__member_index_release(&px);
    codec__strmap_release(&orders);
    cJSON_Delete(dead);
    return r;
}

int strategic_merge_patch_apply(cJSON **doc, const cJSON *patch, smp_lookup_fn lookup,
                                const void *userdata, struct codec_error *err)
{
    struct smp_state s = {.lookup = lookup, .ud = userdata, .err = err};
    size_t nodes = 0, max = codec_default_limits.max_nodes;
    cJSON *work;
    int r;

    CHECK(doc && *doc && patch && lookup);
    codec_init();
    if (!cJSON_IsObject(patch)) {
        codec__set_error(err, 0, 0, "a strategic merge patch must be a JSON object");
        return -EINVAL;
    }
    if (codec__measure(*doc, 0, &nodes) < 0 || nodes > max) {
        codec__set_error(err, 0, 0, "the document exceeds %zu items or nests deeper than %d", max,
                         PATCH_MAX_DEPTH);
        return -E2BIG;
    }
    work = cJSON_IsObject(*doc) ? cJSON_Duplicate(*doc, true) : cJSON_CreateObject();
    if (!work)
        return oom(&s);
    codec__set_key(work, NULL);
    r = merge_object(&s, work, patch, 1);
    nodes = 0;
    if (r == 0 && (codec__measure(work, 0, &nodes) < 0 || nodes > max)) {
        codec__set_error(err, 0, 0, "the result would exceed %zu items or nest deeper than %d", max,
                         PATCH_MAX_DEPTH);
        r = -E2BIG;
    }
    if (r < 0) {
        cJSON_Delete(work);
        return r;
    }
    cJSON_Delete(*doc);
    *doc = work;
    return 0;
}
