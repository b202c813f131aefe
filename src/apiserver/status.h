/*
 * Kubernetes `Status` objects (reference kubernetes-api.md 2.4): every error the API server
 * answers is one, with the reason and code clients switch on and, for validation failures,
 * one `details.causes[]` entry per field error. The constructors mirror apimachinery's
 * pkg/api/errors (NewNotFound, NewAlreadyExists, NewConflict, NewInvalid, ...), messages
 * included, because kubectl prints them verbatim.
 */
#ifndef KOORD_APISERVER_STATUS_H
#define KOORD_APISERVER_STATUS_H

#include <cjson/cJSON.h>

#include "api/field.h"

/* Which object a status is about: group ("" for core), resource (plural, as kube-apiserver
 * puts it in details.kind) and name. Any may be NULL. */
struct api_status_target {
    const char *group;
    const char *resource;
    const char *name;
};

/* A Failure status with the given HTTP code, reason and message (details from t, may be NULL).
 * Returns a new tree; aborts only on OOM of small internal sizes (x* allocation). */
cJSON *api_status_failure(int code, const char *reason, const char *message,
                          const struct api_status_target *t);

/* 404 NotFound: `pods "p" not found`, `nodemetrics.slo.koordinator.sh "n1" not found`. */
cJSON *api_status_not_found(const struct api_status_target *t);

/* 409 AlreadyExists: `pods "p" already exists`. */
cJSON *api_status_already_exists(const struct api_status_target *t);

/* 409 Conflict for a stale resourceVersion (optimistic concurrency). */
cJSON *api_status_conflict(const struct api_status_target *t);

/* 410 Expired: `too old resource version: <rv> (<oldest>)`. */
cJSON *api_status_expired(unsigned long long rv, unsigned long long oldest);

/*
 * 422 Invalid: `<Kind>[.<group>] "<name>" is invalid: <errors>` with details.kind = the Kind
 * and one cause per error (warnings skipped): {reason: FieldValue..., message, field}.
 */
cJSON *api_status_invalid(const char *kind, const char *group, const char *name,
                          const struct field_errors *errs);

/* A Success status (`"status":"Success"`), e.g. for DELETE or create-only subresources. */
cJSON *api_status_success(int code, const struct api_status_target *t, const char *uid);

/* Maps a negative errno from the store or the API layer to a status; message may be NULL. */
cJSON *api_status_from_errno(int r, const char *message, const struct api_status_target *t);

#endif
