/*
 * What the workload kinds share (apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet,
 * batch/v1 Job and CronJob, policy/v1 PodDisruptionBudget): a pod template validated as a Pod
 * is (the core/v1 PodSpec description of types_core.c), a selector that must select the
 * template, int-or-percent fields, and the Go renderings kube's error messages embed
 * (`v1.LabelSelector{...}`, `map[string]string{...}`), so that koord refuses what
 * kube-apiserver refuses with the same words (pkg/apis/apps/validation, batch/validation,
 * policy/validation of kubernetes 1.33). koord runs no workload controllers: these kinds are
 * stored, validated and defaulted as kube-apiserver alone would.
 */
#ifndef KOORD_API_WORKLOADS_H
#define KOORD_API_WORKLOADS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "api/schema.h"
#include "base/strbuf.h"

/* core/v1 PodSpec with its rules (types_core.c), and PodTemplateSpec (metadata + spec). */
extern const struct api_schema api_pod_spec, api_pod_template;

/* The PodSpec defaults no schema default expresses (the containers' imagePullPolicy by image
 * tag); api_object_default() applies them to a Pod and to the templates of the workload kinds. */
void api_pod_spec_defaults(cJSON *spec);

/* Go's %#v of a map[string]string: `map[string]string{"a":"b", "c":"d"}` (keys sorted), or
 * `map[string]string(nil)` when m is not an object. */
void api_go_string_map(const cJSON *m, struct strbuf *out);

/* Go's %#v of a metav1.LabelSelector, e.g. `v1.LabelSelector{MatchLabels:map[string]string{
 * "app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}`; "null" when absent. */
void api_go_label_selector(const cJSON *sel, struct strbuf *out);

/* Go's %#v of an intstr.IntOrString: `intstr.IntOrString{Type:1, IntVal:0, StrVal:"25%"}`. */
void api_go_int_or_string(const cJSON *v, struct strbuf *out);

/*
 * The selector string labels.Selector.String() writes for a metav1.LabelSelector ("app=web",
 * "tier in (a,b)"), appended to out; nothing for a null or empty selector. -EINVAL when the
 * selector does not parse (nothing appended).
 */
int api_selector_string(const cJSON *sel, struct strbuf *out);

/*
 * intstr.GetScaledValueFromIntOrPercent: an integer as it is, "N%" as N% of total rounded up
 * (round_up) or down. -EINVAL for anything else (a string that is not a percent).
 */
int api_int_or_percent_scaled(const cJSON *v, int total, bool round_up, int *ret);

/*
 * ValidatePositiveIntOrPercent, and IsNotMoreThan100Percent when not_over_100: errors at the
 * walk's path + child (v may be NULL: nothing to check).
 */
void api_check_int_or_percent(struct api_walk *w, const char *child, const cJSON *v,
                              bool not_over_100);

/* Rules of a workload spec's selector and template, at the walk's path (the spec). */
enum api_template_rules {
    API_TPL_SELECTOR_REQUIRED = 1 << 0,   /* spec.selector: Required value */
    API_TPL_SELECTOR_NOT_EMPTY = 1 << 1,  /* "empty selector is invalid for <kind>" */
    API_TPL_RESTART_ALWAYS = 1 << 2,      /* restartPolicy must be Always */
    API_TPL_RESTART_NOT_ALWAYS = 1 << 3,  /* restartPolicy OnFailure or Never (jobs) */
    API_TPL_NO_DEADLINE = 1 << 4,         /* activeDeadlineSeconds is forbidden */
    API_TPL_DEADLINE_INVALID = 1 << 5,    /* ... reported as Invalid (DaemonSet) */
    API_TPL_SELECTOR_MUST_MATCH = 1 << 6, /* the selector must select the template's labels */
    API_TPL_POD_SPEC = 1 << 7,            /* the template has a pod spec with containers */
};

/*
 * Checks spec.selector and spec.template of a workload spec as kube's
 * ValidatePodTemplateSpecForReplicaSet and its siblings do: kind names the workload in the
 * messages ("deployment", "ReplicaSet"...: empty_kind is the word of the empty-selector
 * message, deadline_kind that of the activeDeadlineSeconds one). An absent restartPolicy counts
 * as Always, its default.
 */
void api_check_workload_template(struct api_walk *w, const cJSON *spec, unsigned rules,
                                 const char *empty_kind, const char *deadline_kind);

/* ValidateNonnegativeField at the walk's path + child when v is a number. */
void api_check_nonnegative(struct api_walk *w, const char *child, const cJSON *v);

/* ValidateImmutableField for a selector: "<path>: Invalid value: v1.LabelSelector{...}: field
 * is immutable" when the two differ. */
void api_check_selector_immutable(const cJSON *old_sel, const cJSON *new_sel, const char *path,
                                  struct field_errors *errs);

/* The member at the dotted path ("spec.selector") of o, NULL when absent or null. */
const cJSON *api_get_path(const cJSON *o, const char *path);

/* Resets status to an empty object, as every workload strategy's PrepareForCreate does. */
void api_reset_status(cJSON *obj);

/* Sets o[key] to v (taken over) when o lacks it or holds null; 0 or -ENOMEM. */
int api_set_default(cJSON *o, const char *key, cJSON *v);

#endif
