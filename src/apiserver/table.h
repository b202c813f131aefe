/*
 * Server-side Table rendering (`meta.k8s.io/v1` Table, reference kubernetes-api.md 10.2-10.4):
 * what `kubectl get` asks for with `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
 * kubectl prints the cells verbatim, so the server computes them the way kube-apiserver does:
 * the pod and node printers of pkg/printers/internalversion/printers.go, the CRD table of
 * apiextensions-apiserver's tableconvertor (additionalPrinterColumns, JSONPath cells, "date"
 * columns as ages), and apimachinery's duration.HumanDuration for every age.
 */
#ifndef KOORD_APISERVER_TABLE_H
#define KOORD_APISERVER_TABLE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

struct api_kind;

/* The includeObject query parameter: Metadata (the default), Object or None. */
enum table_include {
    TABLE_INCLUDE_METADATA, /* rows[].object = PartialObjectMetadata (kind, apiVersion, metadata) */
    TABLE_INCLUDE_OBJECT,   /* rows[].object = the whole object */
    TABLE_INCLUDE_NONE,     /* no rows[].object */
};

/* Large enough for any table_human_duration() output ("106751991167300d" and the like). */
#define TABLE_DURATION_MAX 32

/*
 * Writes seconds as apimachinery's duration.HumanDuration prints an age, NUL-terminated, into
 * buf and returns its length: "<invalid>" below -1s, "0s" for -1s, "<n>s" below 2 minutes,
 * "XmYs" below 10 minutes ("Xm" when Y is 0), "Xm" below 3 hours, "XhYm" below 8 hours, "Xh"
 * below 48 hours, "XdYh" below 8 days, "Xd" below 2 years (730 days), "XyYd" below 8 years
 * (a year is 365 days), "Xy" above. Examples: 119 -> "119s", 599 -> "9m59s", 600 -> "10m",
 * 28740 -> "7h59m", 172800 -> "2d", 63072000 -> "2y".
 */
size_t table_human_duration(int64_t seconds, char buf[TABLE_DURATION_MAX]);

/* translateTimestampSince of an RFC 3339 string: the age at now (Unix seconds) as
 * table_human_duration() writes it, "<unknown>" for an absent, empty or unparsable time. */
void table_age(const cJSON *ts, int64_t now, char buf[TABLE_DURATION_MAX]);

/*
 * Evaluates the JSONPath subset CRD printer columns use against obj and returns the value it
 * names (borrowed from obj), or NULL when it is absent or the path is malformed or outside the
 * subset. Accepted: an optional leading "$", then steps ".name" (a backslash escapes the next
 * character, so `.metadata.labels.kubernetes\.io/os` works), "['key']" or "[\"key\"]" (any
 * characters but the quote), and "[N]" (N may be negative: from the end). "." or "$" alone is
 * obj itself. Examples: ".status.phase", ".spec.target.workload.kind", ".spec.list[0].x",
 * ".metadata.labels['kubernetes.io/hostname']". Wildcards, filters, slices and recursive
 * descent are not supported (NULL).
 */
const cJSON *table_jsonpath(const cJSON *obj, const char *path);

/*
 * Builds the Table for objs[0..n) (decoded objects of kind k, none NULL; k NULL = unknown kind):
 *
 *  - Pod (core v1): the pod printer's columns Name, Ready, Status, Restarts, Age and, priority
 *    1, IP, Node, Nominated Node, Readiness Gates, with the printer's status logic (phase or
 *    status.reason; SchedulingGated from a PodScheduled condition with that reason; init
 *    containers "Init:x/y", "Init:<reason>", "Init:ExitCode:n"; container waiting/terminated
 *    reasons; Completed-but-running back to Running/NotReady; "Terminating" when
 *    deletionTimestamp is set on a non-terminal pod, "Unknown" for NodeLost), restarts summed
 *    ("3 (5m ago)" when a last termination time is known), and rows[].conditions "Completed"
 *    for Succeeded and Failed pods.
 *  - Node (core v1): Name, Status ("Ready"/"NotReady"/"Unknown" + ",SchedulingDisabled"),
 *    Roles (node-role.kubernetes.io/<role> and kubernetes.io/role labels, sorted, "<none>"),
 *    Age, Version (status.nodeInfo.kubeletVersion) and, priority 1, Internal-IP, External-IP,
 *    OS-Image, Kernel-Version, Container-Runtime.
 *  - APIService (apiregistration.k8s.io v1): kube-aggregator's Name, Service ("<namespace>/
 *    <name>" or "Local"), Available (the Available condition's status, "False (<reason>)"
 *    when not True and a reason is given, "Unknown" without the condition), Age.
 *  - Secret, Service, Endpoints, PriorityClass, ConfigMap (Data: the number of data and
 *    binaryData keys), Namespace (Status: the phase), Lease (Holder), Event (Last Seen, Type,
 *    Reason, Object, Message and, priority 1, Subobject, Source, First Seen, Count, Name, with
 *    printEvent's fallbacks between lastTimestamp, firstTimestamp, eventTime and series): the
 *    printers.go columns, rendered Wide as kube-apiserver renders them.
 *  - the workload kinds (apps/v1, batch/v1, PodDisruptionBudget, EndpointSlice,
 *    events.k8s.io Event): table_workloads.h.
 *  - a kind with printer columns (k->columns): as apiextensions' tableconvertor, Name and then
 *    every column in order. A "date" column renders the age of its timestamp ("<unknown>" for
 *    an empty string, "<invalid>" when it does not parse); a "string" column renders strings as
 *    they are, numbers and booleans as text and objects/arrays as compact JSON; "integer",
 *    "number" and "boolean" columns render a JSON value of that type; a missing value, a null
 *    or a value of another type renders as null.
 *  - a CRD kind without columns: Name + Age (type "date", .metadata.creationTimestamp), the
 *    column apiextensions serves when a CRD declares none.
 *  - any other kind (k NULL or no columns): Name + Age, like the built-in printers.
 *
 * Every columnDefinition carries name, type, format, description and priority. metadata holds
 * rv (resourceVersion) and cont (continue) when non-NULL and non-empty. now is the current Unix
 * time in seconds (a parameter so tests are deterministic). Each row is {"cells": [...]} plus
 * "object" as inc says. A missing field renders as the printers render an empty one.
 *
 * Returns a new tree the caller frees with cJSON_Delete(). Never fails: inputs are stored,
 * size-bounded objects, so allocation failure aborts (x* allocation, as api_status_*() do).
 */
cJSON *table_build(const struct api_kind *k, const cJSON *const *objs, size_t n, const char *rv,
                   const char *cont, int64_t now, enum table_include inc);

/*
 * The default table of registry/rest/table.go, which kube-apiserver serves for kinds without a
 * printer (CustomResourceDefinitions, hence `kubectl get crd` shows NAME and CREATED AT): Name
 * and "Created At" (type date), the creationTimestamp as RFC 3339 text in UTC.
 */
cJSON *table_build_default(const cJSON *const *objs, size_t n, const char *rv, const char *cont,
                           int64_t now, enum table_include inc);

/* One of a CRD version's additionalPrinterColumns (apiextensions v1
 * CustomResourceColumnDefinition): format, desc may be NULL or empty. */
struct table_crd_column {
    const char *name;
    const char *type; /* string, integer, number, boolean, date */
    const char *format;
    const char *desc;
    const char *json_path;
    int priority; /* 0 everywhere, > 0 only with kubectl -o wide */
};

/*
 * The Table of a custom resource version with the given printer columns, as apiextensions'
 * tableconvertor builds it: Name, then every column (with its type, format, description or
 * "Custom resource definition column (in JSONPath format): <path>", and priority), cells as
 * table_build() describes for printer columns. ncols 0 = the default Age column apiextensions
 * serves when a CRD declares none. Other parameters and the result as table_build().
 */
cJSON *table_build_crd(const struct table_crd_column *cols, size_t ncols, const cJSON *const *objs,
                       size_t n, const char *rv, const char *cont, int64_t now,
                       enum table_include inc);

#endif
