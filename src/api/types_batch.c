/*
 * batch/v1 Job and CronJob, with the defaults of pkg/apis/batch/v1/defaults.go, the selector
 * a Job's strategy generates (pkg/registry/batch/job/strategy.go generateSelector) and the rules
 * of pkg/apis/batch/validation (kubernetes 1.33). CronJob schedules are checked as
 * robfig/cron's ParseStandard parses them, with its error messages, since kube-apiserver
 * reports those verbatim.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "api/api.h"
#include "api/duration.h"
#include "api/workloads.h"
#include "base/base.h"
#include "codec/patch.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
    return cJSON_IsNull(c) ? NULL : c;
}

/* ---- Job ---- */

static const struct api_prop job_condition_props[] = {
    {"type", &api_string, API_ALWAYS},
    {"status", &api_string, API_ALWAYS},
    {"lastProbeTime", &api_time},
    {"lastTransitionTime", &api_time},
    {"reason", &api_string, API_VAL},
    {"message", &api_string, API_VAL},
    {NULL},
};

static const struct api_prop job_status_props[] = {
    {"conditions", API_ARR(API_OBJ(job_condition_props))},
    {"startTime", &api_time},
    {"completionTime", &api_time},
    {"active", &api_int32, API_VAL},
    {"succeeded", &api_int32, API_VAL},
    {"failed", &api_int32, API_VAL},
    {"terminating", &api_int32},
    {"completedIndexes", &api_string, API_VAL},
    {"failedIndexes", &api_string},
    {"uncountedTerminatedPods", &api_preserve_object},
    {"ready", &api_int32},
    {NULL},
};

/* validateJobSpec: what a Job's spec and a CronJob's jobTemplate.spec share. */
static void check_job_spec_common(const cJSON *spec, struct api_walk *w)
{
    const cJSON *mode = get(spec, "completionMode");
    static const char *const nonneg[] = {"parallelism",
                                         "completions",
                                         "activeDeadlineSeconds",
                                         "backoffLimit",
                                         "ttlSecondsAfterFinished",
                                         "backoffLimitPerIndex",
                                         "maxFailedIndexes"};

    for (size_t i = 0; i < ARRAY_SIZE(nonneg); i++)
        api_check_nonnegative(w, nonneg[i], get(spec, nonneg[i]));
    if (cJSON_IsString(mode) && !strcmp(mode->valuestring, "Indexed") && !get(spec, "completions"))
        api_walk_error(w, "completions", FIELD_REQUIRED, NULL, "when completion mode is Indexed");
    if (get(spec, "backoffLimitPerIndex") &&
        !(cJSON_IsString(mode) && !strcmp(mode->valuestring, "Indexed")))
        api_walk_error(w, "backoffLimitPerIndex", FIELD_FORBIDDEN, NULL,
                       "requires indexed completion mode");
    api_check_workload_template(w, spec, API_TPL_RESTART_NOT_ALWAYS | API_TPL_POD_SPEC, "job",
                                "Job");
}

static void check_job_spec(const struct api_schema *s, const cJSON *spec, struct api_walk *w)
{
    (void)s;
    check_job_spec_common(spec, w);
}

static const struct api_prop job_spec_props[] = {
    {"parallelism", &api_int32},
    {"completions", &api_int32},
    {"activeDeadlineSeconds", &api_int64},
    {"podFailurePolicy", &api_preserve_object},
    {"successPolicy", &api_preserve_object},
    {"backoffLimit", &api_int32},
    {"backoffLimitPerIndex", &api_int32},
    {"maxFailedIndexes", &api_int32},
    {"selector", &api_label_selector},
    {"manualSelector", &api_bool},
    {"template", &api_pod_template, API_REQ | API_ALWAYS},
    {"ttlSecondsAfterFinished", &api_int32},
    {"completionMode", API_ENUM("NonIndexed", "Indexed")},
    {"suspend", &api_bool},
    {"podReplacementPolicy", API_ENUM("TerminatingOrFailed", "Failed")},
    {"managedBy", &api_string},
    {NULL},
};

#define LABEL_JOB_NAME        "batch.kubernetes.io/job-name"
#define LABEL_JOB_NAME_LEGACY "job-name"
#define LABEL_UID             "batch.kubernetes.io/controller-uid"
#define LABEL_UID_LEGACY      "controller-uid"

static bool manual_selector(const cJSON *spec)
{
    return cJSON_IsTrue(get(spec, "manualSelector"));
}

/* ValidateJob: the spec, the selector required and selecting the template, and a generated
 * selector (manualSelector unset) that is really the generated one (validateGeneratedSelector). */
static void check_job(const struct api_schema *s, const cJSON *o, struct api_walk *w)
{
    const cJSON *spec = get(o, "spec"), *meta = get(o, "metadata");
    const cJSON *uid = get(meta, "uid"), *name = get(meta, "name");
    const cJSON *sel = get(spec, "selector");
    const cJSON *labels = api_get_path(spec, "template.metadata.labels");
    size_t len;
    (void)s;

    if (!spec)
        return;
    /* Without manualSelector the server generates the selector when it creates the Job (it
     * has the uid then): a manifest checked offline (koord validate) has neither yet. */
    len = api_walk_push(w, "spec", 0);
    api_check_workload_template(
        w, spec,
        API_TPL_SELECTOR_MUST_MATCH |
            (manual_selector(spec) || cJSON_IsString(uid) ? API_TPL_SELECTOR_REQUIRED : 0),
        "job", "Job");
    api_walk_pop(w, len);
    if (!sel || manual_selector(spec) || !cJSON_IsString(uid) || !*uid->valuestring)
        return;
    {
        const cJSON *got = get(get(sel, "matchLabels"), LABEL_UID);
        if (!cJSON_IsString(got) || strcmp(got->valuestring, uid->valuestring)) {
            struct strbuf val = STRBUF_INIT;
            api_go_label_selector(sel, &val);
            field_error_add(w->errs, FIELD_INVALID, "spec.selector", val.buf,
                            "`selector` not auto-generated");
            strbuf_release(&val);
        }
    }
    {
        /* ValidateHasLabel of the template's generated labels. */
        const struct {
            const char *key, *want;
        } need[] = {
            {LABEL_UID_LEGACY, uid->valuestring},
            {LABEL_JOB_NAME_LEGACY, cJSON_IsString(name) ? name->valuestring : ""},
            {LABEL_UID, uid->valuestring},
            {LABEL_JOB_NAME, cJSON_IsString(name) ? name->valuestring : ""},
        };
        for (size_t i = 0; i < ARRAY_SIZE(need); i++) {
            const cJSON *v = get(labels, need[i].key);
            struct strbuf path = STRBUF_INIT, val = STRBUF_INIT;
            strbuf_addf(&path, "spec.template.metadata.labels[%s]", need[i].key);
            if (!cJSON_IsString(v)) {
                field_error_add(w->errs, FIELD_REQUIRED, path.buf, NULL, "must be '%s'",
                                need[i].want);
            } else if (strcmp(v->valuestring, need[i].want)) {
                strbuf_add_json_str(&val, v->valuestring);
                field_error_add(w->errs, FIELD_INVALID, path.buf, val.buf, "must be '%s'",
                                need[i].want);
            }
            strbuf_release(&path);
            strbuf_release(&val);
        }
    }
}

/* SetDefaults_Job: completions and parallelism 1 when both are unset, parallelism 1,
 * backoffLimit 6 (MaxInt32 with backoffLimitPerIndex), the template's labels as the Job's when
 * it has none, completionMode NonIndexed, suspend false, podReplacementPolicy by the failure
 * policy. */
static int default_job(cJSON *obj)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *tl;
    int r = 0;

    if (!cJSON_IsObject(spec))
        return 0;
    if (!get(spec, "completions") && !get(spec, "parallelism"))
        r = api_set_default(spec, "completions", cJSON_CreateNumber(1));
    if (r == 0)
        r = api_set_default(spec, "parallelism", cJSON_CreateNumber(1));
    if (r == 0)
        r = api_set_default(
            spec, "backoffLimit",
            cJSON_CreateNumber(get(spec, "backoffLimitPerIndex") ? (double)INT32_MAX : 6));
    tl = api_get_path(spec, "template.metadata.labels");
    if (r == 0 && cJSON_IsObject(meta) && cJSON_GetArraySize(tl) > 0 &&
        cJSON_GetArraySize(get(meta, "labels")) == 0) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "labels");
        r = api_set_default(meta, "labels", cJSON_Duplicate(tl, true));
    }
    if (r == 0)
        r = api_set_default(spec, "completionMode", cJSON_CreateString("NonIndexed"));
    if (r == 0)
        r = api_set_default(spec, "suspend", cJSON_CreateFalse());
    if (r == 0)
        r = api_set_default(
            spec, "podReplacementPolicy",
            cJSON_CreateString(get(spec, "podFailurePolicy") ? "Failed" : "TerminatingOrFailed"));
    return r;
}

/* Sets o[key] = value unless o already has the key. */
static void label_default(cJSON *labels, const char *key, const char *value)
{
    if (!cJSON_GetObjectItemCaseSensitive(labels, key))
        CHECK(cJSON_AddStringToObject(labels, key, value));
}

/* PrepareForCreate: status reset and, without manualSelector, generateSelector: the job-name
 * and controller-uid labels on the template (legacy and batch.kubernetes.io/ keys) and the
 * selector matching the uid. The Job's own labels are defaulted from the template's first, as
 * kube decodes (and so defaults) the body before the strategy runs. */
static void prepare_job(cJSON *obj)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec"), *tpl, *tmeta, *labels, *sel, *ml;
    const cJSON *meta = get(obj, "metadata");
    const cJSON *uid = get(meta, "uid"), *name = get(meta, "name");

    api_reset_status(obj);
    if (!cJSON_IsObject(spec) || manual_selector(spec) || !cJSON_IsString(uid) ||
        !cJSON_IsString(name))
        return;
    {
        /* Labels first, as decoding defaults them before the strategy runs. */
        cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
        const cJSON *tl = api_get_path(spec, "template.metadata.labels");
        if (cJSON_GetArraySize(tl) > 0 && cJSON_GetArraySize(get(m, "labels")) == 0) {
            cJSON_DeleteItemFromObjectCaseSensitive(m, "labels");
            CHECK(cJSON_AddItemToObject(m, "labels", cJSON_Duplicate(tl, true)));
        }
    }
    tpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
    if (!cJSON_IsObject(tpl))
        return;
    tmeta = cJSON_GetObjectItemCaseSensitive(tpl, "metadata");
    if (!cJSON_IsObject(tmeta)) {
        cJSON_DeleteItemFromObjectCaseSensitive(tpl, "metadata");
        CHECK(tmeta = cJSON_AddObjectToObject(tpl, "metadata"));
    }
    labels = cJSON_GetObjectItemCaseSensitive(tmeta, "labels");
    if (!cJSON_IsObject(labels)) {
        cJSON_DeleteItemFromObjectCaseSensitive(tmeta, "labels");
        CHECK(labels = cJSON_AddObjectToObject(tmeta, "labels"));
    }
    label_default(labels, LABEL_JOB_NAME_LEGACY, name->valuestring);
    label_default(labels, LABEL_JOB_NAME, name->valuestring);
    label_default(labels, LABEL_UID_LEGACY, uid->valuestring);
    label_default(labels, LABEL_UID, uid->valuestring);
    sel = cJSON_GetObjectItemCaseSensitive(spec, "selector");
    if (!cJSON_IsObject(sel)) {
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "selector");
        CHECK(sel = cJSON_AddObjectToObject(spec, "selector"));
    }
    ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels");
    if (!cJSON_IsObject(ml)) {
        cJSON_DeleteItemFromObjectCaseSensitive(sel, "matchLabels");
        CHECK(ml = cJSON_AddObjectToObject(sel, "matchLabels"));
    }
    label_default(ml, LABEL_UID, uid->valuestring);
}

/* ValidateImmutableField of one spec member; value rendered as Go renders the field. */
static void immutable(const cJSON *old_spec, const cJSON *new_spec, const char *key,
                      struct field_errors *errs)
{
    const cJSON *a = get(old_spec, key), *b = get(new_spec, key);
    struct strbuf path = STRBUF_INIT, val = STRBUF_INIT;
    char *txt;

    if ((!a && !b) || (a && b && json_value_equal(a, b)))
        return;
    strbuf_addf(&path, "spec.%s", key);
    if (!b) {
        strbuf_addstr(&val, "null");
    } else if (cJSON_IsString(b)) {
        strbuf_add_json_str(&val, b->valuestring);
    } else if ((txt = cJSON_PrintUnformatted(b))) {
        strbuf_addstr(&val, txt);
        cJSON_free(txt);
    }
    field_error_add(errs, FIELD_INVALID, path.buf, val.buf, "field is immutable");
    strbuf_release(&path);
    strbuf_release(&val);
}

/* ValidateJobSpecUpdate: completions, selector, template (kube allows a suspended Job that
 * never started to change its scheduling directives; koord keeps the template fixed),
 * completionMode, podFailurePolicy, backoffLimitPerIndex and managedBy are immutable. */
static void check_job_update(const cJSON *old, const cJSON *obj, struct field_errors *errs)
{
    const cJSON *os = get(old, "spec"), *ns = get(obj, "spec");
    const cJSON *ot = get(os, "template"), *nt = get(ns, "template");

    immutable(os, ns, "completions", errs);
    api_check_selector_immutable(get(os, "selector"), get(ns, "selector"), "spec.selector", errs);
    if ((ot || nt) && !(ot && nt && json_value_equal(ot, nt)) &&
        !(cJSON_IsTrue(get(os, "suspend")) && !get(get(old, "status"), "startTime")))
        field_error_add(errs, FIELD_INVALID, "spec.template", "core.PodTemplateSpec{...}",
                        "field is immutable");
    immutable(os, ns, "completionMode", errs);
    immutable(os, ns, "podFailurePolicy", errs);
    immutable(os, ns, "backoffLimitPerIndex", errs);
    immutable(os, ns, "managedBy", errs);
}

const struct api_kind api_kind_job = {
    .group = "batch",
    .version = "v1",
    .kind = "Job",
    .plural = "jobs",
    .namespaced = true,
    .status_subresource = true,
    .spec = &(const struct api_schema){.type = API_OBJECT,
                                       .props = job_spec_props,
                                       .check = check_job_spec},
    .status = API_OBJ(job_status_props),
    .check = check_job,
    .defaults = default_job,
    .prepare_create = prepare_job,
    .check_update = check_job_update,
};

/* ---- CronJob ---- */

struct cron_range {
    int min, max;
    const char *const *names; /* lower-case names of min, min+1, ... or NULL */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                          "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const struct cron_range cron_fields[] = {
    {0, 59, NULL}, {0, 23, NULL}, {1, 31, NULL}, {1, 12, month_names}, {0, 6, dow_names},
};

/* mustParseInt: a decimal number (strconv.Atoi), not negative. */
static int cron_int(const char *s, size_t n, int *ret, struct strbuf *err)
{
    char buf[32];
    long v = 0;
    size_t i = 0;
    bool neg = false;

    (void)snprintf(buf, sizeof(buf), "%.*s", (int)(n < 31 ? n : 31), s);
    if (buf[0] == '+' || buf[0] == '-') {
        neg = buf[0] == '-';
        i++;
    }
    if (!buf[i]) {
        strbuf_addf(err,
                    "failed to parse int from %s: strconv.Atoi: parsing \"%s\": invalid syntax",
                    buf, buf);
        return -EINVAL;
    }
    for (; buf[i]; i++) {
        if (buf[i] < '0' || buf[i] > '9') {
            strbuf_addf(err,
                        "failed to parse int from %s: strconv.Atoi: parsing \"%s\": invalid syntax",
                        buf, buf);
            return -EINVAL;
        }
        v = v * 10 + (buf[i] - '0');
        if (v > INT_MAX) {
            strbuf_addf(err,
                        "failed to parse int from %s: strconv.Atoi: parsing \"%s\": value out of "
                        "range",
                        buf, buf);
            return -EINVAL;
        }
    }
    if (neg && v) {
        strbuf_addf(err, "negative number (-%ld) not allowed: %s", v, buf);
        return -EINVAL;
    }
    *ret = (int)v;
    return 0;
}

/* parseIntOrName: a name of the field (case-insensitive) or a number. */
static int cron_int_or_name(const char *s, size_t n, const struct cron_range *r, int *ret,
                            struct strbuf *err)
{
    for (size_t i = 0; r->names && r->names[i]; i++)
        if (strlen(r->names[i]) == n && !strncasecmp(s, r->names[i], n)) {
            *ret = r->min + (int)i;
            return 0;
        }
    return cron_int(s, n, ret, err);
}

/* getRange of one comma-separated part ("*", "1-5", "*\/10", "mon-fri"). */
static int cron_part(const char *expr, size_t n, const struct cron_range *r, struct strbuf *err)
{
    char e[256];
    const char *slash, *dash;
    int start, end, step = 1, rc;
    size_t lo_len;

    (void)snprintf(e, sizeof(e), "%.*s", (int)(n < 255 ? n : 255), expr);
    slash = strchr(e, '/');
    if (slash && strchr(slash + 1, '/')) {
        strbuf_addf(err, "too many slashes: %s", e);
        return -EINVAL;
    }
    lo_len = slash ? (size_t)(slash - e) : strlen(e);
    dash = memchr(e, '-', lo_len);
    if ((lo_len == 1 && (e[0] == '*' || e[0] == '?'))) {
        start = r->min;
        end = r->max;
    } else {
        if (dash && memchr(dash + 1, '-', lo_len - (size_t)(dash + 1 - e))) {
            strbuf_addf(err, "too many hyphens: %s", e);
            return -EINVAL;
        }
        if ((rc = cron_int_or_name(e, dash ? (size_t)(dash - e) : lo_len, r, &start, err)) < 0)
            return rc;
        end = start;
        if (dash &&
            (rc = cron_int_or_name(dash + 1, lo_len - (size_t)(dash + 1 - e), r, &end, err)) < 0)
            return rc;
    }
    if (slash) {
        if ((rc = cron_int(slash + 1, strlen(slash + 1), &step, err)) < 0)
            return rc;
        if (!dash && !(lo_len == 1 && (e[0] == '*' || e[0] == '?')))
            end = r->max;
    }
    if (start < r->min) {
        strbuf_addf(err, "beginning of range (%d) below minimum (%d): %s", start, r->min, e);
        return -EINVAL;
    }
    if (end > r->max) {
        strbuf_addf(err, "end of range (%d) above maximum (%d): %s", end, r->max, e);
        return -EINVAL;
    }
    if (start > end) {
        strbuf_addf(err, "beginning of range (%d) beyond end of range (%d): %s", start, end, e);
        return -EINVAL;
    }
    if (step == 0) {
        strbuf_addf(err, "step of range should be a positive number: %s", e);
        return -EINVAL;
    }
    return 0;
}

/* cron.ParseStandard: a descriptor (@hourly, @every <duration>...) or five fields. */
static int cron_parse(const char *spec, struct strbuf *err)
{
    static const char *const descriptors[] = {"@yearly", "@annually", "@monthly", "@weekly",
                                              "@daily",  "@midnight", "@hourly"};
    const char *f[6];
    size_t fl[6], nf = 0;
    const char *p = spec;

    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p) {
        strbuf_addstr(err, "empty spec string");
        return -EINVAL;
    }
    if (*p == '@') {
        int64_t ns;
        for (size_t i = 0; i < ARRAY_SIZE(descriptors); i++)
            if (!strcmp(p, descriptors[i]))
                return 0;
        if (!strncmp(p, "@every ", 7)) {
            if (duration_parse(p + 7, &ns) < 0) {
                strbuf_addf(err, "failed to parse duration %s: time: invalid duration \"%s\"", p,
                            p + 7);
                return -EINVAL;
            }
            return 0;
        }
        strbuf_addf(err, "unrecognized descriptor: %s", p);
        return -EINVAL;
    }
    while (*p) {
        size_t n = strcspn(p, " \t");
        if (n) {
            if (nf < ARRAY_SIZE(f)) {
                f[nf] = p;
                fl[nf] = n;
            }
            nf++;
        }
        p += n;
        p += strspn(p, " \t");
    }
    if (nf != 5) {
        strbuf_addf(err, "expected exactly 5 fields, found %zu: [", nf);
        for (size_t i = 0; i < nf && i < ARRAY_SIZE(f); i++)
            strbuf_addf(err, "%s%.*s", i ? " " : "", (int)fl[i], f[i]);
        strbuf_addch(err, ']');
        return -EINVAL;
    }
    for (size_t i = 0; i < 5; i++) {
        const char *q = f[i], *end = f[i] + fl[i];
        while (q <= end) {
            const char *comma = memchr(q, ',', (size_t)(end - q));
            size_t n = comma ? (size_t)(comma - q) : (size_t)(end - q);
            int rc = cron_part(q, n, &cron_fields[i], err);
            if (rc < 0)
                return rc;
            q += n + 1;
        }
    }
    return 0;
}

/* time.LoadLocation: a name of the zone database (no "..", no leading "/"). */
static bool known_time_zone(const char *tz)
{
    struct strbuf path = STRBUF_INIT;
    struct stat st;
    bool ok;

    if (!strcmp(tz, "UTC") || !strcmp(tz, "Local"))
        return true;
    if (*tz == '/' || strstr(tz, "..") || strlen(tz) > 255)
        return false;
    strbuf_addf(&path, "/usr/share/zoneinfo/%s", tz);
    ok = stat(path.buf, &st) == 0 && S_ISREG(st.st_mode);
    strbuf_release(&path);
    return ok;
}

static void check_cron_job_spec(const struct api_schema *s, const cJSON *spec, struct api_walk *w)
{
    const cJSON *sched = get(spec, "schedule"), *tz = get(spec, "timeZone");
    const cJSON *jt = get(spec, "jobTemplate"), *jspec = get(jt, "spec");
    (void)s;

    if (cJSON_IsString(sched) && !*sched->valuestring) {
        api_walk_error(w, "schedule", FIELD_REQUIRED, NULL, NULL);
    } else if (cJSON_IsString(sched)) {
        struct strbuf err = STRBUF_INIT;
        if (cron_parse(sched->valuestring, &err) < 0)
            api_walk_error(w, "schedule", FIELD_INVALID, sched, "%s", err.buf);
        if (strstr(sched->valuestring, "TZ"))
            api_walk_error(w, "schedule", FIELD_INVALID, sched,
                           "cannot use TZ or CRON_TZ in schedule, use timeZone field instead");
        strbuf_release(&err);
    }
    if (cJSON_IsString(tz)) {
        if (!*tz->valuestring)
            api_walk_error(w, "timeZone", FIELD_INVALID, tz,
                           "timeZone must be nil or non-empty string");
        else if (!known_time_zone(tz->valuestring))
            api_walk_error(w, "timeZone", FIELD_INVALID, tz, "unknown time zone %s",
                           tz->valuestring);
    }
    api_check_nonnegative(w, "startingDeadlineSeconds", get(spec, "startingDeadlineSeconds"));
    api_check_nonnegative(w, "successfulJobsHistoryLimit", get(spec, "successfulJobsHistoryLimit"));
    api_check_nonnegative(w, "failedJobsHistoryLimit", get(spec, "failedJobsHistoryLimit"));
    if (jspec) {
        /* ValidateJobTemplateSpec: the Job's rules; the selector is always generated. */
        size_t len = api_walk_push(w, "jobTemplate.spec", 0);
        check_job_spec_common(jspec, w);
        if (get(jspec, "selector")) {
            struct strbuf val = STRBUF_INIT;
            size_t l2 = api_walk_push(w, "selector", 0);
            api_go_label_selector(get(jspec, "selector"), &val);
            field_error_add(w->errs, FIELD_INVALID, w->path.buf, val.buf,
                            "`selector` will be auto-generated");
            api_walk_pop(w, l2);
            strbuf_release(&val);
        }
        if (manual_selector(jspec)) {
            size_t l2 = api_walk_push(w, "manualSelector", 0);
            field_error_add(w->errs, FIELD_NOT_SUPPORTED, w->path.buf, "true",
                            "supported values: \"nil\", \"false\"");
            api_walk_pop(w, l2);
        }
        api_walk_pop(w, len);
    }
}

/* ValidateCronJobCreate: the name leaves room for the Jobs' suffix (DNS-1035 label - 11). */
static void check_cron_job(const struct api_schema *s, const cJSON *o, struct api_walk *w)
{
    const cJSON *name = get(get(o, "metadata"), "name");
    (void)s;

    if (cJSON_IsString(name) && strlen(name->valuestring) > 52)
        api_walk_error(w, "metadata.name", FIELD_INVALID, name,
                       "must be no more than 52 characters");
}

static const struct api_prop job_template_props[] = {
    {"metadata", &api_object_meta, API_ALWAYS},
    {"spec", API_OBJ(job_spec_props), API_ALWAYS},
    {NULL},
};

static const struct api_prop cron_job_spec_props[] = {
    {"schedule", &api_string, API_REQ | API_ALWAYS},
    {"timeZone", &api_string},
    {"startingDeadlineSeconds", &api_int64},
    {"concurrencyPolicy", API_ENUM("Allow", "Forbid", "Replace"), API_VAL, "\"Allow\""},
    {"suspend", &api_bool, 0, "false"},
    {"jobTemplate", API_OBJ(job_template_props), API_REQ | API_ALWAYS},
    {"successfulJobsHistoryLimit", &api_int32, 0, "3"},
    {"failedJobsHistoryLimit", &api_int32, 0, "1"},
    {NULL},
};

static const struct api_prop cron_job_status_props[] = {
    {"active", API_ARR(&api_object_reference)},
    {"lastScheduleTime", &api_time},
    {"lastSuccessfulTime", &api_time},
    {NULL},
};

const struct api_kind api_kind_cron_job = {
    .group = "batch",
    .version = "v1",
    .kind = "CronJob",
    .plural = "cronjobs",
    .short_names = (const char *const[]){"cj", NULL},
    .namespaced = true,
    .status_subresource = true,
    .spec = &(const struct api_schema){.type = API_OBJECT,
                                       .props = cron_job_spec_props,
                                       .check = check_cron_job_spec},
    .status = API_OBJ(cron_job_status_props),
    .check = check_cron_job,
    .prepare_create = api_reset_status,
};
