/*
 * Kubernetes label rules and label selectors. Validation mirrors apimachinery
 * pkg/util/validation/validation.go (IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain,
 * IsDNS1123Label) with the message strings Kubernetes has printed since 1.20 ("must be no more
 * than 63 characters", "a lowercase RFC 1123 subdomain ..."; the newest releases, after the move
 * to api/validate/content, say "bytes" and "a valid label key" instead). Selectors mirror
 * pkg/labels/selector.go (the string grammar of labels.Parse, Requirement matching,
 * Selector.String) and pkg/apis/meta/v1/helpers.go LabelSelectorAsSelector for the JSON form.
 */
#ifndef KOORD_API_LABELS_H
#define KOORD_API_LABELS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "base/strbuf.h"

/*
 * Validation. Each returns 0 when s is valid and -EINVAL when not; on -EINVAL the Kubernetes
 * error strings, joined with "; ", are appended to why (which may be NULL).
 */

/* Qualified name: label keys, annotation keys (the caller lower-cases those first), scheduling
 * gate names, resource names. Optional DNS-1123 subdomain prefix and '/', then a name of at most
 * 63 characters matching ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]. */
int labels_check_qualified_name(const char *s, struct strbuf *why);
/* Label value: empty, or at most 63 characters matching the qualified-name-part pattern. */
int labels_check_value(const char *s, struct strbuf *why);
/* DNS-1123 subdomain: at most 253 characters, dot-separated lower-case RFC 1123 labels. */
int labels_check_dns1123_subdomain(const char *s, struct strbuf *why);
/* DNS-1123 label: at most 63 characters, [a-z0-9]([-a-z0-9]*[a-z0-9])?. */
int labels_check_dns1123_label(const char *s, struct strbuf *why);

/*
 * Selectors. A struct label_selector is immutable once built, so one may be shared by several
 * readers (threads included) while nobody frees it.
 */
struct label_selector;

/* Peer-controlled input is bounded: longer strings or larger selectors fail with -E2BIG. */
#define LABEL_SELECTOR_MAX_STR    65536 /* bytes of a selector string */
#define LABEL_SELECTOR_MAX_REQS   1000  /* requirements in one selector */
#define LABEL_SELECTOR_MAX_VALUES 10000 /* values over all requirements */

/*
 * Parses the string syntax of labels.Parse, e.g. "a=b,c in (x,y),!d,e!=f,g==h,k,x notin (a),n>3".
 * "" (or only whitespace) selects everything. Keys and values are validated as above; Gt/Lt
 * operands must be int64 numbers. Requirements are sorted by key (stably).
 *
 * Returns 0 and *ret (free with label_selector_free()); -EINVAL with the Kubernetes-style message
 * appended to err (e.g. "unable to parse requirement: found '', expected: identifier" or
 * "found ',', expected: !, identifier, or 'end of string'"); -E2BIG past the limits above;
 * -ENOMEM. err may be NULL. *ret is untouched on failure.
 */
int label_selector_parse(const char *s, struct label_selector **ret, struct strbuf *err);

/*
 * Builds a selector from a metav1.LabelSelector JSON object (LabelSelectorAsSelector): NULL or
 * JSON null selects nothing; an object without matchLabels/matchExpressions entries ({})
 * selects everything. matchLabels entries become "key=value"; matchExpressions take operators
 * In and NotIn (non-empty values) and Exists and DoesNotExist (no values). Same return codes as
 * label_selector_parse(); messages like "key: Invalid value: \"a b\": name part must ..." or
 * "\"Gt\" is not a valid label selector operator".
 */
int label_selector_from_json(const cJSON *sel, struct label_selector **ret, struct strbuf *err);

/*
 * Whether labels (a JSON object whose string members are the labels; NULL = no labels) satisfy
 * every requirement. Members that are not strings count as absent. A "nothing" selector
 * matches no label set.
 */
bool label_selector_matches(const struct label_selector *sel, const cJSON *labels);

/* True when sel has no requirements and so matches everything (false for "nothing"). */
bool label_selector_is_empty(const struct label_selector *sel);

/*
 * Appends the canonical form printed by Selector.String(): requirements sorted by key, joined
 * by ','; each "key=v", "key==v", "key!=v", "key in (a,b)", "key notin (a,b)", "key>n",
 * "key<n", "key" or "!key", values sorted. Nothing is appended for an empty or "nothing"
 * selector. Parsing the output again yields the same selector.
 */
void label_selector_format(const struct label_selector *sel, struct strbuf *out);

/* Frees sel; NULL is fine. */
void label_selector_free(struct label_selector *sel);

#endif
