/*
 * JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386) and the merge-patch diff, over cJSON trees,
 * for the apiserver's PATCH verb. Both patch kinds work on a private copy of the document and
 * swap it in only when every step succeeded, so a failed PATCH never leaves a half-patched
 * object behind; the copy also makes every -ENOMEM path a plain "free the copy".
 *
 * Bounds: the number of operations (caller's max_ops), the size and nesting of the result
 * (codec_default_limits.max_nodes, PATCH_MAX_DEPTH), checked before anything is copied so a
 * patch that doubles the document with "copy" fails before it allocates; the bytes "copy" may
 * add (PATCH_MAX_COPY_BYTES, kube-apiserver's accumulated-copy limit), so a short patch cannot
 * turn a few large strings into gigabytes; and the work of the whole patch (patch_state.work).
 * Every recursion here is over a tree whose depth was measured first, so the stack stays
 * bounded.
 *
 * Work: cJSON arrays are linked lists, so "/a/99999" walks 99999 elements. Each array
 * position found is remembered in a cursor (a few per patch), and the next index in that array
 * walks from the cursor when that is shorter than from the head: the operations a diff
 * produces ("/items/5/...", "/items/6/...") then cost O(path) each. Cursors are kept exact
 * across mutations (cursor_*() below). What stays linear per operation (indices far from every
 * cursor, members of very wide objects, moving a large subtree back and forth) is counted, and
 * a patch that needs more than PATCH_WORK_PER_ITEM steps per item of its document and itself
 * fails with -E2BIG instead of taking seconds of CPU.
 */
#include "codec/patch.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec-int.h"
#include "codec/codec.h"

/* Objects with more members than this get a hashed index for member lookups. */
#define INDEX_MIN_MEMBERS 16
#define PREVIEW_SIZE      96
#define PATCH_CURSORS     8  /* remembered array positions */
#define CURSOR_STEP       64 /* a cursor moves this far at most; further, a new one is taken */

static bool is_container(const cJSON *v)
{
    return cJSON_IsArray(v) || cJSON_IsObject(v);
}

static size_t count_nodes(const cJSON *v)
{
    size_t n = 1;
    const cJSON *c;

    if (is_container(v))
        for (c = v->child; c; c = c->next)
            n += count_nodes(c);
    return n;
}

/*
 * Adds the items of v to *nodes and returns the nesting depth reached when v sits level
 * containers deep, or -E2BIG as soon as that passes PATCH_MAX_DEPTH (so the recursion is bounded
 * even for a tree nobody measured).
 */
int codec__measure(const cJSON *v, int level, size_t *nodes)
{
    const cJSON *c;
    int d, r;

    (*nodes)++;
    if (!is_container(v))
        return level;
    if (level >= PATCH_MAX_DEPTH)
        return -E2BIG;
    d = level + 1;
    for (c = v->child; c; c = c->next) {
        r = codec__measure(c, level + 1, nodes);
        if (r < 0)
            return r;
        if (r > d)
            d = r;
    }
    return d;
}

/* Gives v the member name key (taking ownership of it; NULL for array elements and roots). */
void codec__set_key(cJSON *v, char *key)
{
    if (v->string && !(v->type & cJSON_StringIsConst))
        free(v->string);
    v->string = key;
    v->type &= ~cJSON_StringIsConst;
}

int codec__member_index_init(struct codec_member_index *ix, const cJSON *obj)
{
    const cJSON *c;
    size_t n = 0;
    int r;

    ix->obj = obj;
    ix->map = (struct codec_strmap){0};
    ix->hashed = false;
    for (c = obj->child; c && n <= INDEX_MIN_MEMBERS; c = c->next)
        n++;
    if (n <= INDEX_MIN_MEMBERS)
        return 0;
    ix->hashed = true;
    for (c = obj->child; c; c = c->next) {
        /* The first of duplicate names wins, as in a linear lookup. */
        r = codec__strmap_add(&ix->map, c->string, (void *)c);
        if (r < 0)
            return r;
    }
    return 0;
}

cJSON *codec__member_index_get(const struct codec_member_index *ix, const char *key)
{
    void **slot;

    if (!ix->hashed)
        return cJSON_GetObjectItemCaseSensitive(ix->obj, key);
    slot = codec__strmap_find(&ix->map, key);
    return slot ? *slot : NULL;
}

/* Records that item (a member of ix->obj) was detached. */
void codec__member_index_forget(struct codec_member_index *ix, const cJSON *item)
{
    void **slot;

    if (!ix->hashed)
        return;
    slot = codec__strmap_find(&ix->map, item->string);
    if (slot && *slot == item)
        *slot = NULL;
}

/* Records that item was appended to ix->obj. */
int codec__member_index_add(struct codec_member_index *ix, cJSON *item)
{
    void **slot;
    int r;

    if (!ix->hashed)
        return 0;
    slot = codec__strmap_find(&ix->map, item->string);
    if (slot) {
        *slot = item;
        return 0;
    }
    r = codec__strmap_add(&ix->map, item->string, item);
    return r < 0 ? r : 0;
}

void codec__member_index_release(struct codec_member_index *ix)
{
    codec__strmap_release(&ix->map);
}

/*
 * JSON equality as RFC 6902 "test" defines it: same type, numbers by value, strings byte for
 * byte, arrays element by element, objects with the same members in any order. Returns 1, 0,
 * -E2BIG past PATCH_MAX_DEPTH, or -ENOMEM (indexing a large object).
 */
static int json_equal(const cJSON *a, const cJSON *b, int level)
{
    struct codec_member_index ix;
    const cJSON *x, *y;
    size_t na = 0, nb = 0;
    int r = 1;

    if ((a->type & 0xff) != (b->type & 0xff))
        return 0;
    if (cJSON_IsNumber(a))
        return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (!is_container(a))
        return 1; /* null, true, false */
    if (level >= PATCH_MAX_DEPTH)
        return -E2BIG;
    if (cJSON_IsArray(a)) {
        for (x = a->child, y = b->child; x && y; x = x->next, y = y->next) {
            r = json_equal(x, y, level + 1);
            if (r <= 0)
                return r;
        }
        return !x && !y;
    }
    /* b first, and a no further than that: "test" passes the patch's value as b, so a wide
     * object in the document costs no more than the value it is compared with */
    for (y = b->child; y; y = y->next)
        nb++;
    for (x = a->child; x && na <= nb; x = x->next)
        na++;
    if (na != nb)
        return 0;
    r = codec__member_index_init(&ix, b);
    if (r < 0)
        goto out;
    r = 1;
    for (x = a->child; x && r == 1; x = x->next) {
        y = codec__member_index_get(&ix, x->string);
        r = y ? json_equal(x, y, level + 1) : 0;
    }
out:
    codec__member_index_release(&ix);
    return r;
}

bool json_value_equal(const cJSON *a, const cJSON *b)
{
    if (!a || !b)
        return a == b;
    codec_init();
    return json_equal(a, b, 0) == 1;
}

/* ---- JSON Patch ---- */

enum patch_op { OP_ADD, OP_REMOVE, OP_REPLACE, OP_MOVE, OP_COPY, OP_TEST };

static const char *const op_names[] = {
    [OP_ADD] = "add",   [OP_REMOVE] = "remove", [OP_REPLACE] = "replace",
    [OP_MOVE] = "move", [OP_COPY] = "copy",     [OP_TEST] = "test",
};

/* A remembered position in an array: element idx of arr is node. path[0..plen) is the JSON
 * pointer that led to arr (it points into the patch, which outlives the call); it is how a
 * mutation finds the cursors it invalidates. arr NULL: unused. An array may have several. */
struct cursor {
    const char *path;
    size_t plen;
    cJSON *arr;
    size_t idx;
    cJSON *node;
    size_t used; /* patch_state.clock when last used; 0 when unused (taken first) */
};

struct patch_state {
    cJSON *root;      /* the working copy */
    size_t nodes;     /* items in root */
    size_t max_nodes; /* bound on nodes */
    size_t index;     /* of the operation being applied */
    const char *op;   /* its name, NULL until known */
    struct codec_error *err;
    size_t copied;   /* JSON bytes "copy" added so far */
    size_t work;     /* elements and members walked, items counted */
    size_t max_work; /* bound on work */
    struct cursor cur[PATCH_CURSORS];
    size_t clock; /* cursor uses so far */
};

/* Where a JSON pointer leads: the container that holds (or would hold) the target, and the
 * last reference token, still escaped. */
struct location {
    const char *ptr; /* the whole pointer (tok points into it) */
    cJSON *parent;   /* NULL for the root pointer "" */
    const char *tok; /* last token (not NUL-terminated at len) */
    size_t len;
    int depth; /* number of reference tokens */
};

/* Formats err->msg as 'operation N (op): <fmt>' and returns r. */
__attribute__((format(printf, 3, 4))) static int op_error(struct patch_state *s, int r,
                                                          const char *fmt, ...)
{
    char reason[sizeof(s->err->msg)];
    va_list ap;

    if (!s->err)
        return r;
    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start initialised ap */
    (void)vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (s->op)
        codec__set_error(s->err, 0, 0, "operation %zu (%s): %s", s->index, s->op, reason);
    else
        codec__set_error(s->err, 0, 0, "operation %zu: %s", s->index, reason);
    return r;
}

static void preview_str(char dst[PREVIEW_SIZE], const char *s)
{
    codec__preview(dst, PREVIEW_SIZE, s, strlen(s));
}

/* RFC 6901 syntax: "" or "/"-separated tokens in which "~" is always followed by 0 or 1. */
static bool pointer_is_valid(const char *p)
{
    if (*p == '\0')
        return true;
    if (*p != '/')
        return false;
    for (; *p; p++)
        if (*p == '~' && p[1] != '0' && p[1] != '1')
            return false;
    return true;
}

/* Whether the escaped token tok[0..len) names the member key. */
static bool token_matches(const char *tok, size_t len, const char *key)
{
    size_t i;

    for (i = 0; i < len; i++, key++) {
        char c = tok[i];

        if (c == '~')
            c = tok[++i] == '0' ? '~' : '/';
        if (*key != c)
            return false;
    }
    return *key == '\0';
}

/* The unescaped token as a new string (cmalloc), or NULL on OOM. */
static char *token_decode(const char *tok, size_t len)
{
    char *key = cmalloc(len + 1), *p = key;
    size_t i;

    if (!key)
        return NULL;
    for (i = 0; i < len; i++) {
        char c = tok[i];

        if (c == '~')
            c = tok[++i] == '0' ? '~' : '/';
        *p++ = c;
    }
    *p = '\0';
    return key;
}

/* Parses an array index token: decimal digits, no leading zero, no sign. Returns 0, -EINVAL if
 * the token is not an index, -ERANGE if it is one no array can have. */
static int token_index(const char *tok, size_t len, size_t *ret)
{
    size_t i, v = 0;

    if (len == 0 || (len > 1 && tok[0] == '0'))
        return -EINVAL;
    for (i = 0; i < len; i++) {
        if (tok[i] < '0' || tok[i] > '9')
            return -EINVAL;
        if (v > (SIZE_MAX - 9) / 10)
            return -ERANGE;
        v = v * 10 + (size_t)(tok[i] - '0');
    }
    *ret = v;
    return 0;
}

static size_t array_size(const cJSON *a)
{
    const cJSON *c;
    size_t n = 0;

    for (c = a->child; c; c = c->next)
        n++;
    return n;
}

/* ---- cursors: array positions kept across operations ---- */

/* Whether the cursor's array is the location ptr[0..len) (unless strictly) or inside it. */
static bool cursor_is_under(const struct cursor *c, const char *ptr, size_t len, bool strictly)
{
    if (c->plen < len || memcmp(c->path, ptr, len) != 0)
        return false;
    if (c->plen == len)
        return !strictly;
    return c->path[len] == '/';
}

/* Forgets the cursors into arrays at or under ptr[0..len): their arrays go, or their pointers
 * no longer lead to them. */
static void cursors_forget(struct patch_state *s, const char *ptr, size_t len, bool strictly)
{
    for (size_t i = 0; i < PATCH_CURSORS; i++)
        if (s->cur[i].arr && cursor_is_under(&s->cur[i], ptr, len, strictly))
            s->cur[i] = (struct cursor){0};
}

/*
 * Element i of arr, whose pointer is path[0..plen), or NULL past the end. Walks from the
 * nearest cursor into arr when that is closer than the head, and counts the steps. The cursor
 * follows when it moved a little (the next element, as a diff goes); a long walk takes a new
 * cursor (the least recently used), so a patch going back and forth between a few places in an
 * array walks each distance once.
 */
static cJSON *array_at(struct patch_state *s, cJSON *arr, const char *path, size_t plen, size_t i)
{
    struct cursor *c = NULL, *slot = &s->cur[0];
    cJSON *e = arr->child;
    size_t k = 0, best = i, d;

    for (size_t j = 0; j < PATCH_CURSORS; j++) {
        struct cursor *x = &s->cur[j];

        if (x->used < slot->used)
            slot = x;
        if (x->arr != arr)
            continue;
        d = x->idx <= i ? i - x->idx : x->idx - i;
        if (d < best || (!c && d == best)) {
            best = d;
            c = x;
        }
    }
    if (c) {
        e = c->node;
        k = c->idx;
    }
    for (; e && k < i; k++, s->work++)
        e = e->next;
    for (; k > i; k--, s->work++)
        e = e->prev; /* not the head: k > i >= 0 */
    if (!e)
        return NULL;
    if (!c || best > CURSOR_STEP)
        c = slot;
    *c = (struct cursor){
        .path = path, .plen = plen, .arr = arr, .idx = i, .node = e, .used = ++s->clock};
    return e;
}

/* ---- JSON pointers ---- */

static cJSON *object_member(struct patch_state *s, const cJSON *obj, const char *tok, size_t len)
{
    cJSON *c;

    for (c = obj->child; c; c = c->next, s->work++)
        if (c->string && token_matches(tok, len, c->string))
            return c;
    return NULL;
}

/* The child of v (whose pointer is path[0..plen)) named by tok, or NULL. */
static cJSON *child_at(struct patch_state *s, cJSON *v, const char *tok, size_t len,
                       const char *path, size_t plen)
{
    size_t i;

    if (cJSON_IsObject(v))
        return object_member(s, v, tok, len);
    if (!cJSON_IsArray(v) || token_index(tok, len, &i) < 0)
        return NULL;
    return array_at(s, v, path, plen, i);
}

/* Length of the pointer of l's parent (l->ptr up to the "/" before the last token). */
static size_t parent_len(const struct location *l)
{
    return (size_t)(l->tok - l->ptr) - 1;
}

/* Length of l's own pointer. */
static size_t location_len(const struct location *l)
{
    return (size_t)(l->tok - l->ptr) + l->len;
}

/* The array index of l, an existing element of an array parent; 0 for other parents. */
static size_t location_index(const struct location *l)
{
    size_t i = 0;

    if (l->parent && cJSON_IsArray(l->parent))
        CHECK(token_index(l->tok, l->len, &i) == 0);
    return i;
}

/* The value at l is about to be detached (remove, the source of move): cursors inside it go;
 * in an array the later elements move down one, so cursors into them go too, and the
 * parent's own cursor follows. */
static void cursors_detach(struct patch_state *s, const struct location *l)
{
    struct cursor *c;
    size_t i;

    if (!l->parent) {
        cursors_forget(s, "", 0, false);
        return;
    }
    cursors_forget(s, l->ptr, location_len(l), false);
    if (!cJSON_IsArray(l->parent))
        return;
    i = location_index(l);
    cursors_forget(s, l->ptr, parent_len(l), true);
    for (c = s->cur; c < s->cur + PATCH_CURSORS; c++) {
        if (c->arr != l->parent)
            continue;
        if (c->idx == i)
            *c = (struct cursor){0};
        else if (c->idx > i)
            c->idx--;
    }
}

/* The value at l (existing) is about to be replaced by v. */
static void cursors_replace(struct patch_state *s, const struct location *l, cJSON *v)
{
    struct cursor *c;

    if (!l->parent) {
        cursors_forget(s, "", 0, false);
        return;
    }
    cursors_forget(s, l->ptr, location_len(l), false);
    if (!cJSON_IsArray(l->parent))
        return;
    for (c = s->cur; c < s->cur + PATCH_CURSORS; c++)
        if (c->arr == l->parent && c->idx == location_index(l))
            c->node = v;
}

/* A value was inserted at index i of l's parent array, before the element there. */
static void cursors_insert(struct patch_state *s, const struct location *l, size_t i)
{
    struct cursor *c;

    cursors_forget(s, l->ptr, parent_len(l), true);
    for (c = s->cur; c < s->cur + PATCH_CURSORS; c++)
        if (c->arr == l->parent && c->idx >= i)
            c->idx++;
}

/*
 * Resolves all but the last token of ptr (a valid pointer, the value of member field) in the
 * working document. Fails with -EINVAL when an intermediate location does not exist.
 */
static int locate(struct patch_state *s, const char *field, const char *ptr, struct location *ret)
{
    char pv[PREVIEW_SIZE], prefix[PREVIEW_SIZE];
    cJSON *cur = s->root, *next;
    const char *p, *end;
    int depth = 0;

    *ret = (struct location){0};
    if (*ptr == '\0') {
        *ret = (struct location){.ptr = ptr, .parent = NULL, .tok = ptr, .len = 0, .depth = 0};
        return 0;
    }
    for (p = ptr + 1; (end = strchr(p, '/')); p = end + 1) {
        next = child_at(s, cur, p, (size_t)(end - p), ptr, (size_t)(p - 1 - ptr));
        if (!next) {
            preview_str(pv, ptr);
            codec__preview(prefix, sizeof(prefix), ptr, (size_t)(end - ptr));
            return op_error(s, -EINVAL, "%s %s does not exist (no %s)", field, pv, prefix);
        }
        cur = next;
        depth++;
    }
    *ret = (struct location){
        .ptr = ptr, .parent = cur, .tok = p, .len = strlen(p), .depth = depth + 1};
    return 0;
}

/* The value at l, or NULL with err set (-EINVAL) when there is none. */
static cJSON *location_get(struct patch_state *s, const char *field, const struct location *l)
{
    char pv[PREVIEW_SIZE];
    cJSON *v;
    size_t i;
    int r;

    if (!l->parent)
        return s->root;
    v = child_at(s, l->parent, l->tok, l->len, l->ptr, parent_len(l));
    if (v)
        return v;
    preview_str(pv, l->ptr);
    if (!cJSON_IsArray(l->parent)) {
        (void)op_error(s, -EINVAL, "%s %s does not exist", field, pv);
        return NULL;
    }
    r = token_index(l->tok, l->len, &i);
    if (r == -EINVAL && l->len == 1 && l->tok[0] == '-')
        (void)op_error(s, -EINVAL, "%s %s: \"-\" (past the end) can only be used by add", field,
                       pv);
    else if (r == -EINVAL)
        (void)op_error(s, -EINVAL, "%s %s: invalid array index", field, pv);
    else
        (void)op_error(s, -EINVAL, "%s %s: array index out of range (size %zu)", field, pv,
                       array_size(l->parent));
    return NULL;
}

/* count_nodes(), counted as work. */
static size_t count_work(struct patch_state *s, const cJSON *v)
{
    size_t n = count_nodes(v);

    s->work += n;
    return n;
}

/*
 * Checks that a value can be added at l (RFC 6902 4.1: the root, a member of an existing
 * object, or an array position 0..size or "-"), and returns in *ret_old how many items the add
 * would replace.
 */
static int location_check_add(struct patch_state *s, const struct location *l, size_t *ret_old)
{
    char pv[PREVIEW_SIZE];
    const cJSON *cur;
    size_t i = 0;
    int r;

    *ret_old = 0;
    if (!l->parent) {
        *ret_old = s->nodes;
        return 0;
    }
    if (cJSON_IsObject(l->parent)) {
        cur = object_member(s, l->parent, l->tok, l->len);
        *ret_old = cur ? count_work(s, cur) : 0;
        return 0;
    }
    preview_str(pv, l->ptr);
    if (!cJSON_IsArray(l->parent))
        return op_error(s, -EINVAL, "path %s does not exist (parent is not an object or array)",
                        pv);
    if (l->len == 1 && l->tok[0] == '-')
        return 0;
    r = token_index(l->tok, l->len, &i);
    if (r == -EINVAL)
        return op_error(s, -EINVAL, "path %s: invalid array index", pv);
    /* i <= size: the array is empty-indexed at 0, or has an element i - 1 */
    if (r == 0 && (i == 0 || array_at(s, l->parent, l->ptr, parent_len(l), i - 1)))
        return 0;
    return op_error(s, -EINVAL, "path %s: array index out of range (size %zu)", pv,
                    array_size(l->parent));
}

/* Checks that putting v at depth level in place of old items stays within the bounds, and
 * returns the new item count in *ret_nodes. */
static int check_growth(struct patch_state *s, const cJSON *v, int level, size_t old,
                        size_t *ret_nodes)
{
    size_t n = 0;
    int r;

    r = codec__measure(v, level, &n);
    s->work += n;
    if (r < 0)
        return op_error(s, -E2BIG, "result would nest deeper than %d", PATCH_MAX_DEPTH);
    if (s->nodes - old + n > s->max_nodes)
        return op_error(s, -E2BIG, "result would exceed %zu items", s->max_nodes);
    *ret_nodes = s->nodes - old + n;
    return 0;
}

/*
 * Links v into arr before pos (NULL: at the end). Done here because cJSON_InsertItemInArray()
 * in Debian's cJSON 1.7.15 refuses some valid positions. cJSON keeps the last element in the
 * first element's prev.
 */
static void array_insert_before(cJSON *arr, cJSON *pos, cJSON *v)
{
    if (!pos) {
        CHECK(cJSON_AddItemToArray(arr, v));
        return;
    }
    v->next = pos;
    v->prev = pos->prev;
    if (pos == arr->child)
        arr->child = v;
    else
        v->prev->next = v;
    pos->prev = v;
}

/*
 * Puts v (taking ownership, also on failure) at l, already checked by location_check_add():
 * replaces the root or an object member, or inserts into an array. Returns 0 or -ENOMEM.
 */
static int location_add(struct patch_state *s, const struct location *l, cJSON *v)
{
    cJSON *cur;
    size_t i = 0;
    char *key;

    if (!l->parent) {
        cursors_replace(s, l, v);
        codec__set_key(v, NULL);
        cJSON_Delete(s->root);
        s->root = v;
        return 0;
    }
    if (cJSON_IsObject(l->parent)) {
        key = token_decode(l->tok, l->len);
        if (!key) {
            cJSON_Delete(v);
            return op_error(s, -ENOMEM, "out of memory");
        }
        codec__set_key(v, key);
        cur = object_member(s, l->parent, l->tok, l->len);
        if (cur) {
            cursors_replace(s, l, v);
            CHECK(cJSON_ReplaceItemViaPointer(l->parent, cur, v));
        } else {
            CHECK(cJSON_AddItemToArray(l->parent, v));
        }
        return 0;
    }
    codec__set_key(v, NULL);
    if (l->len == 1 && l->tok[0] == '-') {
        CHECK(cJSON_AddItemToArray(l->parent, v)); /* no index moves */
        return 0;
    }
    CHECK(token_index(l->tok, l->len, &i) == 0);
    cur = array_at(s, l->parent, l->ptr, parent_len(l), i);
    array_insert_before(l->parent, cur, v);
    cursors_insert(s, l, i);
    return 0;
}

/* Adds a copy of value at ptr (add, copy). */
static int add_copy(struct patch_state *s, const char *ptr, const cJSON *value)
{
    struct location l;
    size_t old = 0, nodes = 0;
    cJSON *v;
    int r;

    r = locate(s, "path", ptr, &l);
    if (r < 0)
        return r;
    r = location_check_add(s, &l, &old);
    if (r < 0)
        return r;
    r = check_growth(s, value, l.depth, old, &nodes);
    if (r < 0)
        return r;
    v = cJSON_Duplicate(value, true);
    if (!v)
        return op_error(s, -ENOMEM, "out of memory");
    /* value may be freed now (copy onto an ancestor of "from"). */
    r = location_add(s, &l, v);
    if (r < 0)
        return r;
    s->nodes = nodes;
    return 0;
}

static int op_remove(struct patch_state *s, const char *ptr)
{
    struct location l;
    cJSON *v;
    int r;

    r = locate(s, "path", ptr, &l);
    if (r < 0)
        return r;
    if (!l.parent)
        return op_error(s, -EINVAL, "path \"\": the document root cannot be removed");
    v = location_get(s, "path", &l);
    if (!v)
        return -EINVAL;
    s->nodes -= count_work(s, v);
    cursors_detach(s, &l);
    cJSON_Delete(cJSON_DetachItemViaPointer(l.parent, v));
    return 0;
}

static int op_replace(struct patch_state *s, const char *ptr, const cJSON *value)
{
    struct location l;
    cJSON *cur, *v;
    size_t old = 0, nodes = 0;
    int r;

    r = locate(s, "path", ptr, &l);
    if (r < 0)
        return r;
    cur = location_get(s, "path", &l);
    if (!cur)
        return -EINVAL;
    old = count_work(s, cur);
    r = check_growth(s, value, l.depth, old, &nodes);
    if (r < 0)
        return r;
    v = cJSON_Duplicate(value, true);
    if (!v)
        return op_error(s, -ENOMEM, "out of memory");
    cursors_replace(s, &l, v);
    if (!l.parent) {
        codec__set_key(v, NULL);
        cJSON_Delete(s->root);
        s->root = v;
    } else {
        /* The replacement takes over the member name, so this cannot fail. */
        codec__set_key(v, cur->string);
        v->type |= cur->type & cJSON_StringIsConst;
        cur->string = NULL;
        cur->type &= ~cJSON_StringIsConst;
        CHECK(cJSON_ReplaceItemViaPointer(l.parent, cur, v));
    }
    s->nodes = nodes;
    return 0;
}

static int op_test(struct patch_state *s, const char *ptr, const cJSON *value)
{
    char pv[PREVIEW_SIZE];
    struct location l;
    const cJSON *cur;
    int r;

    r = locate(s, "path", ptr, &l);
    if (r < 0)
        return r;
    cur = location_get(s, "path", &l);
    if (!cur)
        return -EINVAL;
    r = json_equal(cur, value, l.depth);
    if (r == -ENOMEM)
        return op_error(s, r, "out of memory");
    if (r < 0)
        return op_error(s, r, "value nests deeper than %d", PATCH_MAX_DEPTH);
    if (r == 0) {
        preview_str(pv, ptr);
        return op_error(s, -ECANCELED, "testing value %s failed", pv);
    }
    return 0;
}

/* Digits of the integer part of |d| (at least 1), for json_size(). */
static size_t number_size(double d)
{
    size_t n = d < 0 ? 2 : 1;

    if (d != d || d - d != 0)
        return 24; /* not printable as JSON; never in a parsed tree */
    for (d = d < 0 ? -d : d; d >= 10 && n < 24; d /= 10)
        n++;
    return n;
}

/* What a copy of v is charged against PATCH_MAX_COPY_BYTES: about the bytes it takes printed
 * compactly (escapes not counted), as Go's json-patch charges it, plus PATCH_COPY_ITEM_BYTES
 * per item; counted as work. */
static size_t json_size(struct patch_state *s, const cJSON *v)
{
    const cJSON *c;
    size_t n;

    s->work++;
    if (cJSON_IsString(v))
        return strlen(v->valuestring) + 2 + PATCH_COPY_ITEM_BYTES;
    if (cJSON_IsNumber(v))
        return number_size(v->valuedouble) + PATCH_COPY_ITEM_BYTES;
    if (!is_container(v))
        return (cJSON_IsFalse(v) ? 5 : 4) + PATCH_COPY_ITEM_BYTES;
    n = 2 + PATCH_COPY_ITEM_BYTES;
    for (c = v->child; c; c = c->next) {
        n += json_size(s, c) + (c->next ? 1 : 0);
        if (cJSON_IsObject(v))
            n += strlen(c->string ? c->string : "") + 3;
    }
    return n;
}

static int op_copy(struct patch_state *s, const char *from, const char *ptr)
{
    struct location l;
    const cJSON *v;
    int r;

    r = locate(s, "from", from, &l);
    if (r < 0)
        return r;
    v = location_get(s, "from", &l);
    if (!v)
        return -EINVAL;
    /* Go's json-patch (AccumulatedCopySizeLimit), with kube-apiserver's wording. */
    s->copied += json_size(s, v);
    if (s->copied > PATCH_MAX_COPY_BYTES)
        return op_error(s, -EINVAL,
                        "Unable to complete the copy, the accumulated size increase of copy is "
                        "%zu, exceeding the limit %zu",
                        s->copied, (size_t)PATCH_MAX_COPY_BYTES);
    /* v stays valid: add_copy() copies it before changing the document. */
    return add_copy(s, ptr, v);
}

static int op_move(struct patch_state *s, const char *from, const char *ptr)
{
    char pv[PREVIEW_SIZE], fv[PREVIEW_SIZE];
    struct location l;
    size_t n, old, flen = strlen(from);
    cJSON *v;
    int r;

    if (strcmp(from, ptr) != 0 && strncmp(from, ptr, flen) == 0 && ptr[flen] == '/') {
        preview_str(fv, from);
        preview_str(pv, ptr);
        return op_error(s, -EINVAL, "\"from\" %s is a prefix of \"path\" %s", fv, pv);
    }
    r = locate(s, "from", from, &l);
    if (r < 0)
        return r;
    v = location_get(s, "from", &l);
    if (!v)
        return -EINVAL;
    if (strcmp(from, ptr) == 0)
        return 0;
    /* Not the root: "" is a prefix of every other pointer. */
    n = count_work(s, v);
    cursors_detach(s, &l);
    v = cJSON_DetachItemViaPointer(l.parent, v);
    s->nodes -= n;
    r = locate(s, "path", ptr, &l);
    if (r < 0)
        goto err;
    r = location_check_add(s, &l, &old);
    if (r < 0)
        goto err;
    r = check_growth(s, v, l.depth, old, &n);
    if (r < 0)
        goto err;
    s->nodes = n;
    return location_add(s, &l, v);
err:
    cJSON_Delete(v);
    return r;
}

/* The members of one operation object this code reads; others are ignored (RFC 6902 4). */
struct op_fields {
    const cJSON *op, *path, *from, *value;
};

/* Collects the known members of op in one pass; a repeated one is an error (RFC 6902 A.13:
 * cJSON trees built elsewhere may hold duplicate names, json_parse() refuses them). */
static int op_fields_get(struct patch_state *s, const cJSON *op, struct op_fields *f)
{
    static const char *const names[] = {"op", "path", "from", "value"};
    const cJSON **slots[] = {&f->op, &f->path, &f->from, &f->value};
    const cJSON *c;
    size_t i;

    *f = (struct op_fields){0};
    for (c = op->child; c; c = c->next) {
        for (i = 0; i < ARRAY_SIZE(names); i++) {
            if (!c->string || strcmp(c->string, names[i]) != 0)
                continue;
            if (*slots[i])
                return op_error(s, -EINVAL, "duplicate \"%s\"", names[i]);
            *slots[i] = c;
        }
    }
    return 0;
}

/* The string value v of member name, or NULL with err set. */
static const char *op_string(struct patch_state *s, const cJSON *v, const char *name)
{
    if (!v)
        (void)op_error(s, -EINVAL, "missing \"%s\"", name);
    else if (!cJSON_IsString(v))
        (void)op_error(s, -EINVAL, "\"%s\" is not a string", name);
    else
        return v->valuestring;
    return NULL;
}

/* The valid JSON pointer in v, member name, or NULL with err set. */
static const char *op_pointer(struct patch_state *s, const cJSON *v, const char *name)
{
    const char *p = op_string(s, v, name);
    char pv[PREVIEW_SIZE];

    if (p && !pointer_is_valid(p)) {
        preview_str(pv, p);
        (void)op_error(s, -EINVAL, "invalid JSON pointer %s in \"%s\"", pv, name);
        return NULL;
    }
    return p;
}

static int apply_op(struct patch_state *s, const cJSON *op)
{
    const char *kind, *path, *from = NULL;
    const cJSON *value = NULL;
    struct op_fields f;
    char pv[PREVIEW_SIZE];
    enum patch_op k;
    int r;

    s->op = NULL;
    if (!cJSON_IsObject(op))
        return op_error(s, -EINVAL, "not an object");
    r = op_fields_get(s, op, &f);
    if (r < 0)
        return r;
    kind = op_string(s, f.op, "op");
    if (!kind)
        return -EINVAL;
    for (k = OP_ADD; k < ARRAY_SIZE(op_names); k++)
        if (!strcmp(kind, op_names[k]))
            break;
    if (k == ARRAY_SIZE(op_names)) {
        preview_str(pv, kind);
        return op_error(s, -EINVAL, "unknown op %s", pv);
    }
    s->op = op_names[k];
    path = op_pointer(s, f.path, "path");
    if (!path)
        return -EINVAL;
    if (k == OP_MOVE || k == OP_COPY) {
        from = op_pointer(s, f.from, "from");
        if (!from)
            return -EINVAL;
    }
    if (k == OP_ADD || k == OP_REPLACE || k == OP_TEST) {
        value = f.value;
        if (!value)
            return op_error(s, -EINVAL, "missing \"value\"");
    }
    switch (k) {
    case OP_ADD:
        return add_copy(s, path, value);
    case OP_REMOVE:
        return op_remove(s, path);
    case OP_REPLACE:
        return op_replace(s, path, value);
    case OP_MOVE:
        return op_move(s, from, path);
    case OP_COPY:
        return op_copy(s, from, path);
    case OP_TEST:
        return op_test(s, path, value);
    }
    return -EINVAL; /* not reached */
}

int json_patch_apply(cJSON **doc, const cJSON *patch, size_t max_ops, struct codec_error *err)
{
    struct patch_state s = {.max_nodes = codec_default_limits.max_nodes, .err = err};
    const cJSON *op;
    size_t nops = 0, pnodes = 0;
    int r;

    CHECK(doc && *doc && patch);
    codec_init();
    if (!cJSON_IsArray(patch)) {
        codec__set_error(err, 0, 0, "a JSON patch must be an array of operations");
        return -EINVAL;
    }
    for (op = patch->child; op; op = op->next)
        nops++;
    if (nops > max_ops) {
        codec__set_error(err, 0, 0, "the JSON patch has %zu operations, the limit is %zu", nops,
                         max_ops);
        return -E2BIG;
    }
    if (codec__measure(*doc, 0, &s.nodes) < 0 || s.nodes > s.max_nodes) {
        codec__set_error(err, 0, 0, "the document exceeds %zu items or nests deeper than %d",
                         s.max_nodes, PATCH_MAX_DEPTH);
        return -E2BIG;
    }
    (void)codec__measure(patch, 0, &pnodes); /* stops early past PATCH_MAX_DEPTH */
    s.max_work = PATCH_WORK_PER_ITEM * (s.nodes + pnodes) + PATCH_WORK_MIN;
    s.root = cJSON_Duplicate(*doc, true);
    if (!s.root) {
        codec__set_error(err, 0, 0, "out of memory");
        return -ENOMEM;
    }
    codec__set_key(s.root, NULL);
    for (op = patch->child; op; op = op->next, s.index++) {
        r = apply_op(&s, op);
        if (r < 0)
            goto out;
        if (s.work > s.max_work) {
            r = op_error(&s, -E2BIG,
                         "the patch takes more than %zu steps on this document (array indices "
                         "far apart in a long array, or members of a very wide object); split "
                         "it into smaller patches",
                         s.max_work);
            goto out;
        }
    }
    cJSON_Delete(*doc);
    *doc = s.root;
    s.root = NULL;
    r = 0;
out:
    cJSON_Delete(s.root);
    return r;
}

/* ---- JSON Merge Patch ---- */

/* Exchanges the values (not the member names) of two items. */
void codec__swap_values(cJSON *a, cJSON *b)
{
    const int keep = cJSON_StringIsConst;
    cJSON tmp = *a;

    a->type = (b->type & ~keep) | (a->type & keep);
    a->child = b->child;
    a->valuestring = b->valuestring;
    a->valueint = b->valueint;
    a->valuedouble = b->valuedouble;
    b->type = (tmp.type & ~keep) | (b->type & keep);
    b->child = tmp.child;
    b->valuestring = tmp.valuestring;
    b->valueint = tmp.valueint;
    b->valuedouble = tmp.valuedouble;
}

/* RFC 7386 MergePatch(target, patch) for an object target and object patch at depth level;
 * works in place (target belongs to the caller's copy). */
static int merge_into(cJSON *target, const cJSON *patch, int level, struct codec_error *err)
{
    struct codec_member_index ix;
    cJSON *dead = NULL; /* detached members: ix borrows their names until the end */
    cJSON *cur, *v = NULL;
    const cJSON *p;
    char *key;
    int r;

    if (level > PATCH_MAX_DEPTH) {
        codec__set_error(err, 0, 0, "merge patch nests objects deeper than %d", PATCH_MAX_DEPTH);
        return -E2BIG;
    }
    r = codec__member_index_init(&ix, target);
    if (r < 0)
        goto oom;
    for (p = patch->child; p; p = p->next) {
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
        if (cJSON_IsObject(p) && cJSON_IsObject(cur)) {
            r = merge_into(cur, p, level + 1, err);
            if (r < 0)
                goto out;
            continue;
        }
        if (cJSON_IsObject(p)) {
            v = cJSON_CreateObject();
            if (!v)
                goto oom;
            r = merge_into(v, p, level + 1, err);
            if (r < 0)
                goto out;
        } else {
            v = cJSON_Duplicate(p, true);
            if (!v)
                goto oom;
        }
        if (cur) {
            codec__swap_values(cur, v);
            cJSON_Delete(v);
            v = NULL;
            continue;
        }
        key = cstrndup(p->string, strlen(p->string));
        if (!key)
            goto oom;
        codec__set_key(v, key);
        CHECK(cJSON_AddItemToArray(target, v));
        cur = v;
        v = NULL;
        r = codec__member_index_add(&ix, cur);
        if (r < 0)
            goto oom;
    }
    r = 0;
    goto out;
oom:
    codec__set_error(err, 0, 0, "out of memory");
    r = -ENOMEM;
out:
    cJSON_Delete(v);
    codec__member_index_release(&ix);
    cJSON_Delete(dead);
    return r;
}

int merge_patch_apply(cJSON **doc, const cJSON *patch, struct codec_error *err)
{
    cJSON *work;
    int r;

    CHECK(doc && *doc && patch);
    codec_init();
    if (!cJSON_IsObject(patch))
        work = cJSON_Duplicate(patch, true);
    else if (cJSON_IsObject(*doc))
        work = cJSON_Duplicate(*doc, true);
    else
        work = cJSON_CreateObject();
    if (!work) {
        codec__set_error(err, 0, 0, "out of memory");
        return -ENOMEM;
    }
    codec__set_key(work, NULL); /* a copied member keeps its name */
    if (cJSON_IsObject(patch)) {
        r = merge_into(work, patch, 1, err);
        if (r < 0) {
            cJSON_Delete(work);
            return r;
        }
    }
    cJSON_Delete(*doc);
    *doc = work;
    return 0;
}

/* Appends to obj a member named key holding v (taking ownership of v). */
static int add_member(cJSON *obj, const char *key, cJSON *v)
{
    char *k;

    if (!v)
        return -ENOMEM;
    k = cstrndup(key, strlen(key));
    if (!k) {
        cJSON_Delete(v);
        return -ENOMEM;
    }
    codec__set_key(v, k);
    CHECK(cJSON_AddItemToArray(obj, v));
    return 0;
}

static int diff(const cJSON *a, const cJSON *b, int level, cJSON **ret)
{
    struct codec_member_index ia, ib;
    cJSON *out, *sub = NULL;
    const cJSON *x, *y;
    int r;

    if (!cJSON_IsObject(a) || !cJSON_IsObject(b)) {
        out = cJSON_Duplicate(b, true);
        if (!out)
            return -ENOMEM;
        codec__set_key(out, NULL);
        *ret = out;
        return 0;
    }
    if (level > PATCH_MAX_DEPTH)
        return -E2BIG;
    out = cJSON_CreateObject();
    r = codec__member_index_init(&ia, a);
    if (r == 0)
        r = codec__member_index_init(&ib, b);
    else
        ib = (struct codec_member_index){0};
    if (!out && r == 0)
        r = -ENOMEM;
    for (x = a->child; x && r == 0; x = x->next)
        if (!codec__member_index_get(&ib, x->string))
            r = add_member(out, x->string, cJSON_CreateNull());
    for (y = b->child; y && r == 0; y = y->next) {
        x = codec__member_index_get(&ia, y->string);
        if (!x) {
            r = add_member(out, y->string, cJSON_Duplicate(y, true));
        } else if (cJSON_IsObject(x) && cJSON_IsObject(y)) {
            r = diff(x, y, level + 1, &sub);
            if (r == 0 && sub->child)
                r = add_member(out, y->string, sub);
            else
                cJSON_Delete(sub);
            sub = NULL;
        } else {
            r = json_equal(x, y, level);
            if (r == 1)
                r = 0;
            else if (r == 0)
                r = add_member(out, y->string, cJSON_Duplicate(y, true));
        }
    }
    codec__member_index_release(&ia);
    codec__member_index_release(&ib);
    if (r < 0) {
        cJSON_Delete(out);
        return r;
    }
    *ret = out;
    return 0;
}

int merge_patch_create(const cJSON *a, const cJSON *b, cJSON **ret)
{
    CHECK(a && b && ret);
    codec_init();
    return diff(a, b, 1, ret);
}

/* ---- the JSON Patch diff ---- */

/* Appends the RFC 6901 form of key ('~' -> "~0", '/' -> "~1") to path. */
static void pointer_append(struct strbuf *path, const char *key)
{
    strbuf_addch(path, '/');
    for (const char *p = key; *p; p++) {
        if (*p == '~')
            strbuf_addstr(path, "~0");
        else if (*p == '/')
            strbuf_addstr(path, "~1");
        else
            strbuf_addch(path, *p);
    }
}

/* Appends {"op": op, "path": path[, "value": copy of v]} to ops. */
static int add_op(cJSON *ops, const char *op, const char *path, const cJSON *v)
{
    cJSON *o = cJSON_CreateObject(), *val = NULL;

    if (!o)
        return -ENOMEM;
    CHECK(cJSON_AddItemToArray(ops, o));
    if (!cJSON_AddStringToObject(o, "op", op) || !cJSON_AddStringToObject(o, "path", path))
        return -ENOMEM;
    if (!v)
        return 0;
    if (!(val = cJSON_Duplicate(v, true)))
        return -ENOMEM;
    codec__set_key(val, NULL);
    return add_member(o, "value", val);
}

static int patch_diff(const cJSON *a, const cJSON *b, struct strbuf *path, int level, cJSON *ops)
{
    size_t len = path->len;
    int r = 0;

    if (level > PATCH_MAX_DEPTH)
        return -E2BIG;
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
        struct codec_member_index ia, ib;
        const cJSON *x, *y;
        if ((r = codec__member_index_init(&ia, a)) < 0)
            return r;
        if ((r = codec__member_index_init(&ib, b)) < 0) {
            codec__member_index_release(&ia);
            return r;
        }
        for (x = a->child; x && r == 0; x = x->next) {
            if (codec__member_index_get(&ib, x->string))
                continue;
            pointer_append(path, x->string);
            r = add_op(ops, "remove", path->buf, NULL);
            strbuf_setlen(path, len);
        }
        for (y = b->child; y && r == 0; y = y->next) {
            x = codec__member_index_get(&ia, y->string);
            pointer_append(path, y->string);
            r = x ? patch_diff(x, y, path, level + 1, ops) : add_op(ops, "add", path->buf, y);
            strbuf_setlen(path, len);
        }
        codec__member_index_release(&ia);
        codec__member_index_release(&ib);
        return r;
    }
    if (cJSON_IsArray(a) && cJSON_IsArray(b)) {
        const cJSON *x = a->child, *y = b->child;
        size_t i = 0, na = array_size(a);
        /* Elements at the same index are diffed in place; the tail is added or removed. */
        for (; x && y && r == 0; x = x->next, y = y->next, i++) {
            strbuf_addf(path, "/%zu", i);
            r = patch_diff(x, y, path, level + 1, ops);
            strbuf_setlen(path, len);
        }
        for (; y && r == 0; y = y->next) {
            strbuf_addstr(path, "/-");
            r = add_op(ops, "add", path->buf, y);
            strbuf_setlen(path, len);
        }
        /* Removed from the end, so each index is still valid when its operation runs. */
        for (size_t k = na; k > i && r == 0; k--) {
            strbuf_addf(path, "/%zu", k - 1);
            r = add_op(ops, "remove", path->buf, NULL);
            strbuf_setlen(path, len);
        }
        return r;
    }
    r = json_equal(a, b, level);
    if (r < 0)
        return r;
    return r == 1 ? 0 : add_op(ops, "replace", path->buf, b);
}

int json_patch_create(const cJSON *a, const cJSON *b, cJSON **ret)
{
    struct strbuf path = STRBUF_INIT;
    cJSON *ops;
    int r;

    CHECK(a && b && ret);
    codec_init();
    if (!(ops = cJSON_CreateArray()))
        return -ENOMEM;
    strbuf_addstr(&path, "");
    r = patch_diff(a, b, &path, 1, ops);
    strbuf_release(&path);
    if (r < 0) {
        cJSON_Delete(ops);
        return r;
    }
    *ret = ops;
    return 0;
}
