/*
 * Dynamic admission (reference kubernetes-api.md 7): the MutatingWebhookConfiguration and
 * ValidatingWebhookConfiguration objects in the store name HTTPS webhooks that every write of a
 * matching resource is sent to as an admission.k8s.io/v1 AdmissionReview, as kube-apiserver's
 * MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins do
 * (staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/: mutating/dispatcher.go,
 * validating/dispatcher.go, predicates/rules/rules.go, predicates/namespace/matcher.go,
 * predicates/object/matcher.go, request/admissionreview.go, errors/statuserror.go).
 *
 *  - Where: the caller runs mutating webhooks after its built-in mutation and defaulting and
 *    before its validation, and validating webhooks after validation, right before the store
 *    write; deletes run both (mutating ones cannot change a delete: a patch is ignored).
 *  - Which: webhooks whose rules match (operation, group, version, resource and subresource:
 *    "pods", "pods/status", "*", wildcard subresources and resources; scope), whose
 *    namespaceSelector matches the namespace's labels (a Namespace's own labels for a Namespace
 *    create or update; cluster-scoped objects always match) and whose objectSelector matches
 *    the object's or the old object's labels. Writes of webhook configurations themselves are
 *    never sent. matchPolicy Equivalent equals Exact here: this server serves one version of
 *    each group, so there is no other version to convert to.
 *  - Order: mutating webhooks by configuration name, then in their order in it; a webhook with
 *    reinvocationPolicy IfNeeded runs once more after the first round when a webhook after it
 *    changed the object. Validating webhooks run one after another in the same order (kube runs
 *    them in parallel; the outcome is the same but for the time taken and, when several refuse,
 *    which refusal is reported).
 *  - Outcomes, as kube-apiserver words them: a denial answers the webhook's status code (400
 *    when it gave none or one below 400) with `admission webhook "<name>" denied the request:
 *    <message>` (or its reason, or `... denied the request without explanation`); warnings
 *    become Warning headers; a call that fails (transport, timeout, non-200, an answer that
 *    does not verify) refuses the write with 500 `Internal error occurred: failed calling
 *    webhook "<name>": failed to call webhook: Post "<url>?timeout=<n>s": <why>` under
 *    failurePolicy Fail and is logged and skipped under Ignore. A dry-run request that matches a
 *    webhook whose sideEffects is neither None nor NoneOnDryRun is refused with 400 (v1
 *    validation allows only those two, so only objects stored otherwise reach it).
 *  - Cost: the configurations are kept as a parsed, refcounted snapshot, reloaded from the
 *    store only after webhooks_note_write() saw a write to one; with none configured a write
 *    pays a few atomic loads.
 *  - Calls: clientConfig.url, or clientConfig.service resolved through its Service and
 *    Endpoints (svcref.h) with TLS checking <service>.<namespace>.svc; the server certificate
 *    is verified against caBundle (written to a private file) or the system roots; the whole
 *    exchange is bounded by timeoutSeconds.
 *  - Metrics, as kube-apiserver names them:
 *      apiserver_admission_webhook_admission_duration_seconds{name,operation,rejected,type}
 *      apiserver_admission_webhook_request_total{name,type,operation,code,rejected}
 *      apiserver_admission_webhook_rejection_count{name,type,operation,error_type,
 *                                                  rejection_code}
 *      apiserver_admission_webhook_fail_open_count{name,type}
 *    with type "admit" (mutating) or "validating" and error_type calling_webhook_error,
 *    apiserver_internal_error or no_error.
 *
 * Thread safety: every function may be called from any request thread.
 */
#ifndef KOORD_APISERVER_WEBHOOK_H
#define KOORD_APISERVER_WEBHOOK_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "base/strbuf.h"

struct store;
struct api_user;

struct webhooks;

enum webhook_op {
    WEBHOOK_CREATE,
    WEBHOOK_UPDATE,
    WEBHOOK_DELETE,
    WEBHOOK_CONNECT,
};

/* What one admission request is about (everything borrowed). */
struct webhook_attrs {
    enum webhook_op op;
    const char *group, *version, *resource, *subresource; /* the request's ("" for none) */
    const char *kind_group, *kind_version, *kind; /* the kind of the object sent (Binding for
                                                     pods/binding) */
    const char *ns, *name;                        /* "" when none */
    bool namespaced;                              /* the resource's scope */
    bool dry_run;
    const struct api_user *user; /* may be NULL (anonymous) */
    const cJSON *old;            /* oldObject: the stored object (update, delete), or NULL */
    const cJSON *options;        /* the Create/Update/DeleteOptions object, or NULL */
};

/* Why a write was refused: the Status to answer with (its code is the HTTP status). */
struct webhook_outcome {
    cJSON *status;          /* owned; NULL when admitted */
    struct strbuf warnings; /* Warning header values ("299 - \"...\""), one a line */
};

/* clang-format off */
#define WEBHOOK_OUTCOME_INIT { .status = NULL, .warnings = STRBUF_INIT }
/* clang-format on */

void webhook_outcome_release(struct webhook_outcome *o);

/* A dispatcher over store (borrowed; must outlive it). 0 or -ENOMEM. */
int webhooks_new(struct store *store, struct webhooks **ret);

/* No call may be running. NULL is fine. */
void webhooks_free(struct webhooks *w);

/* A write of group/plural happened: configurations are reloaded before the next admission. */
void webhooks_note_write(struct webhooks *w, const char *group, const char *plural);

/* Whether any configured webhook's rules match a (selectors not consulted): callers with a
 * fast path that skips admission take it only when this is false. */
bool webhooks_wanted(struct webhooks *w, const struct webhook_attrs *a);

/*
 * Runs the matching mutating webhooks over *obj (replaced by the patched object; NULL for a
 * delete). 0 when admitted (warnings may be set); -EACCES with out->status when refused.
 */
int webhooks_mutate(struct webhooks *w, const struct webhook_attrs *a, cJSON **obj,
                    struct webhook_outcome *out);

/* Runs the matching validating webhooks over obj (NULL for a delete). Same returns. */
int webhooks_validate(struct webhooks *w, const struct webhook_attrs *a, const cJSON *obj,
                      struct webhook_outcome *out);

/* Appends the metrics above (Prometheus text). */
void webhooks_render_metrics(struct webhooks *w, struct strbuf *out);

#endif
