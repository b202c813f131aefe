/*
 * Table rendering for `kubectl get` (see table.h). Mirrors kube-apiserver so that kubectl shows
 * the same columns against koord as against a real cluster: printPod/printNode of
 * pkg/printers/internalversion/printers.go, apiextensions-apiserver's
 * registry/customresource/tableconvertor (with the default Age column of
 * apiextensions helpers' serveDefaultColumnsIfEmpty) and apimachinery's
 * pkg/util/duration.HumanDuration.
 *
 * Allocation: the inputs are objects already stored (size-bounded at admission), so building
 * aborts on OOM like the x* allocators (CHECK on every cJSON constructor) instead of returning
 * -ENOMEM through every cell.
 */
#include "apiserver/table.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/rfc3339.h"
#include "apiserver/table_workloads.h"
#include "base/base.h"
#include "base/strbuf.h"

/* metav1.ObjectMeta{}.SwaggerDoc()["name"] and ["creationTimestamp"]. */
#define DESC_NAME                                                                                  \
    "Name must be unique within a namespace. Is required when creating resources, although "       \
    "some resources may allow a client to request the generation of an appropriate name "          \
    "automatically. Name is primarily intended for creation idempotence and configuration "        \
    "definition. Cannot be updated. More info: "                                                   \
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
#define DESC_AGE                                                                                   \
    "CreationTimestamp is a timestamp representing the server time when this object was "          \
    "created. It is not guaranteed to be set in happens-before order across separate "             \
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "     \
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "                      \
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"                            \
    "api-conventions.md#metadata"

struct column {
    const char *name;
    const char *type;
    const char *format;
    const char *desc;
    int priority;
};

/* podColumnDefinitions (printers.go). */
static const struct column pod_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
    {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
    {"Restarts", "string", "",
     "The number of times the containers in this pod have been restarted and when the last "
     "container in this pod has restarted.",
     0},
    {"Age", "string", "", DESC_AGE, 0},
    {"IP", "string", "", "IP address allocated to the pod. Routable at least within the cluster.",
     1},
    {"Node", "string", "", "The name of the node this pod is scheduled onto.", 1},
    {"Nominated Node", "string", "",
     "The node the scheduler nominated for this pod when it preempted other pods.", 1},
    {"Readiness Gates", "string", "",
     "Readiness gates of the pod: how many of their conditions are true.", 1},
};

/* nodeColumnDefinitions (printers.go). */
static const struct column node_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Status", "string", "", "The status of the node", 0},
    {"Roles", "string", "", "The roles of the node", 0},
    {"Age", "string", "", DESC_AGE, 0},
    {"Version", "string", "", "Kubelet Version reported by the node.", 0},
    {"Internal-IP", "string", "", "List of addresses reachable to the node.", 1},
    {"External-IP", "string", "", "List of addresses reachable to the node.", 1},
    {"OS-Image", "string", "", "OS Image reported by the node from /etc/os-release.", 1},
    {"Kernel-Version", "string", "", "Kernel Version reported by the node.", 1},
    {"Container-Runtime", "string", "", "ContainerRuntime Version reported by the node.", 1},
};

/* secretColumnDefinitions, serviceColumnDefinitions, endpointColumnDefinitions,
 * priorityClassColumnDefinitions (printers.go). */
static const struct column secret_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Type", "string", "", "Used to facilitate programmatic handling of secret data.", 0},
    {"Data", "string", "", "The number of entries in the secret's data.", 0},
    {"Age", "string", "", DESC_AGE, 0},
};

static const struct column service_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Type", "string", "", "Type determines how the Service is exposed.", 0},
    {"Cluster-IP", "string", "", "The IP address of the service, usually assigned randomly.", 0},
    {"External-IP", "string", "", "List of IP addresses for which nodes also accept traffic.", 0},
    {"Port(s)", "string", "", "The list of ports that are exposed by this service.", 0},
    {"Age", "string", "", DESC_AGE, 0},
    {"Selector", "string", "",
     "Route service traffic to pods with label keys and values "
     "matching this selector.",
     1},
};

static const struct column endpoints_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Endpoints", "string", "", "Endpoints of the service: IP address and port.", 0},
    {"Age", "string", "", DESC_AGE, 0},
};

static const struct column priority_class_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Value", "integer", "", "The integer value of this priority class.", 0},
    {"Global-Default", "boolean", "",
     "Whether this priority class is the default for pods without a priorityClassName.", 0},
    {"Age", "string", "", DESC_AGE, 0},
    {"PreemptionPolicy", "string", "", "The policy for preempting pods with lower priority.", 0},
};

/* kube-aggregator's APIService table (pkg/registry/apiservice/etcd/etcd.go ConvertToTable). */
static const struct column apiservice_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Service", "string", "", "The reference to the service that hosts the API endpoint.", 0},
    {"Available", "string", "", "Whether this service is available.", 0},
    {"Age", "string", "", DESC_AGE, 0},
};

/* kube's webhook configuration tables (pkg/printers/internalversion: NAME, WEBHOOKS, AGE). */
static const struct column webhook_config_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Webhooks", "integer", "", "Webhooks indicates the number of webhooks in the configuration.",
     0},
    {"Age", "string", "", DESC_AGE, 0},
};

/* configMapColumnDefinitions, namespaceColumnDefinitions, leaseColumnDefinitions,
 * eventColumnDefinitions (printers.go), the descriptions their SwaggerDocs give. */
static const struct column configmap_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Data", "string", "",
     "Data contains the configuration data. Each key must consist of alphanumeric characters, "
     "'-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The "
     "keys stored in Data must not overlap with the keys in the BinaryData field, this is "
     "enforced during validation process.",
     0},
    {"Age", "string", "", DESC_AGE, 0},
};

static const struct column namespace_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Status", "string", "", "The status of the namespace", 0},
    {"Age", "string", "", DESC_AGE, 0},
};

static const struct column lease_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Holder", "string", "",
     "holderIdentity contains the identity of the holder of a current lease. If Coordinated "
     "Leader Election is used, the holder identity must be equal to the elected "
     "LeaseCandidate.metadata.name field.",
     0},
    {"Age", "string", "", DESC_AGE, 0},
};

/* The default table of registry/rest/table.go (what kube serves for kinds without a printer,
 * CustomResourceDefinitions among them): Name and the creation time as RFC 3339 text. */
static const struct column default_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Created At", "date", "", DESC_AGE, 0},
};

/* roleColumns, roleBindingColumns and serviceAccountColumns (printers.go). */
static const struct column role_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Created At", "date", "", DESC_AGE, 0},
};

static const struct column role_binding_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Role", "string", "", "Role this binding refers to.", 0},
    {"Age", "string", "", DESC_AGE, 0},
    {"Users", "string", "", "Users in the roleBinding.", 1},
    {"Groups", "string", "", "Groups in the roleBinding.", 1},
    {"ServiceAccounts", "string", "", "ServiceAccounts in the roleBinding.", 1},
};

static const struct column service_account_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Secrets", "string", "", "Secrets is a list of the secrets used by this service account.", 0},
    {"Age", "string", "", DESC_AGE, 0},
};

/* Name + Age of the built-in printers for kinds without a printer of their own. */
static const struct column generic_columns[] = {
    {"Name", "string", "name", DESC_NAME, 0},
    {"Age", "string", "", DESC_AGE, 0},
};

/* What apiextensions serves for a CRD version without additionalPrinterColumns. */
static const struct table_crd_column crd_default_column = {
    "Age", "date", "", DESC_AGE, ".metadata.creationTimestamp", 0,
};

enum printer {
    PRINT_GENERIC,
    PRINT_POD,
    PRINT_NODE,
    PRINT_SECRET,
    PRINT_SERVICE,
    PRINT_ENDPOINTS,
    PRINT_PRIORITY_CLASS,
    PRINT_APISERVICE,
    PRINT_WEBHOOK_CONFIG,
    PRINT_CONFIGMAP,
    PRINT_NAMESPACE,
    PRINT_LEASE,
    PRINT_DEFAULT,
    PRINT_WORKLOAD, /* table_workloads.h */
    PRINT_ROLE,
    PRINT_ROLE_BINDING,
    PRINT_SERVICE_ACCOUNT,
    PRINT_CRD,
};

/* The printer and its columns of each built-in kind with its own columns. */
static const struct {
    const char *group, *kind;
    enum printer printer;
    const struct column *columns;
    size_t ncolumns;
} printers[] = {
    {"", "Pod", PRINT_POD, pod_columns, ARRAY_SIZE(pod_columns)},
    {"", "Node", PRINT_NODE, node_columns, ARRAY_SIZE(node_columns)},
    {"", "Secret", PRINT_SECRET, secret_columns, ARRAY_SIZE(secret_columns)},
    {"", "Service", PRINT_SERVICE, service_columns, ARRAY_SIZE(service_columns)},
    {"", "Endpoints", PRINT_ENDPOINTS, endpoints_columns, ARRAY_SIZE(endpoints_columns)},
    {"scheduling.k8s.io", "PriorityClass", PRINT_PRIORITY_CLASS, priority_class_columns,
     ARRAY_SIZE(priority_class_columns)},
    {"apiregistration.k8s.io", "APIService", PRINT_APISERVICE, apiservice_columns,
     ARRAY_SIZE(apiservice_columns)},
    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration", PRINT_WEBHOOK_CONFIG,
     webhook_config_columns, ARRAY_SIZE(webhook_config_columns)},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", PRINT_WEBHOOK_CONFIG,
     webhook_config_columns, ARRAY_SIZE(webhook_config_columns)},
    {"", "ConfigMap", PRINT_CONFIGMAP, configmap_columns, ARRAY_SIZE(configmap_columns)},
    {"", "Namespace", PRINT_NAMESPACE, namespace_columns, ARRAY_SIZE(namespace_columns)},
    {"coordination.k8s.io", "Lease", PRINT_LEASE, lease_columns, ARRAY_SIZE(lease_columns)},
    {"apiextensions.k8s.io", "CustomResourceDefinition", PRINT_DEFAULT, default_columns,
     ARRAY_SIZE(default_columns)},
    {"rbac.authorization.k8s.io", "Role", PRINT_ROLE, role_columns, ARRAY_SIZE(role_columns)},
    {"rbac.authorization.k8s.io", "ClusterRole", PRINT_ROLE, role_columns,
     ARRAY_SIZE(role_columns)},
    {"rbac.authorization.k8s.io", "RoleBinding", PRINT_ROLE_BINDING, role_binding_columns,
     ARRAY_SIZE(role_binding_columns)},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", PRINT_ROLE_BINDING, role_binding_columns,
     ARRAY_SIZE(role_binding_columns)},
    {"", "ServiceAccount", PRINT_SERVICE_ACCOUNT, service_account_columns,
     ARRAY_SIZE(service_account_columns)},
};

static cJSON *must(cJSON *v)
{
    CHECK(v);
    return v;
}

static void add(cJSON *o, const char *key, cJSON *v)
{
    CHECK(v);
    CHECK(cJSON_AddItemToObject(o, key, v));
}

static void add_str(cJSON *o, const char *key, const char *v)
{
    add(o, key, cJSON_CreateString(v));
}

static void push(cJSON *a, cJSON *v)
{
    CHECK(v);
    CHECK(cJSON_AddItemToArray(a, v));
}

static void push_str(cJSON *a, const char *s)
{
    push(a, cJSON_CreateString(s));
}

/* NULL-safe member lookup. */
static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/* The string member key of o, or NULL when absent or not a string. */
static const char *get_str(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *str_or(const char *s, const char *dflt)
{
    return s && *s ? s : dflt;
}

static bool get_true(const cJSON *o, const char *key)
{
    return cJSON_IsTrue(get(o, key));
}

/* A Go pointer field: present and not null. */
static bool present(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    return v && !cJSON_IsNull(v);
}

/* An int32 member (restartCount, exitCode, signal), 0 when absent or not a number. */
static long long get_int(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);

    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return 0;
    if (v->valuedouble >= 9.2e18)
        return INT64_MAX;
    if (v->valuedouble <= -9.2e18)
        return INT64_MIN;
    return (long long)v->valuedouble;
}

size_t table_human_duration(int64_t seconds, char buf[TABLE_DURATION_MAX])
{
    int64_t minutes, hours, days;
    int n;

    if (seconds < -1)
        n = snprintf(buf, TABLE_DURATION_MAX, "<invalid>");
    else if (seconds < 0)
        n = snprintf(buf, TABLE_DURATION_MAX, "0s");
    else if (seconds < 120)
        n = snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "s", seconds);
    else if ((minutes = seconds / 60) < 10)
        n = seconds % 60 ? snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "m%" PRId64 "s", minutes,
                                    seconds % 60)
                         : snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "m", minutes);
    else if (minutes < 180)
        n = snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "m", minutes);
    else if ((hours = minutes / 60) < 8)
        n = minutes % 60
                ? snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "h%" PRId64 "m", hours, minutes % 60)
                : snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "h", hours);
    else if (hours < 48)
        n = snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "h", hours);
    else if ((days = hours / 24) < 8)
        n = hours % 24
                ? snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "d%" PRId64 "h", days, hours % 24)
                : snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "d", days);
    else if (hours < 17520) /* 2 years of 365 days */
        n = snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "d", days);
    else if (hours < 70080) /* 8 years */
        n = days % 365 ? snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "y%" PRId64 "d", days / 365,
                                  days % 365)
                       : snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "y", days / 365);
    else
        n = snprintf(buf, TABLE_DURATION_MAX, "%" PRId64 "y", days / 365);
    CHECK(n > 0 && n < TABLE_DURATION_MAX);
    return (size_t)n;
}

/*
 * HumanDuration(time.Since(t)) for t = sec + nsec, at now (whole seconds). int(d.Seconds())
 * truncates toward zero, and Go's Duration saturates at about +-292 years; both are mirrored so
 * the text is the same as kube-apiserver's.
 */
static void human_since(int64_t now, int64_t sec, int32_t nsec, char buf[TABLE_DURATION_MAX])
{
    const int64_t max_s = INT64_MAX / 1000000000; /* 9223372036 */
    int64_t s;

    if (__builtin_sub_overflow(now, sec, &s))
        s = now > sec ? INT64_MAX : INT64_MIN;
    if (nsec > 0 && s > 0)
        s--;
    if (s > max_s)
        s = max_s;
    else if (s < -max_s)
        s = -max_s;
    (void)table_human_duration(s, buf);
}

/* translateTimestampSince: "<unknown>" for a zero (absent, empty, unparsable) time. */
void table_age(const cJSON *ts, int64_t now, char buf[TABLE_DURATION_MAX])
{
    int64_t sec;
    int32_t nsec;

    if (!cJSON_IsString(ts) || rfc3339_parse(ts->valuestring, &sec, &nsec) < 0) {
        (void)snprintf(buf, TABLE_DURATION_MAX, "<unknown>");
        return;
    }
    human_since(now, sec, nsec, buf);
}

/* --- JSONPath ---------------------------------------------------------------------------- */

/* Whether key equals the path segment seg[0..len), in which a backslash escapes a byte. */
static bool key_eq(const char *key, const char *seg, size_t len, bool escapes)
{
    for (size_t i = 0; i < len; i++, key++) {
        if (escapes && seg[i] == '\\')
            i++;
        if (*key != seg[i])
            return false;
    }
    return *key == '\0';
}

static const cJSON *member(const cJSON *o, const char *seg, size_t len, bool escapes)
{
    const cJSON *c;

    if (!cJSON_IsObject(o))
        return NULL;
    cJSON_ArrayForEach(c, o)
    {
        if (c->string && key_eq(c->string, seg, len, escapes))
            return c;
    }
    return NULL;
}

static const cJSON *element(const cJSON *a, const char *digits, size_t len, bool neg)
{
    long long idx = 0;
    int size;

    if (!cJSON_IsArray(a) || len == 0 || len > 9)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (digits[i] < '0' || digits[i] > '9')
            return NULL;
        idx = idx * 10 + (digits[i] - '0');
    }
    size = cJSON_GetArraySize(a);
    if (neg)
        idx = size - idx;
    if (idx < 0 || idx >= size)
        return NULL;
    return cJSON_GetArrayItem(a, (int)idx);
}

const cJSON *table_jsonpath(const cJSON *obj, const char *path)
{
    const cJSON *cur = obj;
    const char *p = path;

    if (!obj || !path)
        return NULL;
    if (*p == '$')
        p++;
    if (!strcmp(p, ".") || (p != path && *p == '\0'))
        return obj;
    if (*p == '\0')
        return NULL;
    while (*p && cur) {
        if (*p == '.') {
            const char *seg = ++p;

            while (*p && *p != '.' && *p != '[') {
                if (*p == '\\' && !*++p)
                    return NULL;
                p++;
            }
            if (p == seg)
                return NULL; /* "..", trailing "." or ".[" */
            cur = member(cur, seg, (size_t)(p - seg), true);
        } else if (*p == '[') {
            p++;
            if (*p == '\'' || *p == '"') {
                const char quote = *p++;
                const char *seg = p;
                const char *end = strchr(seg, quote);

                if (!end || end[1] != ']')
                    return NULL;
                cur = member(cur, seg, (size_t)(end - seg), false);
                p = end + 2;
            } else {
                const bool neg = *p == '-';
                const char *seg = neg ? p + 1 : p;
                const char *end = strchr(seg, ']');

                if (!end)
                    return NULL;
                cur = element(cur, seg, (size_t)(end - seg), neg);
                p = end + 1;
            }
        } else {
            return NULL;
        }
    }
    return *p ? NULL : cur;
}

/* --- Cells ------------------------------------------------------------------------------- */

static void add_columns(cJSON *defs, const struct column *cols, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cJSON *c = must(cJSON_CreateObject());

        push(defs, c);
        add_str(c, "name", cols[i].name);
        add_str(c, "type", cols[i].type);
        add_str(c, "format", cols[i].format);
        add_str(c, "description", cols[i].desc);
        add(c, "priority", cJSON_CreateNumber(cols[i].priority));
    }
}

static void add_crd_columns(cJSON *defs, const struct table_crd_column *cols, size_t n)
{
    struct strbuf desc = STRBUF_INIT;

    add_columns(defs, generic_columns, 1);
    for (const struct table_crd_column *c = cols; c < cols + n; c++) {
        struct column col = {c->name, c->type, c->format ? c->format : "", c->desc, c->priority};

        if (!col.desc || !*col.desc) {
            strbuf_reset(&desc);
            strbuf_addf(&desc, "Custom resource definition column (in JSONPath format): %s",
                        c->json_path);
            col.desc = desc.buf;
        }
        add_columns(defs, &col, 1);
    }
    strbuf_release(&desc);
}

/* Go's fmt.Fprint of a decoded JSON number: int64 when integral, else the shortest %g. */
static void number_text(double d, char buf[40])
{
    if (d == floor(d) && fabs(d) < 9.2e18) {
        (void)snprintf(buf, 40, "%lld", (long long)d);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        (void)snprintf(buf, 40, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

/* One additionalPrinterColumns cell: tableconvertor's string branch and cellForJSONValue. */
static cJSON *crd_cell(const struct table_crd_column *c, const cJSON *obj, int64_t now)
{
    const cJSON *v = table_jsonpath(obj, c->json_path);
    char buf[40];

    if (!v || cJSON_IsNull(v))
        return must(cJSON_CreateNull());
    if (!strcmp(c->type, "string")) {
        if (cJSON_IsString(v))
            return must(cJSON_CreateString(v->valuestring));
        if (cJSON_IsNumber(v)) {
            number_text(v->valuedouble, buf);
            return must(cJSON_CreateString(buf));
        }
        if (cJSON_IsBool(v))
            return must(cJSON_CreateString(cJSON_IsTrue(v) ? "true" : "false"));
        if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
            char *s = cJSON_PrintUnformatted(v);
            cJSON *r;

            CHECK(s);
            r = must(cJSON_CreateString(s));
            cJSON_free(s);
            return r;
        }
    } else if (!strcmp(c->type, "integer")) {
        if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && fabs(v->valuedouble) < 9.2e18)
            return must(cJSON_CreateNumber((double)(long long)v->valuedouble));
    } else if (!strcmp(c->type, "number")) {
        if (cJSON_IsNumber(v))
            return must(cJSON_CreateNumber(v->valuedouble));
    } else if (!strcmp(c->type, "boolean")) {
        if (cJSON_IsBool(v))
            return must(cJSON_CreateBool(cJSON_IsTrue(v)));
    } else if (!strcmp(c->type, "date")) {
        if (cJSON_IsString(v)) {
            int64_t sec;
            int32_t nsec;

            /* metav1.Time.UnmarshalQueryParameter: "" and "null" are the zero time. */
            if (!*v->valuestring || !strcmp(v->valuestring, "null"))
                return must(cJSON_CreateString("<unknown>"));
            if (rfc3339_parse(v->valuestring, &sec, &nsec) < 0)
                return must(cJSON_CreateString("<invalid>"));
            human_since(now, sec, nsec, buf);
            return must(cJSON_CreateString(buf));
        }
    }
    return must(cJSON_CreateNull());
}

static const cJSON *container_spec(const cJSON *list, const char *name)
{
    const cJSON *c;

    if (!name)
        return NULL;
    cJSON_ArrayForEach(c, list)
    {
        const char *n = get_str(c, "name");
        if (n && !strcmp(n, name))
            return c;
    }
    return NULL;
}

/* podutil.IsRestartableInitContainer: a sidecar (restartPolicy Always). */
static bool is_restartable(const cJSON *init)
{
    const char *p = get_str(init, "restartPolicy");
    return p && !strcmp(p, "Always");
}

/* Whether a condition of type has status True. */
static bool condition_true(const cJSON *conds, const char *type)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, conds)
    {
        const char *t = get_str(c, "type"), *s = get_str(c, "status");
        if (t && !strcmp(t, type) && s && !strcmp(s, "True"))
            return true;
    }
    return false;
}

/* A metav1.Time that may be absent: the latest termination seen so far. */
struct last_time {
    bool set;
    int64_t sec;
    int32_t nsec;
};

static void note_termination(struct last_time *lt, const cJSON *status)
{
    const cJSON *term = get(get(status, "lastState"), "terminated");
    int64_t sec;
    int32_t nsec;

    if (!cJSON_IsObject(term) || !cJSON_IsString(get(term, "finishedAt")) ||
        rfc3339_parse(get_str(term, "finishedAt"), &sec, &nsec) < 0)
        return;
    if (!lt->set || sec > lt->sec || (sec == lt->sec && nsec > lt->nsec))
        *lt = (struct last_time){true, sec, nsec};
}

/* "Init:Signal:9", "Init:ExitCode:1" or "Init:<reason>" (prefix "" for app containers). */
static void terminated_reason(struct strbuf *reason, const char *prefix, const cJSON *term)
{
    const char *r = get_str(term, "reason");

    strbuf_reset(reason);
    if (r && *r)
        strbuf_addf(reason, "%s%s", prefix, r);
    else if (get_int(term, "signal") != 0)
        strbuf_addf(reason, "%sSignal:%lld", prefix, get_int(term, "signal"));
    else
        strbuf_addf(reason, "%sExitCode:%lld", prefix, get_int(term, "exitCode"));
}

static void set_reason(struct strbuf *reason, const char *s)
{
    strbuf_reset(reason);
    strbuf_addstr(reason, s);
}

static void add_completed_condition(cJSON *row, const char *reason, const char *message)
{
    cJSON *conds = must(cJSON_CreateArray()), *c = must(cJSON_CreateObject());

    add(row, "conditions", conds);
    push(conds, c);
    add_str(c, "type", "Completed");
    add_str(c, "status", "True");
    add_str(c, "reason", reason);
    add_str(c, "message", message);
}

/* printPod (printers.go), with options.Wide as kube-apiserver's TableConvertor sets it. */
static void pod_cells(const cJSON *pod, int64_t now, cJSON *row, cJSON *cells)
{
    const cJSON *meta = get(pod, "metadata"), *spec = get(pod, "spec"), *st = get(pod, "status");
    const cJSON *inits = get(spec, "initContainers"), *conds = get(st, "conditions");
    const cJSON *c, *gates;
    const char *phase = str_or(get_str(st, "phase"), ""), *st_reason = get_str(st, "reason");
    struct strbuf reason = STRBUF_INIT, sb = STRBUF_INIT;
    struct last_time last = {0}, last_sidecar = {0};
    long long restarts = 0, sidecar_restarts = 0;
    int total = cJSON_GetArraySize(get(spec, "containers")), ready = 0, i = 0;
    bool initializing = false;
    char age[TABLE_DURATION_MAX];
    const char *ip;

    strbuf_addstr(&reason, st_reason && *st_reason ? st_reason : phase);
    cJSON_ArrayForEach(c, conds)
    {
        const char *t = get_str(c, "type"), *r = get_str(c, "reason");
        if (t && !strcmp(t, "PodScheduled") && r && !strcmp(r, "SchedulingGated"))
            set_reason(&reason, "SchedulingGated");
    }
    if (!strcmp(phase, "Succeeded"))
        add_completed_condition(row, "Succeeded", "The pod has completed successfully.");
    else if (!strcmp(phase, "Failed"))
        add_completed_condition(row, "Failed", "The pod failed.");

    cJSON_ArrayForEach(c, inits)
    {
        if (is_restartable(c))
            total++;
    }

    cJSON_ArrayForEach(c, get(st, "initContainerStatuses"))
    {
        const cJSON *state = get(c, "state"), *term = get(state, "terminated");
        const cJSON *wait = get(state, "waiting");
        const char *wr = get_str(wait, "reason");
        bool sidecar = is_restartable(container_spec(inits, get_str(c, "name")));

        restarts += get_int(c, "restartCount");
        note_termination(&last, c);
        if (sidecar) {
            sidecar_restarts += get_int(c, "restartCount");
            note_termination(&last_sidecar, c);
        }
        if (cJSON_IsObject(term) && get_int(term, "exitCode") == 0) {
            i++;
            continue;
        }
        if (sidecar && get_true(c, "started")) {
            if (get_true(c, "ready"))
                ready++;
            i++;
            continue;
        }
        if (cJSON_IsObject(term))
            terminated_reason(&reason, "Init:", term);
        else if (cJSON_IsObject(wait) && wr && *wr && strcmp(wr, "PodInitializing") != 0) {
            strbuf_reset(&reason);
            strbuf_addf(&reason, "Init:%s", wr);
        } else {
            strbuf_reset(&reason);
            strbuf_addf(&reason, "Init:%d/%d", i, cJSON_GetArraySize(inits));
        }
        initializing = true;
        break;
    }

    if (!initializing || condition_true(conds, "Initialized")) {
        const cJSON *list = get(st, "containerStatuses");
        bool has_running = false;

        restarts = sidecar_restarts;
        last = last_sidecar;
        /* Backwards, so the first container's state is the one that shows. */
        for (int j = cJSON_GetArraySize(list) - 1; j >= 0; j--) {
            const cJSON *cs = cJSON_GetArrayItem(list, j), *state = get(cs, "state");
            const cJSON *wait = get(state, "waiting"), *term = get(state, "terminated");
            const char *wr = get_str(wait, "reason"), *tr = get_str(term, "reason");

            restarts += get_int(cs, "restartCount");
            note_termination(&last, cs);
            if (cJSON_IsObject(wait) && wr && *wr)
                set_reason(&reason, wr);
            else if (cJSON_IsObject(term) && tr && *tr)
                set_reason(&reason, tr);
            else if (cJSON_IsObject(term))
                terminated_reason(&reason, "", term);
            else if (get_true(cs, "ready") && cJSON_IsObject(get(state, "running"))) {
                has_running = true;
                ready++;
            }
        }
        if (!strcmp(reason.buf, "Completed") && has_running)
            set_reason(&reason, condition_true(conds, "Ready") ? "Running" : "NotReady");
    }

    if (present(meta, "deletionTimestamp") && st_reason && !strcmp(st_reason, "NodeLost"))
        set_reason(&reason, "Unknown");
    else if (present(meta, "deletionTimestamp") && strcmp(phase, "Succeeded") != 0 &&
             strcmp(phase, "Failed") != 0)
        set_reason(&reason, "Terminating");

    push_str(cells, str_or(get_str(meta, "name"), ""));
    strbuf_addf(&sb, "%d/%d", ready, total);
    push_str(cells, sb.buf);
    push_str(cells, reason.buf);
    strbuf_reset(&sb);
    strbuf_addf(&sb, "%lld", restarts);
    if (restarts != 0 && last.set) {
        human_since(now, last.sec, last.nsec, age);
        strbuf_addf(&sb, " (%s ago)", age);
    }
    push_str(cells, sb.buf);
    table_age(get(meta, "creationTimestamp"), now, age);
    push_str(cells, age);

    /* Wide columns. The v1 -> internal conversion fills podIPs from podIP when it is empty. */
    ip = get_str(cJSON_GetArrayItem(get(st, "podIPs"), 0), "ip");
    if (!cJSON_IsArray(get(st, "podIPs")) || cJSON_GetArraySize(get(st, "podIPs")) == 0)
        ip = get_str(st, "podIP");
    push_str(cells, str_or(ip, "<none>"));
    push_str(cells, str_or(get_str(spec, "nodeName"), "<none>"));
    push_str(cells, str_or(get_str(st, "nominatedNodeName"), "<none>"));
    gates = get(spec, "readinessGates");
    if (cJSON_GetArraySize(gates) > 0) {
        int true_conds = 0;

        cJSON_ArrayForEach(c, gates)
        {
            const char *want = get_str(c, "conditionType");
            const cJSON *cond;

            cJSON_ArrayForEach(cond, conds)
            {
                const char *t = get_str(cond, "type"), *s = get_str(cond, "status");
                if (!want || !t || strcmp(t, want) != 0)
                    continue;
                if (s && !strcmp(s, "True"))
                    true_conds++;
                break;
            }
        }
        strbuf_reset(&sb);
        strbuf_addf(&sb, "%d/%d", true_conds, cJSON_GetArraySize(gates));
        push_str(cells, sb.buf);
    } else {
        push_str(cells, "<none>");
    }
    strbuf_release(&sb);
    strbuf_release(&reason);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* findNodeRoles: sorted, deduplicated, joined with ","; "<none>" when there is none. */
static void node_roles(const cJSON *labels, struct strbuf *out)
{
    const char *prefix = "node-role.kubernetes.io/";
    size_t plen = strlen(prefix), n = 0;
    int size = cJSON_GetArraySize(labels);
    const char **roles;
    const cJSON *l;

    if (!cJSON_IsObject(labels) || size <= 0) {
        strbuf_addstr(out, "<none>");
        return;
    }
    roles = xcalloc((size_t)size, sizeof(*roles));
    cJSON_ArrayForEach(l, labels)
    {
        if (!l->string)
            continue;
        if (!strncmp(l->string, prefix, plen) && l->string[plen])
            roles[n++] = l->string + plen;
        else if (!strcmp(l->string, "kubernetes.io/role") && cJSON_IsString(l) && *l->valuestring)
            roles[n++] = l->valuestring;
    }
    qsort(roles, n, sizeof(*roles), cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && !strcmp(roles[i], roles[i - 1]))
            continue;
        if (out->len)
            strbuf_addch(out, ',');
        strbuf_addstr(out, roles[i]);
    }
    if (!out->len)
        strbuf_addstr(out, "<none>");
    free(roles);
}

static const char *node_address(const cJSON *st, const char *type)
{
    const cJSON *a;

    cJSON_ArrayForEach(a, get(st, "addresses"))
    {
        const char *t = get_str(a, "type");
        if (t && !strcmp(t, type))
            return str_or(get_str(a, "address"), "");
    }
    return "<none>";
}

/* printNode (printers.go), wide. */
static void node_cells(const cJSON *node, int64_t now, cJSON *cells)
{
    const cJSON *meta = get(node, "metadata"), *st = get(node, "status");
    const cJSON *info = get(st, "nodeInfo"), *c;
    const char *ready = NULL;
    struct strbuf sb = STRBUF_INIT;
    char age[TABLE_DURATION_MAX];

    /* conditionMap: the last Ready condition wins. */
    cJSON_ArrayForEach(c, get(st, "conditions"))
    {
        const char *t = get_str(c, "type");
        if (t && !strcmp(t, "Ready"))
            ready = str_or(get_str(c, "status"), "");
    }
    strbuf_addstr(&sb, !ready ? "Unknown" : !strcmp(ready, "True") ? "Ready" : "NotReady");
    if (get_true(get(node, "spec"), "unschedulable"))
        strbuf_addstr(&sb, ",SchedulingDisabled");
    push_str(cells, str_or(get_str(meta, "name"), ""));
    push_str(cells, sb.buf);
    strbuf_reset(&sb);
    node_roles(get(meta, "labels"), &sb);
    push_str(cells, sb.buf);
    table_age(get(meta, "creationTimestamp"), now, age);
    push_str(cells, age);
    push_str(cells, str_or(get_str(info, "kubeletVersion"), ""));
    push_str(cells, node_address(st, "InternalIP"));
    push_str(cells, node_address(st, "ExternalIP"));
    push_str(cells, str_or(get_str(info, "osImage"), "<unknown>"));
    push_str(cells, str_or(get_str(info, "kernelVersion"), "<unknown>"));
    push_str(cells, str_or(get_str(info, "containerRuntimeVersion"), "<unknown>"));
    strbuf_release(&sb);
}

/* "<none>" when sb is empty (kube's printers write that for empty lists). */
static const char *or_none(const struct strbuf *sb)
{
    return sb->len ? sb->buf : "<none>";
}

static void secret_cells(const cJSON *secret, cJSON *cells)
{
    char n[24];

    push_str(cells, str_or(get_str(secret, "type"), ""));
    (void)snprintf(n, sizeof(n), "%d", cJSON_GetArraySize(get(secret, "data")));
    push_str(cells, n);
}

/* printRoleBinding: "<kind>/<name>" of the role, then the subjects by kind, comma-separated
 * (service accounts as "<namespace>/<name>"). */
static void role_binding_cells(const cJSON *b, const char *age, cJSON *cells, struct strbuf *sb)
{
    static const char *const kinds[] = {"User", "Group", "ServiceAccount"};
    const cJSON *ref = get(b, "roleRef"), *sub;

    strbuf_reset(sb);
    strbuf_addf(sb, "%s/%s", str_or(get_str(ref, "kind"), ""), str_or(get_str(ref, "name"), ""));
    push_str(cells, sb->buf);
    push_str(cells, age);
    for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
        strbuf_reset(sb);
        cJSON_ArrayForEach(sub, get(b, "subjects"))
        {
            if (strcmp(str_or(get_str(sub, "kind"), ""), kinds[k]))
                continue;
            if (sb->len)
                strbuf_addstr(sb, ", ");
            if (k == 2)
                strbuf_addf(sb, "%s/", str_or(get_str(sub, "namespace"), ""));
            strbuf_addstr(sb, str_or(get_str(sub, "name"), ""));
        }
        push_str(cells, sb->buf);
    }
}

/* getServiceExternalIP, makePortString and the sorted selector of printService. */
static void service_cells(const cJSON *svc, cJSON *cells, struct strbuf *sb)
{
    const cJSON *spec = get(svc, "spec"), *c;
    const char *type = str_or(get_str(spec, "type"), "ClusterIP");
    const char **keys = NULL;
    size_t nkeys = 0;

    push_str(cells, type);
    push_str(cells, str_or(get_str(spec, "clusterIP"), "<none>"));
    strbuf_reset(sb);
    if (!strcmp(type, "ExternalName")) {
        strbuf_addstr(sb, str_or(get_str(spec, "externalName"), ""));
    } else {
        cJSON_ArrayForEach(c, get(get(get(svc, "status"), "loadBalancer"), "ingress"))
        {
            const char *ip = str_or(get_str(c, "ip"), get_str(c, "hostname"));
            if (ip)
                strbuf_addf(sb, "%s%s", sb->len ? "," : "", ip);
        }
        cJSON_ArrayForEach(c, get(spec, "externalIPs"))
        {
            if (cJSON_IsString(c))
                strbuf_addf(sb, "%s%s", sb->len ? "," : "", c->valuestring);
        }
        if (!sb->len && !strcmp(type, "LoadBalancer"))
            strbuf_addstr(sb, "<pending>");
    }
    push_str(cells, or_none(sb));
    strbuf_reset(sb);
    cJSON_ArrayForEach(c, get(spec, "ports"))
    {
        long long port = get_int(c, "port"), np = get_int(c, "nodePort");
        strbuf_addf(sb, "%s%lld", sb->len ? "," : "", port);
        if (np)
            strbuf_addf(sb, ":%lld", np);
        strbuf_addf(sb, "/%s", str_or(get_str(c, "protocol"), "TCP"));
    }
    push_str(cells, or_none(sb));
    cJSON_ArrayForEach(c, get(spec, "selector"))
    {
        keys = xrealloc(keys, (nkeys + 1) * sizeof(*keys));
        keys[nkeys++] = c->string;
    }
    if (nkeys)
        qsort(keys, nkeys, sizeof(*keys), cmp_str);
    strbuf_reset(sb);
    for (size_t i = 0; i < nkeys; i++)
        strbuf_addf(sb, "%s%s=%s", i ? "," : "", keys[i],
                    str_or(get_str(get(spec, "selector"), keys[i]), ""));
    free(keys);
}

/* formatEndpoints: "ip:port" for every port of every ready address, at most 3 shown. */
static void endpoints_cells(const cJSON *ep, cJSON *cells, struct strbuf *sb)
{
    const cJSON *subset, *port, *addr;
    int count = 0;

    strbuf_reset(sb);
    cJSON_ArrayForEach(subset, get(ep, "subsets"))
    {
        const cJSON *ports = get(subset, "ports");
        int nports = cJSON_GetArraySize(ports);
        for (int i = 0; i < (nports ? nports : 1); i++) {
            port = cJSON_GetArrayItem(ports, i);
            cJSON_ArrayForEach(addr, get(subset, "addresses"))
            {
                if (count++ >= 3)
                    continue;
                strbuf_addf(sb, "%s%s", sb->len ? "," : "", str_or(get_str(addr, "ip"), ""));
                if (port)
                    strbuf_addf(sb, ":%lld", get_int(port, "port"));
            }
        }
    }
    if (count > 3)
        strbuf_addf(sb, " + %d more...", count - 3);
    push_str(cells, or_none(sb));
}

/* Service "namespace/name" or "Local"; Available "True", "False (Reason)" or "Unknown". */
static void apiservice_cells(const cJSON *as, cJSON *cells, struct strbuf *sb)
{
    const cJSON *svc = get(get(as, "spec"), "service"), *c;
    const char *status = "Unknown", *reason = NULL;

    strbuf_reset(sb);
    if (cJSON_IsObject(svc))
        strbuf_addf(sb, "%s/%s", str_or(get_str(svc, "namespace"), ""),
                    str_or(get_str(svc, "name"), ""));
    else
        strbuf_addstr(sb, "Local");
    push_str(cells, sb->buf);
    cJSON_ArrayForEach(c, get(get(as, "status"), "conditions"))
    {
        if (!get_str(c, "type") || strcmp(get_str(c, "type"), "Available"))
            continue;
        status = str_or(get_str(c, "status"), "");
        reason = get_str(c, "reason");
        break;
    }
    strbuf_reset(sb);
    if (strcmp(status, "True") && reason && *reason)
        strbuf_addf(sb, "%s (%s)", status, reason);
    else
        strbuf_addstr(sb, status);
    push_str(cells, sb->buf);
}

static enum printer printer_of(const struct api_kind *k)
{
    size_t n;

    if (!k)
        return PRINT_GENERIC;
    if (table_workload_columns(k, &n))
        return PRINT_WORKLOAD;
    for (size_t i = 0; i < ARRAY_SIZE(printers); i++)
        if (k->group && !strcmp(k->group, printers[i].group) && !strcmp(k->kind, printers[i].kind))
            return printers[i].printer;
    if ((k->columns && k->columns[0].name) || k->crd)
        return PRINT_CRD;
    return PRINT_GENERIC;
}

/* rows[].object for includeObject=Metadata: meta.AsPartialObjectMetadata. */
static cJSON *partial_metadata(const cJSON *obj)
{
    cJSON *p = must(cJSON_CreateObject());
    const cJSON *meta = get(obj, "metadata");

    add_str(p, "kind", "PartialObjectMetadata");
    add_str(p, "apiVersion", "meta.k8s.io/v1");
    add(p, "metadata", cJSON_IsObject(meta) ? cJSON_Duplicate(meta, true) : cJSON_CreateObject());
    return p;
}

static cJSON *build(enum printer pr, const struct api_kind *k,
                    const struct table_crd_column *crd_cols, size_t ncrd, const cJSON *const *objs,
                    size_t n, const char *rv, const char *cont, int64_t now, enum table_include inc)
{
    struct strbuf sb = STRBUF_INIT;
    cJSON *t = must(cJSON_CreateObject()), *meta, *defs, *rows;

    add_str(t, "kind", "Table");
    add_str(t, "apiVersion", "meta.k8s.io/v1");
    meta = must(cJSON_CreateObject());
    add(t, "metadata", meta);
    if (rv && *rv)
        add_str(meta, "resourceVersion", rv);
    if (cont && *cont)
        add_str(meta, "continue", cont);

    defs = must(cJSON_CreateArray());
    add(t, "columnDefinitions", defs);
    if (pr == PRINT_CRD) {
        if (!ncrd) {
            crd_cols = &crd_default_column;
            ncrd = 1;
        }
        add_crd_columns(defs, crd_cols, ncrd);
    } else if (pr == PRINT_GENERIC) {
        add_columns(defs, generic_columns, ARRAY_SIZE(generic_columns));
    } else if (pr == PRINT_WORKLOAD) {
        size_t nc = 0;
        const struct table_column *wc = table_workload_columns(k, &nc);
        for (size_t i = 0; i < nc; i++) {
            struct column col = {wc[i].name, wc[i].type, wc[i].format, wc[i].desc, wc[i].priority};
            add_columns(defs, &col, 1);
        }
    } else {
        /* Kinds may share a printer (the two webhook configurations): its columns once. */
        for (size_t i = 0; i < ARRAY_SIZE(printers); i++)
            if (printers[i].printer == pr) {
                add_columns(defs, printers[i].columns, printers[i].ncolumns);
                break;
            }
    }

    rows = must(cJSON_CreateArray());
    add(t, "rows", rows);
    for (size_t i = 0; i < n; i++) {
        const cJSON *obj = objs[i];
        cJSON *row = must(cJSON_CreateObject()), *cells = must(cJSON_CreateArray());
        const cJSON *om = get(obj, "metadata");
        char age[TABLE_DURATION_MAX];

        push(rows, row);
        add(row, "cells", cells);
        switch (pr) {
        case PRINT_POD:
            pod_cells(obj, now, row, cells);
            break;
        case PRINT_NODE:
            node_cells(obj, now, cells);
            break;
        case PRINT_CRD:
            push_str(cells, str_or(get_str(get(obj, "metadata"), "name"), ""));
            for (const struct table_crd_column *c = crd_cols; c < crd_cols + ncrd; c++)
                push(cells, crd_cell(c, obj, now));
            break;
        case PRINT_WORKLOAD:
            table_workload_cells(k, obj, now, cells);
            break;
        case PRINT_GENERIC:
            push_str(cells, str_or(get_str(om, "name"), ""));
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            break;
        case PRINT_SECRET:
            push_str(cells, str_or(get_str(om, "name"), ""));
            secret_cells(obj, cells);
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            break;
        case PRINT_SERVICE:
            push_str(cells, str_or(get_str(om, "name"), ""));
            service_cells(obj, cells, &sb);
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            push_str(cells, or_none(&sb));
            break;
        case PRINT_ENDPOINTS:
            push_str(cells, str_or(get_str(om, "name"), ""));
            endpoints_cells(obj, cells, &sb);
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            break;
        case PRINT_APISERVICE:
            push_str(cells, str_or(get_str(om, "name"), ""));
            apiservice_cells(obj, cells, &sb);
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            break;
        case PRINT_WEBHOOK_CONFIG:
            push_str(cells, str_or(get_str(om, "name"), ""));
            push(cells, cJSON_CreateNumber((double)cJSON_GetArraySize(get(obj, "webhooks"))));
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            break;
        case PRINT_CONFIGMAP:
            push_str(cells, str_or(get_str(om, "name"), ""));
            push(cells, cJSON_CreateNumber((double)(cJSON_GetArraySize(get(obj, "data")) +
                                                    cJSON_GetArraySize(get(obj, "binaryData")))));
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            break;
        case PRINT_NAMESPACE:
            push_str(cells, str_or(get_str(om, "name"), ""));
            push_str(cells, str_or(get_str(get(obj, "status"), "phase"), ""));
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            break;
        case PRINT_LEASE:
            push_str(cells, str_or(get_str(om, "name"), ""));
            push_str(cells, str_or(get_str(get(obj, "spec"), "holderIdentity"), ""));
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            break;
        case PRINT_DEFAULT: {
            /* metav1.Time in time.RFC3339, UTC; "" for a zero time as Go formats it */
            int64_t sec;
            int32_t nsec;
            char ts[RFC3339_STR_MAX];
            const cJSON *ct = get(om, "creationTimestamp");

            push_str(cells, str_or(get_str(om, "name"), ""));
            if (cJSON_IsString(ct) && rfc3339_parse(ct->valuestring, &sec, &nsec) == 0) {
                (void)rfc3339_format(sec, ts);
                push_str(cells, ts);
            } else {
                push_str(cells, "0001-01-01T00:00:00Z");
            }
            break;
        }
        case PRINT_ROLE:
            push_str(cells, str_or(get_str(om, "name"), ""));
            push_str(cells, str_or(get_str(om, "creationTimestamp"), ""));
            break;
        case PRINT_ROLE_BINDING:
            push_str(cells, str_or(get_str(om, "name"), ""));
            table_age(get(om, "creationTimestamp"), now, age);
            role_binding_cells(obj, age, cells, &sb);
            break;
        case PRINT_SERVICE_ACCOUNT:
            push_str(cells, str_or(get_str(om, "name"), ""));
            push(cells, cJSON_CreateNumber((double)cJSON_GetArraySize(get(obj, "secrets"))));
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            break;
        case PRINT_PRIORITY_CLASS:
            push_str(cells, str_or(get_str(om, "name"), ""));
            push(cells, cJSON_CreateNumber((double)get_int(obj, "value")));
            push(cells, cJSON_CreateBool(get_true(obj, "globalDefault")));
            table_age(get(om, "creationTimestamp"), now, age);
            push_str(cells, age);
            push_str(cells, str_or(get_str(obj, "preemptionPolicy"), "<none>"));
            break;
        }
        if (inc == TABLE_INCLUDE_METADATA)
            add(row, "object", partial_metadata(obj));
        else if (inc == TABLE_INCLUDE_OBJECT)
            add(row, "object", cJSON_Duplicate(obj, true));
    }
    strbuf_release(&sb);
    return t;
}

cJSON *table_build(const struct api_kind *k, const cJSON *const *objs, size_t n, const char *rv,
                   const char *cont, int64_t now, enum table_include inc)
{
    struct table_crd_column *cols = NULL;
    size_t ncols = 0;
    cJSON *t;

    if (printer_of(k) == PRINT_CRD) {
        /* The static printer columns of a kind koord describes, as its generated CRD has them. */
        for (const struct api_printer_column *c = k->columns; c && c->name; c++)
            ncols++;
        cols = xcalloc(ncols ? ncols : 1, sizeof(*cols));
        for (size_t i = 0; i < ncols; i++)
            cols[i] = (struct table_crd_column){.name = k->columns[i].name,
                                                .type = k->columns[i].type,
                                                .desc = k->columns[i].desc,
                                                .json_path = k->columns[i].json_path};
    }
    t = build(printer_of(k), k, cols, ncols, objs, n, rv, cont, now, inc);
    free(cols);
    return t;
}

cJSON *table_build_crd(const struct table_crd_column *cols, size_t ncols, const cJSON *const *objs,
                       size_t n, const char *rv, const char *cont, int64_t now,
                       enum table_include inc)
{
    static const struct table_crd_column none;

    return build(PRINT_CRD, NULL, ncols ? cols : &none, ncols, objs, n, rv, cont, now, inc);
}

cJSON *table_build_default(const cJSON *const *objs, size_t n, const char *rv, const char *cont,
                           int64_t now, enum table_include inc)
{
    return build(PRINT_DEFAULT, NULL, NULL, 0, objs, n, rv, cont, now, inc);
}
