/*
 * Field sets of server-side apply: which fields of an object a field manager owns, and the
 * merge that apply performs. This is the part of sigs.k8s.io/structured-merge-diff (v4:
 * fieldpath, typed/tofieldset.go, typed/compare.go, typed/merge.go, merge/update.go) that
 * kube-apiserver's managedFields rest on, written over cJSON trees.
 *
 * A set is kept in the wire form of metadata.managedFields[].fieldsV1, so that it needs no
 * second data structure and a stored entry is used as it is decoded:
 *   {"f:metadata":{"f:labels":{"f:app":{}}},
 *    "f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{}}}}}
 * "f:<name>" is a member of an object, "k:<json object>" the item of a list keyed by its map
 * keys (key fields sorted by name), "v:<json>" the item of a set list, "i:<n>" an item by index
 * (only read, never produced), "." the node itself. Inside this module every member node
 * carries "." explicitly (api_fieldset_decode() adds it to leaves, api_fieldset_encode() drops
 * it again where the wire form leaves it implicit); a node that is not a member has children.
 *
 * What is granular comes from the caller: api_fs_type_fn answers, for a path of member names
 * joined by '.' with list levels left out ("spec.containers.ports"), whether the object or
 * list there is atomic, a set or a map keyed by some fields. Objects are granular and lists
 * atomic unless it says otherwise (structured-merge-diff's defaults for deduced types).
 *
 * Pure: no I/O, no logging; trees are cJSON, allocation failures abort (CHECK) as everywhere
 * else in the api module's tree code. Bounded by the sizes of the objects given.
 */
#ifndef KOORD_API_FIELDSET_H
#define KOORD_API_FIELDSET_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "base/strbuf.h"

#define API_FS_MAX_KEYS 8

enum api_fs_kind {
    API_FS_DEFAULT, /* objects granular, lists atomic */
    API_FS_ATOMIC,  /* x-kubernetes-map-type/list-type atomic: owned and replaced whole */
    API_FS_SET,     /* x-kubernetes-list-type set: scalar items, each owned alone */
    API_FS_MAP,     /* x-kubernetes-list-type map: object items identified by keys */
};

struct api_fs_type {
    enum api_fs_kind kind;
    const char *keys[API_FS_MAX_KEYS + 1]; /* API_FS_MAP: the map keys, NULL-terminated */
    const char *key_dflt[API_FS_MAX_KEYS]; /* JSON text of a key's default (a port's protocol
                                              "TCP"), or NULL: an item lacking the key has it */
};

/* Fills *ret (zeroed by the caller) for the object or list at path ("" is the root). */
typedef void (*api_fs_type_fn)(const char *path, const void *userdata, struct api_fs_type *ret);

struct api_fs_types {
    api_fs_type_fn fn; /* NULL: every default */
    const void *userdata;
};

/* An empty set (a new tree). */
cJSON *api_fieldset_new(void);

/*
 * The set of fields obj states (tofieldset.go): every scalar, atomic object or list, and empty
 * object or list, plus every item of a set or map list. The root is never a member. Returns 0
 * with *ret a new set, or -EINVAL when a map-list item lacks a key field without default or two
 * items share keys (or a set list repeats a value or holds a non-scalar), with err (may be
 * NULL) saying where: ".spec.containers: duplicate entries for key [name=\"app\"]".
 */
int api_fieldset_from_object(const cJSON *obj, const struct api_fs_types *types, cJSON **ret,
                             struct strbuf *err);

/*
 * What changed from old to new (compare.go): *ret_changed gets the fields new has that old lacks
 * or holds with another value (an object or map-list item new adds is itself a member, except
 * the root's direct members, as Go's zero value of a kind already holds metadata and spec),
 * *ret_removed the fields old has that new lacks. old or new may be NULL (nothing).
 */
void api_fieldset_compare(const cJSON *old, const cJSON *new_obj, const struct api_fs_types *types,
                          cJSON **ret_changed, cJSON **ret_removed);

/* a |= b. */
void api_fieldset_union(cJSON *a, const cJSON *b);

/* a -= b: b's members stop being a's members (children of a member of b stay). */
void api_fieldset_subtract(cJSON *a, const cJSON *b);

/* Removes the member path (member names, NULL-terminated) and, with `subtree`, everything under
 * it. Used for the fields kube never tracks (metadata.name, ...) and for status. */
void api_fieldset_remove(cJSON *s, const char *const *path, bool subtree);

/* Keeps only what is at or under the member path (NULL-terminated member names). */
void api_fieldset_keep_only(cJSON *s, const char *const *path);

/* A new set: the members a and b share. */
cJSON *api_fieldset_intersect(const cJSON *a, const cJSON *b);

bool api_fieldset_is_empty(const cJSON *s);

/* Whether a and b hold the same members. */
bool api_fieldset_equal(const cJSON *a, const cJSON *b);

/*
 * A fieldsV1 value into a set: *ret a new set, or -EINVAL with err (may be NULL) when v is not
 * an object of "f:", "k:", "v:", "i:" and "." members whose values are objects, or a "k:"
 * member is not a JSON object, a "v:" member not JSON.
 */
int api_fieldset_decode(const cJSON *v, cJSON **ret, struct strbuf *err);

/* The fieldsV1 wire form of s (a new tree): "." only where a member has children. */
cJSON *api_fieldset_encode(const cJSON *s);

/* Appends each member's path, as fieldpath.Path prints it (".data.key",
 * ".spec.containers[name=\"app\"].image", ".metadata.finalizers[=\"x\"]"), one a line. */
void api_fieldset_paths(const cJSON *s, struct strbuf *out);

/*
 * live with config applied over it (merge.go), a new tree: objects merge member by member (a
 * null in config removes the member), atomic values and lists are config's, set and map lists
 * merge item by item (matched items merged, live's other items kept in place, config's order for
 * the items it names). live may be NULL. -EINVAL with err as api_fieldset_from_object() when
 * config's list items break their list type.
 */
int api_fieldset_merge(const cJSON *live, const cJSON *config, const struct api_fs_types *types,
                       cJSON **ret, struct strbuf *err);

/*
 * Removes from obj the fields that are members of drop and that keep holds neither as members
 * nor above members of its own (a list item another manager still owns a field of stays): what
 * apply does with fields a manager stops applying (merge/update.go prune).
 */
void api_fieldset_prune(cJSON *obj, const cJSON *drop, const cJSON *keep,
                        const struct api_fs_types *types);

#endif
