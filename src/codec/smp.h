/*
 * smp: Kubernetes strategic merge patch over cJSON trees, for the apiserver's PATCH verb with
 * Content-Type application/strategic-merge-patch+json (what kubectl apply, kubectl patch and
 * most Go controllers send for built-in kinds). It is a JSON merge patch in which lists merge
 * by their field's patch strategy, and a few "$" directives steer the merge.
 *
 * The algorithm is generic: which lists merge, and by which key, comes from the caller through
 * smp_lookup_fn (for the served kinds: api/smp.h, the patchStrategy/patchMergeKey struct tags
 * of k8s.io/api). Semantics follow k8s.io/apimachinery pkg/util/strategicpatch (patch.go,
 * mergeMap and mergeSlice with MergeParallelList and IgnoreUnmatchedNulls, the options
 * kube-apiserver applies patches with) and the community document
 * contributors/devel/sig-api-machinery/strategic-merge-patch.md:
 *  - objects merge member by member; null deletes the member; a value whose type differs from
 *    the original's replaces it;
 *  - lists without the merge strategy (atomic) are replaced whole;
 *  - merge lists of scalars (metadata.finalizers) become the union, without duplicates;
 *    "$deleteFromPrimitiveList/<field>": [values] then removes values from that list;
 *  - merge lists of objects merge element by element on the merge key: a patch element whose
 *    key is in the list merges into the first such element, others are appended;
 *    {"$patch": "delete", <key>: v} deletes every element with that key;
 *    {"$patch": "replace"} anywhere in the patch list makes the list exactly the patch's other
 *    elements;
 *  - in an object, "$patch": "replace" makes the object exactly the rest of the patch object,
 *    "$patch": "delete" makes it {} (upstream returns an empty map, not a removal);
 *    "$retainKeys": [names] first drops the original's members not named (every non-null
 *    member the patch sets must be named);
 *  - order of a merged list: "$setElementOrder/<field>": [elements or {key: v}] puts the
 *    elements it names in its order; otherwise elements named by the patch list come in the
 *    patch's order. Elements only the original has keep their relative order and are placed
 *    before the first patch element that followed them in the original (upstream
 *    mergeSortedSlice); new elements come where the order puts them.
 * Errors where upstream errors: "$patch": "merge" (the document calls merge a struct-tag
 * strategy only; patch.go rejects it in objects and lists), other "$patch" values, a merge list
 * mixing element types or holding lists, objects without the merge key, a patch list whose
 * elements are out of the "$setElementOrder" order, malformed directive values. Also an error
 * here: unknown directives, i.e. "$" names with a "/" ("$setElementorder/x") and the two list
 * directives without their "/<field>". Other "$" names are ordinary members, as upstream
 * treats them: CRD schemas have "$ref" and "$schema" properties.
 * Deliberate differences, none of which kubectl or client-go produce:
 *  - a patch value for a member the original lacks is merged into nothing, so the directives
 *    inside it are applied and its nulls dropped (upstream copies it raw and the typed decoder
 *    drops the "$" members, or turns {"$patch": "delete", ...} list elements into elements);
 *  - "$setElementOrder" on a list that is not a merge list is ignored (the list is replaced by
 *    the patch, in the patch's order), and "$deleteFromPrimitiveList" removes values whatever
 *    the list's strategy, so an incomplete strategy table degrades gently;
 *  - members the lookup does not know merge like any other (upstream refuses to merge an
 *    object or list the Go struct lacks; such members cannot be stored anyway).
 *
 * HTTP mapping for the caller: -EINVAL is 400 BadRequest (kube-apiserver answers the
 * malformed-directive errors with 400, lists of lists with 422 and the rest with 500; every one
 * is a malformed patch), -E2BIG 413 RequestEntityTooLarge, -ENOMEM 500.
 */
#ifndef KOORD_CODEC_SMP_H
#define KOORD_CODEC_SMP_H

#include <cjson/cJSON.h>
#include <stdbool.h>

struct codec_error;

/* What the struct tags say about one list field. */
struct smp_list_meta {
    bool merge;            /* patchStrategy "merge" (alone or with "retainKeys") */
    const char *merge_key; /* patchMergeKey; NULL for a merge list of scalars */
};

/*
 * The strategy of the list at path: member names from the document root joined by '.', list
 * levels left out ("spec.containers.env" for every container's env). Returns true and fills
 * *ret for a merge list, false for an atomic one (the default). userdata is passed through.
 * Must not fail; paths longer than 256 bytes are never looked up (they are atomic).
 */
typedef bool (*smp_lookup_fn)(const char *path, const void *userdata, struct smp_list_meta *ret);

/*
 * Applies the strategic merge patch patch (borrowed; must be an object) to *doc, with list
 * strategies from lookup(path, userdata). Same contract as merge_patch_apply(): all or nothing;
 * on success *doc is the patched tree (possibly a new one; a non-object *doc is treated as {})
 * and 0 is returned; on failure *doc is exactly as before and err (may be NULL) says what and
 * where ('spec.containers: element 2 has no merge key "name"').
 *
 * Errors: -EINVAL malformed patch (see above); -E2BIG when *doc or the result exceeds
 * codec_default_limits.max_nodes items or PATCH_MAX_DEPTH nesting, or the patch nests deeper
 * than PATCH_MAX_DEPTH; -ENOMEM.
 * Lookups by merge key and value sets are hashed, so run time is O(n log n) in the sizes of
 * *doc and patch (the sort is the ordering step), whatever the lists hold.
 */
int strategic_merge_patch_apply(cJSON **doc, const cJSON *patch, smp_lookup_fn lookup,
                                const void *userdata, struct codec_error *err);

#endif
