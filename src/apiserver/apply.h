/*
 * Server-side apply and managedFields, as kube-apiserver keeps them (k8s.io/apiserver
 * pkg/endpoints/handlers/fieldmanager and structured-merge-diff's merge/update.go; reference
 * kubernetes-api.md 2.1 and 3.5; Kubernetes' "Server-Side Apply" documentation).
 *
 * Every write records which field manager set which fields in metadata.managedFields: one
 * entry per (manager, operation, subresource), operation "Apply" for apply patches and "Update"
 * for every other create, update and patch, each holding the fields it owns as fieldsV1. An
 * apply (PATCH with application/apply-patch+yaml) merges the applied configuration into the
 * object by the list types of the kind, removes the fields its manager applied before and no
 * longer applies (unless another manager owns them), and is refused with 409 when it would
 * change a field another manager owns, unless forced, which takes the field over.
 *
 * List types and map keys come from the resource's description: the x-kubernetes-list-type and
 * x-kubernetes-list-map-keys of a CRD's schema, and for built-in kinds their patch metadata
 * (api/patchmeta.h: a merge list with a merge key is a map keyed by it, one without a set, as
 * kube's OpenAPI conversion has it) plus the listType/listMapKey tags that differ (container
 * and Service ports keyed by port and protocol, label and node selectors atomic).
 *
 * This file is the logic over trees; apiserver.c wires it to the verbs (reads, preconditions,
 * admission, the write). Nothing here runs unless a write happens, and only over the object
 * written.
 */
#ifndef KOORD_APISERVER_APPLY_H
#define KOORD_APISERVER_APPLY_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "api/field.h"
#include "base/strbuf.h"

struct api_resource;

/* kube's FieldManagerMaxLength. */
#define APPLY_MANAGER_MAX 128

/* kube's DefaultMaxUpdateManagers: Update entries beyond it fold into "ancient-changes". */
#define APPLY_MAX_UPDATERS 10

/*
 * The manager of a write (handlers' managerOrUserAgent): the fieldManager query value when
 * set, else the user agent up to its first '/' ("kubectl" for "kubectl/v1.32.0 (linux/amd64)"),
 * non-printable characters dropped, at most APPLY_MANAGER_MAX bytes. Either may be NULL.
 */
void apply_field_manager(const char *query, const char *user_agent, struct strbuf *out);

/* Checks a fieldManager query value as ValidateFieldManager does (at most 128 bytes, printable
 * characters only), appending to errs under field "fieldManager". */
void apply_check_field_manager(const char *manager, struct field_errors *errs);

/*
 * The managedFields an Update operation leaves on obj (create: live NULL), a new array in
 * *ret_mf, or NULL when the object is to have none. The entries are obj's own when it carries
 * a non-empty managedFields (a client's replace the stored ones, as in kube), else live's; an
 * empty list clears them and records nothing. The fields that changed from live to obj become
 * manager's (operation Update, this subresource, obj's apiVersion, time now), are taken from
 * every other entry, and so are the fields obj no longer has. -EINVAL with errs filled when
 * obj's managedFields are malformed (answered 422 by the caller).
 */
int apply_update_managed_fields(const struct api_resource *res, const char *subresource,
                                const cJSON *live, const cJSON *obj, const char *manager,
                                const char *now, cJSON **ret_mf, struct field_errors *errs);

/*
 * An apply of config (borrowed; the decoded body) by manager over live (NULL when the object
 * does not exist: apply creates). On success returns 0 with *ret_obj the new object (owned; its
 * metadata.managedFields set) and *ret_unchanged true when nothing at all changed (kube answers
 * the live object without writing). On failure returns <0 with *ret_status the Status to answer:
 * 409 Conflict with one FieldManagerConflict cause per field another manager owns (unless
 * force), 400 BadRequest for a config carrying managedFields, 422 for list items that break
 * their list type.
 */
int apply_patch(const struct api_resource *res, const char *subresource, const cJSON *live,
                const cJSON *config, const char *manager, bool force, const char *now,
                cJSON **ret_obj, bool *ret_unchanged, cJSON **ret_status);

#endif
