/*
 * Workload printers (see table_workloads.h): printDeployment, printReplicaSet,
 * printStatefulSet, printDaemonSet, printControllerRevision, printJob, printCronJob,
 * printPodDisruptionBudget, printEndpointSlice and printEvent of kube's printers.go, with the
 * options kube-apiserver's TableConvertor passes (Wide: every column is filled).
 *
 * Allocation: as table.c, the inputs are stored objects, so building aborts on OOM.
 */
#include "apiserver/table_workloads.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/rfc3339.h"
#include "api/workloads.h"
#include "apiserver/table.h"
#include "base/base.h"
#include "base/strbuf.h"

#define DESC_NAME "Name must be unique within a namespace."
#define DESC_AGE                                                                                   \
    "CreationTimestamp is a timestamp representing the server time when this object was "          \
    "created."
#define NAME_COL                                                                                   \
    {                                                                                              \
        "Name", "string", "name", DESC_NAME, 0                                                     \
    }
#define AGE_COL                                                                                    \
    {                                                                                              \
        "Age", "string", "", DESC_AGE, 0                                                           \
    }
#define CONTAINERS_COLS                                                                            \
    {"Containers", "string", "", "Names of each container in the template.", 1},                   \
    {                                                                                              \
        "Images", "string", "", "Images referenced by each container in the template.", 1          \
    }
#define SELECTOR_COL                                                                               \
    {                                                                                              \
        "Selector", "string", "", "Label query over pods that should match the replica count.", 1  \
    }

static const struct table_column deployment_cols[] = {
    NAME_COL,
    {"Ready", "string", "", "Number of the pod with ready state", 0},
    {"Up-to-date", "string", "",
     "Total number of non-terminated pods targeted by this deployment that have the desired "
     "template spec.",
     0},
    {"Available", "string", "",
     "Total number of available pods (ready for at least minReadySeconds) targeted by this "
     "deployment.",
     0},
    AGE_COL,
    CONTAINERS_COLS,
    SELECTOR_COL,
};

static const struct table_column replica_set_cols[] = {
    NAME_COL,
    {"Desired", "integer", "", "Replicas is the number of desired replicas.", 0},
    {"Current", "integer", "", "Replicas is the most recently observed number of replicas.", 0},
    {"Ready", "integer", "", "The number of ready replicas for this replica set.", 0},
    AGE_COL,
    CONTAINERS_COLS,
    SELECTOR_COL,
};

static const struct table_column stateful_set_cols[] = {
    NAME_COL,
    {"Ready", "string", "", "Number of the pod with ready state", 0},
    AGE_COL,
    CONTAINERS_COLS,
};

static const struct table_column daemon_set_cols[] = {
    NAME_COL,
    {"Desired", "integer", "", "The total number of nodes that should be running the daemon pod.",
     0},
    {"Current", "integer", "",
     "The number of nodes that are running at least 1 daemon pod and are supposed to run the "
     "daemon pod.",
     0},
    {"Ready", "integer", "",
     "The number of nodes that should be running the daemon pod and have one or more of the "
     "daemon pod running and ready.",
     0},
    {"Up-to-date", "integer", "", "The total number of nodes that are running updated daemon pod",
     0},
    {"Available", "integer", "",
     "The number of nodes that should be running the daemon pod and have one or more of the "
     "daemon pod running and available.",
     0},
    {"Node Selector", "string", "",
     "NodeSelector is a selector which must be true for the pod to fit on a node.", 0},
    AGE_COL,
    CONTAINERS_COLS,
    SELECTOR_COL,
};

static const struct table_column controller_revision_cols[] = {
    NAME_COL,
    {"Controller", "string", "", "Controller of the object", 0},
    {"Revision", "integer", "", "Revision indicates the revision of the state represented by Data.",
     0},
    AGE_COL,
};

static const struct table_column job_cols[] = {
    NAME_COL,
    {"Status", "string", "", "Status of the job.", 0},
    {"Completions", "string", "",
     "The completion status of the job as <number of successful pods>/<number of desired "
     "pods>.",
     0},
    {"Duration", "string", "", "Time required to complete the job.", 0},
    AGE_COL,
    CONTAINERS_COLS,
    SELECTOR_COL,
};

static const struct table_column cron_job_cols[] = {
    NAME_COL,
    {"Schedule", "string", "", "The schedule in Cron format.", 0},
    {"Timezone", "string", "", "The time zone name for the given schedule.", 0},
    {"Suspend", "boolean", "", "This flag tells the controller to suspend subsequent executions.",
     0},
    {"Active", "integer", "", "A list of pointers to currently running jobs.", 0},
    {"Last Schedule", "string", "",
     "Information when was the last time the job was successfully scheduled.", 0},
    AGE_COL,
    CONTAINERS_COLS,
    SELECTOR_COL,
};

static const struct table_column pdb_cols[] = {
    NAME_COL,
    {"Min Available", "string", "",
     "The minimum number of pods that must be available simultaneously.", 0},
    {"Max Unavailable", "string", "",
     "The maximum number of pods that may be unavailable simultaneously.", 0},
    {"Allowed Disruptions", "integer", "",
     "Calculated number of pods that may be disrupted at this time.", 0},
    AGE_COL,
};

static const struct table_column endpoint_slice_cols[] = {
    NAME_COL,
    {"AddressType", "string", "", "Type of address carried by this EndpointSlice", 0},
    {"Ports", "string", "", "Ports advertised by this EndpointSlice", 0},
    {"Endpoints", "string", "", "Endpoints in this EndpointSlice", 0},
    AGE_COL,
};

static const struct table_column event_cols[] = {
    {"Last Seen", "string", "",
     "The time at which the most recent occurrence of this event was "
     "recorded.",
     0},
    {"Type", "string", "",
     "Type of this event (Normal, Warning), new types could be added in the "
     "future",
     0},
    {"Reason", "string", "",
     "This should be a short, machine understandable string that gives "
     "the reason for the transition into the object's current status.",
     0},
    {"Object", "string", "", "The object that this event is about.", 0},
    {"Subobject", "string", "", "The field of the object the event is about.", 1},
    {"Source", "string", "", "The component reporting this event.", 1},
    {"Message", "string", "", "A human-readable description of the status of this operation.", 0},
    {"First Seen", "string", "", "The time at which the event was first recorded.", 1},
    {"Count", "string", "", "The number of times this event has occurred.", 1},
    {"Name", "string", "name", DESC_NAME, 1},
};

enum wprinter {
    W_DEPLOYMENT,
    W_REPLICA_SET,
    W_STATEFUL_SET,
    W_DAEMON_SET,
    W_CONTROLLER_REVISION,
    W_JOB,
    W_CRON_JOB,
    W_PDB,
    W_ENDPOINT_SLICE,
    W_EVENT,      /* core/v1 */
    W_EVENTS_K8S, /* events.k8s.io/v1, shown as kube shows it: converted to the core Event */
};

static const struct {
    const char *group, *kind;
    enum wprinter p;
    const struct table_column *cols;
    size_t n;
} wprinters[] = {
    {"apps", "Deployment", W_DEPLOYMENT, deployment_cols, ARRAY_SIZE(deployment_cols)},
    {"apps", "ReplicaSet", W_REPLICA_SET, replica_set_cols, ARRAY_SIZE(replica_set_cols)},
    {"apps", "StatefulSet", W_STATEFUL_SET, stateful_set_cols, ARRAY_SIZE(stateful_set_cols)},
    {"apps", "DaemonSet", W_DAEMON_SET, daemon_set_cols, ARRAY_SIZE(daemon_set_cols)},
    {"apps", "ControllerRevision", W_CONTROLLER_REVISION, controller_revision_cols,
     ARRAY_SIZE(controller_revision_cols)},
    {"batch", "Job", W_JOB, job_cols, ARRAY_SIZE(job_cols)},
    {"batch", "CronJob", W_CRON_JOB, cron_job_cols, ARRAY_SIZE(cron_job_cols)},
    {"policy", "PodDisruptionBudget", W_PDB, pdb_cols, ARRAY_SIZE(pdb_cols)},
    {"discovery.k8s.io", "EndpointSlice", W_ENDPOINT_SLICE, endpoint_slice_cols,
     ARRAY_SIZE(endpoint_slice_cols)},
    {"", "Event", W_EVENT, event_cols, ARRAY_SIZE(event_cols)},
    {"events.k8s.io", "Event", W_EVENTS_K8S, event_cols, ARRAY_SIZE(event_cols)},
};

static int find(const struct api_kind *k)
{
    for (size_t i = 0; i < ARRAY_SIZE(wprinters); i++)
        if (k && k->group && !strcmp(k->group, wprinters[i].group) &&
            !strcmp(k->kind, wprinters[i].kind))
            return (int)i;
    return -1;
}

const struct table_column *table_workload_columns(const struct api_kind *k, size_t *ret_n)
{
    int i = find(k);

    if (i < 0)
        return NULL;
    *ret_n = wprinters[i].n;
    return wprinters[i].cols;
}

/* ---- helpers ---- */

static void push(cJSON *a, cJSON *v)
{
    CHECK(v);
    CHECK(cJSON_AddItemToArray(a, v));
}

static void push_str(cJSON *a, const char *s)
{
    push(a, cJSON_CreateString(s));
}

static void push_int(cJSON *a, long long v)
{
    push(a, cJSON_CreateNumber((double)v));
}

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
    return cJSON_IsNull(c) ? NULL : c;
}

static const char *get_str(const cJSON *o, const char *k)
{
    const cJSON *c = get(o, k);
    return cJSON_IsString(c) ? c->valuestring : "";
}

static long long get_int(const cJSON *o, const char *k)
{
    const cJSON *c = get(o, k);
    return cJSON_IsNumber(c) && isfinite(c->valuedouble) ? (long long)c->valuedouble : 0;
}

static void push_age(cJSON *cells, const cJSON *ts, int64_t now)
{
    char age[TABLE_DURATION_MAX];

    table_age(ts, now, age);
    push_str(cells, age);
}

/* layoutContainerCells: names and images joined by ','. */
static void push_containers(cJSON *cells, const cJSON *pod_spec)
{
    struct strbuf names = STRBUF_INIT, images = STRBUF_INIT;
    const cJSON *c;

    cJSON_ArrayForEach(c, get(pod_spec, "containers"))
    {
        strbuf_addf(&names, "%s%s", names.len ? "," : "", get_str(c, "name"));
        strbuf_addf(&images, "%s%s", images.len ? "," : "", get_str(c, "image"));
    }
    push_str(cells, names.buf);
    push_str(cells, images.buf);
    strbuf_release(&names);
    strbuf_release(&images);
}

/* LabelSelectorAsSelector(sel).String() ("" for none); FormatLabelSelector when none_text:
 * "<none>" for an empty result. */
static void push_selector(cJSON *cells, const cJSON *sel, bool none_text)
{
    struct strbuf sb = STRBUF_INIT;

    if (api_selector_string(sel, &sb) < 0) {
        strbuf_reset(&sb);
        strbuf_addstr(&sb, "<error>");
    }
    push_str(cells, sb.len || !none_text ? sb.buf : "<none>");
    strbuf_release(&sb);
}

/* IntOrString.String(): the number or the string. */
static void int_or_string_text(const cJSON *v, struct strbuf *out)
{
    if (cJSON_IsString(v))
        strbuf_addstr(out, v->valuestring);
    else
        strbuf_addf(out, "%lld", cJSON_IsNumber(v) ? (long long)v->valuedouble : 0LL);
}

static bool has_condition(const cJSON *obj, const char *type)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, api_get_path(obj, "status.conditions"))
    {
        if (!strcmp(get_str(c, "type"), type) && !strcmp(get_str(c, "status"), "True"))
            return true;
    }
    return false;
}

/* ---- printers ---- */

static void job_cells(const cJSON *o, int64_t now, cJSON *cells)
{
    const cJSON *spec = get(o, "spec"), *st = get(o, "status");
    const cJSON *start = get(st, "startTime"), *done = get(st, "completionTime");
    struct strbuf sb = STRBUF_INIT;
    const char *status;
    char dur[TABLE_DURATION_MAX] = "";

    if (has_condition(o, "Complete"))
        status = "Complete";
    else if (has_condition(o, "Failed"))
        status = "Failed";
    else if (get(get(o, "metadata"), "deletionTimestamp"))
        status = "Terminating";
    else if (has_condition(o, "Suspended"))
        status = "Suspended";
    else if (has_condition(o, "FailureTarget"))
        status = "FailureTarget";
    else
        status = "Running";
    push_str(cells, status);
    if (get(spec, "completions"))
        strbuf_addf(&sb, "%lld/%lld", get_int(st, "succeeded"), get_int(spec, "completions"));
    else if (get_int(spec, "parallelism") > 1)
        strbuf_addf(&sb, "%lld/1 of %lld", get_int(st, "succeeded"), get_int(spec, "parallelism"));
    else
        strbuf_addf(&sb, "%lld/1", get_int(st, "succeeded"));
    push_str(cells, sb.buf);
    if (start && !done) {
        table_age(start, now, dur);
    } else if (start && done) {
        int64_t s0, s1;
        int32_t n0, n1;
        if (rfc3339_parse(get_str(st, "startTime"), &s0, &n0) == 0 &&
            rfc3339_parse(get_str(st, "completionTime"), &s1, &n1) == 0)
            (void)table_human_duration(s1 - s0, dur);
    }
    push_str(cells, dur);
    strbuf_release(&sb);
}

/* printEvent over the core field names, or the events.k8s.io ones mapped to them. */
static void event_cells(const cJSON *o, bool v1events, int64_t now, cJSON *cells)
{
    const cJSON *first = get(o, v1events ? "deprecatedFirstTimestamp" : "firstTimestamp");
    const cJSON *last = get(o, v1events ? "deprecatedLastTimestamp" : "lastTimestamp");
    const cJSON *obj = get(o, v1events ? "regarding" : "involvedObject");
    const cJSON *src = get(o, v1events ? "deprecatedSource" : "source");
    const cJSON *series = get(o, "series");
    const char *rc = get_str(o, v1events ? "reportingController" : "reportingComponent");
    const char *ri = get_str(o, "reportingInstance");
    long long count = get_int(o, v1events ? "deprecatedCount" : "count");
    char first_s[TABLE_DURATION_MAX], last_s[TABLE_DURATION_MAX];
    struct strbuf sb = STRBUF_INIT;
    const char *comp, *inst, *msg;
    size_t mlen;

    table_age(first ? first : get(o, "eventTime"), now, first_s);
    if (last)
        table_age(last, now, last_s);
    else
        memcpy(last_s, first_s, sizeof(last_s));
    if (series) {
        table_age(get(series, "lastObservedTime"), now, last_s);
        count = get_int(series, "count");
    } else if (count == 0) {
        count = 1;
    }
    push_str(cells, last_s);
    push_str(cells, get_str(o, "type"));
    push_str(cells, get_str(o, "reason"));
    for (const char *p = get_str(obj, "kind"); *p; p++)
        strbuf_addch(&sb, (char)tolower((unsigned char)*p));
    if (*get_str(obj, "name"))
        strbuf_addf(&sb, "/%s", get_str(obj, "name"));
    push_str(cells, sb.buf);
    push_str(cells, get_str(obj, "fieldPath"));
    comp = *get_str(src, "component") ? get_str(src, "component") : rc;
    inst = *get_str(src, "host") ? get_str(src, "host") : ri;
    strbuf_reset(&sb);
    if (*comp)
        strbuf_addf(&sb, "%s%s%s", comp, *inst ? ", " : "", inst);
    push_str(cells, sb.buf);
    /* strings.TrimSpace of the message. */
    msg = get_str(o, v1events ? "note" : "message");
    while (isspace((unsigned char)*msg))
        msg++;
    mlen = strlen(msg);
    while (mlen && isspace((unsigned char)msg[mlen - 1]))
        mlen--;
    strbuf_reset(&sb);
    strbuf_add(&sb, msg, mlen);
    push_str(cells, sb.buf);
    push_str(cells, first_s);
    push_int(cells, count);
    push_str(cells, get_str(get(o, "metadata"), "name"));
    strbuf_release(&sb);
}

/* formatDiscoveryPorts / formatDiscoveryEndpoints: up to 3, then " + N more...", "<unset>". */
static void push_list_with_more(cJSON *cells, struct strbuf *sb, int count)
{
    if (count > 3)
        strbuf_addf(sb, " + %d more...", count - 3);
    push_str(cells, sb->len ? sb->buf : "<unset>");
}

static void endpoint_slice_cells(const cJSON *o, cJSON *cells)
{
    struct strbuf sb = STRBUF_INIT;
    const cJSON *p, *ep, *a;
    int count = 0;

    push_str(cells, get_str(o, "addressType"));
    cJSON_ArrayForEach(p, get(o, "ports"))
    {
        if (count++ >= 3)
            continue;
        if (get(p, "port"))
            strbuf_addf(&sb, "%s%lld", sb.len ? "," : "", get_int(p, "port"));
        else
            strbuf_addf(&sb, "%s%s", sb.len ? "," : "", get(p, "name") ? get_str(p, "name") : "*");
    }
    push_list_with_more(cells, &sb, count);
    strbuf_reset(&sb);
    count = 0;
    cJSON_ArrayForEach(ep, get(o, "endpoints"))
    {
        cJSON_ArrayForEach(a, get(ep, "addresses"))
        {
            if (count++ < 3 && cJSON_IsString(a))
                strbuf_addf(&sb, "%s%s", sb.len ? "," : "", a->valuestring);
        }
    }
    push_list_with_more(cells, &sb, count);
    strbuf_release(&sb);
}

void table_workload_cells(const struct api_kind *k, const cJSON *o, int64_t now, cJSON *cells)
{
    const cJSON *meta = get(o, "metadata"), *spec = get(o, "spec"), *st = get(o, "status");
    const cJSON *ts = get(meta, "creationTimestamp");
    const cJSON *pod_spec = api_get_path(spec, "template.spec");
    struct strbuf sb = STRBUF_INIT;
    int i = find(k);

    CHECK(i >= 0);
    if (wprinters[i].p != W_EVENT && wprinters[i].p != W_EVENTS_K8S)
        push_str(cells, get_str(meta, "name"));
    switch (wprinters[i].p) {
    case W_DEPLOYMENT:
        strbuf_addf(&sb, "%lld/%lld", get_int(st, "readyReplicas"), get_int(spec, "replicas"));
        push_str(cells, sb.buf);
        push_int(cells, get_int(st, "updatedReplicas"));
        push_int(cells, get_int(st, "availableReplicas"));
        push_age(cells, ts, now);
        push_containers(cells, pod_spec);
        push_selector(cells, get(spec, "selector"), false);
        break;
    case W_REPLICA_SET:
        push_int(cells, get_int(spec, "replicas"));
        push_int(cells, get_int(st, "replicas"));
        push_int(cells, get_int(st, "readyReplicas"));
        push_age(cells, ts, now);
        push_containers(cells, pod_spec);
        push_selector(cells, get(spec, "selector"), false);
        break;
    case W_STATEFUL_SET:
        strbuf_addf(&sb, "%lld/%lld", get_int(st, "readyReplicas"), get_int(spec, "replicas"));
        push_str(cells, sb.buf);
        push_age(cells, ts, now);
        push_containers(cells, pod_spec);
        break;
    case W_DAEMON_SET: {
        const cJSON *ns = get(pod_spec, "nodeSelector"), *c;
        push_int(cells, get_int(st, "desiredNumberScheduled"));
        push_int(cells, get_int(st, "currentNumberScheduled"));
        push_int(cells, get_int(st, "numberReady"));
        push_int(cells, get_int(st, "updatedNumberScheduled"));
        push_int(cells, get_int(st, "numberAvailable"));
        /* labels.FormatLabels: sorted "k=v" pairs, "<none>" when empty. */
        {
            const char *keys[64];
            size_t nk = 0;
            cJSON_ArrayForEach(c, ns)
            {
                if (cJSON_IsString(c) && nk < ARRAY_SIZE(keys))
                    keys[nk++] = c->string;
            }
            for (size_t a = 1; a < nk; a++)
                for (size_t b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
                    const char *t = keys[b];
                    keys[b] = keys[b - 1];
                    keys[b - 1] = t;
                }
            for (size_t a = 0; a < nk; a++)
                strbuf_addf(&sb, "%s%s=%s", a ? "," : "", keys[a], get_str(ns, keys[a]));
            push_str(cells, sb.len ? sb.buf : "<none>");
        }
        push_age(cells, ts, now);
        push_containers(cells, pod_spec);
        push_selector(cells, get(spec, "selector"), false);
        break;
    }
    case W_CONTROLLER_REVISION: {
        const cJSON *r, *ref = NULL;
        cJSON_ArrayForEach(r, get(meta, "ownerReferences"))
        {
            if (cJSON_IsTrue(get(r, "controller")))
                ref = r;
        }
        if (ref) {
            /* formatResourceName(GroupKind, name, withKind): "kind.group/name" lower-cased. */
            const char *av = get_str(ref, "apiVersion"), *slash = strchr(av, '/');
            for (const char *p = get_str(ref, "kind"); *p; p++)
                strbuf_addch(&sb, (char)tolower((unsigned char)*p));
            if (slash) {
                strbuf_addch(&sb, '.');
                for (const char *p = av; p < slash; p++)
                    strbuf_addch(&sb, (char)tolower((unsigned char)*p));
            }
            strbuf_addf(&sb, "/%s", get_str(ref, "name"));
        }
        push_str(cells, ref ? sb.buf : "<none>");
        push_int(cells, get_int(o, "revision"));
        push_age(cells, ts, now);
        break;
    }
    case W_JOB:
        job_cells(o, now, cells);
        push_age(cells, ts, now);
        push_containers(cells, pod_spec);
        push_selector(cells, get(spec, "selector"), false);
        break;
    case W_CRON_JOB: {
        const cJSON *jspec = api_get_path(spec, "jobTemplate.spec");
        const cJSON *suspend = get(spec, "suspend");
        char last[TABLE_DURATION_MAX];
        push_str(cells, get_str(spec, "schedule"));
        push_str(cells, get(spec, "timeZone") ? get_str(spec, "timeZone") : "<none>");
        /* printBoolPtr: "<unset>" for nil. */
        if (cJSON_IsBool(suspend))
            push(cells, cJSON_CreateString(cJSON_IsTrue(suspend) ? "True" : "False"));
        else
            push_str(cells, "<unset>");
        push_int(cells, cJSON_GetArraySize(get(st, "active")));
        if (get(st, "lastScheduleTime"))
            table_age(get(st, "lastScheduleTime"), now, last);
        else
            (void)snprintf(last, sizeof(last), "<none>");
        push_str(cells, last);
        push_age(cells, ts, now);
        push_containers(cells, api_get_path(jspec, "template.spec"));
        push_selector(cells, get(jspec, "selector"), true);
        break;
    }
    case W_PDB:
        if (get(spec, "minAvailable"))
            int_or_string_text(get(spec, "minAvailable"), &sb);
        else
            strbuf_addstr(&sb, "N/A");
        push_str(cells, sb.buf);
        strbuf_reset(&sb);
        if (get(spec, "maxUnavailable"))
            int_or_string_text(get(spec, "maxUnavailable"), &sb);
        else
            strbuf_addstr(&sb, "N/A");
        push_str(cells, sb.buf);
        push_int(cells, get_int(st, "disruptionsAllowed"));
        push_age(cells, ts, now);
        break;
    case W_ENDPOINT_SLICE:
        endpoint_slice_cells(o, cells);
        push_age(cells, ts, now);
        break;
    case W_EVENT:
    case W_EVENTS_K8S:
        event_cells(o, wprinters[i].p == W_EVENTS_K8S, now, cells);
        break;
    }
    strbuf_release(&sb);
}
