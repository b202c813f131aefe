/*
 * patch: JSON Patch (RFC 6902) and JSON Merge Patch (RFC 7386) over cJSON trees, for the
 * apiserver's PATCH verb (Content-Type application/json-patch+json and
 * application/merge-patch+json), and the merge-patch diff used to compute what changed.
 * Patches arrive from the network, so every function bounds work, depth and growth, and leaves
 * the caller's tree untouched unless it fully succeeds.
 *
 * Kubernetes applies JSON patches with gopkg.in/evanphx/json-patch.v4
 * (apiserver pkg/endpoints/handlers/patch.go). Where that library departs from the RFC this code
 * follows the RFC, as kubectl relies on none of the quirks:
 *  - negative array indices ("/a/-1" = last element) are an error here (v4 accepts them);
 *  - "test" on a missing location fails even when "value" is null (v4 passes it);
 *  - the root pointer "" works for add/replace/test/copy/move (v4 reports a missing path);
 *  - "add"/"replace"/"test" without "value" are an error (v4 adds or compares null);
 *  - "~" followed by anything but 0 or 1, and array indices with leading zeros ("01"), are
 *    errors (Go keeps the "~" literally and reads "01" as 1);
 *  - moving a location into its own child is an error, moving it onto itself a no-op.
 * Kept from Kubernetes: at most max_ops operations (the apiserver passes 10000 and answers 413),
 * and "testing value ... failed" as the test failure message.
 *
 * HTTP mapping for the caller (kubernetes-api.md 3.5): a patch body that is not a JSON array
 * of objects is a decode error (400 BadRequest; the caller can check cJSON_IsArray() and the
 * element types itself before calling); other -EINVAL and -ECANCELED are 422 (Invalid /
 * UnprocessableEntity, message err->msg); -E2BIG is 413 RequestEntityTooLarge.
 *
 * All functions call codec_init(), so every cJSON allocation goes through the checked allocator
 * and allocation failures come back as -ENOMEM.
 */
#ifndef KOORD_CODEC_PATCH_H
#define KOORD_CODEC_PATCH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct codec_error;

/* Deepest nesting a patched document may reach ("[]" is depth 1, as in struct codec_limits), and
 * deepest object nesting merge_patch_apply()/merge_patch_create() recurse into. It equals
 * codec_default_limits.max_depth, so whatever a patch produces can be parsed again. */
#define PATCH_MAX_DEPTH 100

/* JSON bytes the "copy" operations of one JSON patch may add in all. kube-apiserver sets
 * json-patch's AccumulatedCopySizeLimit to its request size limit (k8s.io/apiserver
 * pkg/server/config.go, JSONPatchMaxCopyBytes = MaxRequestBodyBytes = 3 MiB); so does this,
 * http's default max_body. */
#define PATCH_MAX_COPY_BYTES (3u << 20)

/* Unlike Go's json-patch, each copied item is also charged this much (about what a cJSON item
 * takes beyond its text), so the limit bounds memory, not only text: 3 MiB of "[0,0,...]"
 * would otherwise be 1.5 million items, 100 MB. */
#define PATCH_COPY_ITEM_BYTES 32u

/* Steps (array elements and object members walked, items counted) one JSON patch may take:
 * PATCH_WORK_PER_ITEM per item of the document and the patch, plus PATCH_WORK_MIN. Patches a
 * client computes (kubectl, a diff) take a few steps per operation; only indices far apart in
 * long arrays, or members of very wide objects, come near this. */
#define PATCH_WORK_PER_ITEM 32u
#define PATCH_WORK_MIN      (1u << 20)

/*
 * Applies the RFC 6902 patch document patch (an array of operation objects: add, remove,
 * replace, move, copy, test) to *doc, in order, all or nothing. patch is borrowed; *doc must be
 * a standalone tree (not NULL, not linked into another tree). On success *doc is the patched tree,
 * possibly a new one (operations on the root path "" replace it; the old tree is then freed), and 0
 * is returned. On any failure *doc is exactly as before (the patch is applied to a copy). err may
 * be NULL; on failure err->msg names the operation by its 0-based index and op, and the reason,
 * e.g. 'operation 2 (remove): path "/a/b" does not exist'; line and column are 0.
 *
 * Errors:
 *  -EINVAL    malformed patch: not an array, an operation that is not an object, unknown or
 *             missing "op", missing or non-string "path"/"from", missing "value", bad JSON
 *             pointer syntax (RFC 6901), "from" a proper prefix of "path" in move; or an
 *             operation that does not apply: a location (or its parent, for add) that does not
 *             exist, an array index out of range, "-" outside add, removing the root;
 *             The "copy" operations adding more than PATCH_MAX_COPY_BYTES in all is -EINVAL
 *             too, with Go's json-patch wording ('Unable to complete the copy, the accumulated
 *             size increase of copy is N, exceeding the limit M'), 422 as in kube-apiserver;
 *  -ECANCELED a "test" operation found a different value ('testing value "/a" failed');
 *  -E2BIG     more than max_ops operations, or the document would exceed
 *             codec_default_limits.max_nodes items or PATCH_MAX_DEPTH nesting (also when *doc
 *             already does), or the patch takes more than its work bound (PATCH_WORK_PER_ITEM);
 *  -ENOMEM    allocation failed.
 * "test" compares by JSON value: object members in any order, numbers by numeric value
 * (1 equals 1.0), strings byte for byte, and costs at most the size of its value. Run time is
 * O(path) per operation for array indices near one used before (each array keeps cursors) and
 * bounded by the work bound otherwise; memory is the working copy plus what the operations add
 * (their values, and PATCH_MAX_COPY_BYTES of copies).
 */
int json_patch_apply(cJSON **doc, const cJSON *patch, size_t max_ops, struct codec_error *err);

/*
 * Applies the RFC 7386 merge patch patch (borrowed) to *doc: an object patch merges member by
 * member (null deletes the member, an object merges recursively into an object member or
 * replaces a non-object one, anything else replaces the member; arrays are replaced whole);
 * if *doc is not an object it is treated as {}. A non-object patch replaces the whole
 * document. Members new to the target have their null members pruned, as the RFC's algorithm
 * does. Same ownership as json_patch_apply(): 0 with *doc updated (possibly a new tree), or an
 * error with *doc unchanged: -E2BIG when the patch nests objects deeper than PATCH_MAX_DEPTH,
 * -ENOMEM. err may be NULL. Large objects are indexed by a keyed hash, so run time is linear
 * in the sizes of *doc and patch.
 */
int merge_patch_apply(cJSON **doc, const cJSON *patch, struct codec_error *err);

/*
 * Computes the RFC 7386 merge patch that turns a into b (both borrowed): if both are objects,
 * an object holding null for each member of a missing from b, the recursive diff for members
 * that are objects in both (left out when empty), and a copy of b's member for members new or
 * changed (compared by JSON value as in "test"); otherwise a copy of b. Identical objects give
 * {}. merge_patch_apply(create(a, b)) on a gives b, provided no object member of b is null (a
 * merge patch cannot express a null member: null means delete).
 * On success *ret takes the new tree and 0 is returned; -E2BIG when the objects nest deeper than
 * PATCH_MAX_DEPTH, -ENOMEM; *ret is untouched on error.
 */
int merge_patch_create(const cJSON *a, const cJSON *b, cJSON **ret);

/*
 * Computes an RFC 6902 JSON Patch that turns a into b (both borrowed), what an admission webhook
 * answers with (patchType JSONPatch): members of objects are removed, added or diffed
 * recursively; arrays are diffed element by element at the same index, extra elements of b
 * appended with "/-" and extra elements of a removed from the highest index down; any other
 * difference (type, scalar value) is a "replace" of that location, of the root ("") when a and
 * b differ there. Keys are escaped per RFC 6901 ("~" -> "~0", "/" -> "~1"). Identical values
 * give []. json_patch_apply(a, create(a, b)) gives b.
 * On success *ret takes the new array and 0 is returned; -E2BIG past PATCH_MAX_DEPTH, -ENOMEM;
 * *ret is untouched on error.
 */
int json_patch_create(const cJSON *a, const cJSON *b, cJSON **ret);

/*
 * Whether a and b (either may be NULL: equal only to NULL) are the same JSON value, as "test"
 * compares them. Linear in the sizes of a and b. Use it instead of cJSON_Compare(), which
 * compares every object member twice at every level and so takes time exponential in the
 * nesting depth (seconds for a CRD's schema). false when it cannot tell: nesting deeper than
 * PATCH_MAX_DEPTH, or allocation failure.
 */
bool json_value_equal(const cJSON *a, const cJSON *b);

#endif
