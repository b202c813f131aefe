/*
 * events.k8s.io/v1 Event (pkg/apis/core/validation/events.go for that version, kubernetes
 * 1.33). kube-apiserver keeps one storage for core/v1 and events.k8s.io/v1 Events and converts
 * between them; koord apiserver stores the two groups apart (docs/apiserver.md).
 */
#include <string.h>

#include "api/api.h"
#include "api/labels.h"
#include "base/base.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
    return cJSON_IsNull(c) ? NULL : c;
}

static const struct api_schema micro_time = {.type = API_STRING, .format = "date-time"};

static const struct api_prop series_props[] = {
    {"count", &api_int32, API_ALWAYS},
    {"lastObservedTime", &micro_time, API_ALWAYS},
    {NULL},
};

static const struct api_prop source_props[] = {
    {"component", &api_string, API_VAL},
    {"host", &api_string, API_VAL},
    {NULL},
};

/* A required string member at most max bytes long ("" counts as absent). */
static void required_short(const cJSON *o, const char *key, size_t max, struct api_walk *w)
{
    const cJSON *v = get(o, key);

    if (!cJSON_IsString(v) || !*v->valuestring)
        api_walk_error(w, key, FIELD_REQUIRED, NULL, NULL);
    else if (strlen(v->valuestring) > max)
        api_walk_error(w, key, FIELD_INVALID, v, "can have at most %zu characters", max);
}

/* ValidateEventCreate for events.k8s.io/v1. */
static void check_event(const struct api_schema *s, const cJSON *o, struct api_walk *w)
{
    const cJSON *type = get(o, "type"), *rc = get(o, "reportingController");
    const cJSON *note = get(o, "note"), *series = get(o, "series");
    (void)s;

    if (!cJSON_IsString(get(o, "eventTime")) || !*get(o, "eventTime")->valuestring)
        api_walk_error(w, "eventTime", FIELD_REQUIRED, NULL, NULL);
    if (!cJSON_IsString(type) ||
        (strcmp(type->valuestring, "Normal") && strcmp(type->valuestring, "Warning"))) {
        cJSON *empty = cJSON_CreateString("");
        api_walk_error(w, "type", FIELD_INVALID, empty, "has invalid value: %s",
                       cJSON_IsString(type) ? type->valuestring : "");
        cJSON_Delete(empty);
    }
    if (!cJSON_IsString(rc) || !*rc->valuestring) {
        api_walk_error(w, "reportingController", FIELD_REQUIRED, NULL, NULL);
    } else {
        struct strbuf why = STRBUF_INIT;
        if (labels_check_qualified_name(rc->valuestring, &why) < 0)
            api_walk_error(w, "reportingController", FIELD_INVALID, rc, "%s", why.buf);
        strbuf_release(&why);
    }
    required_short(o, "reportingInstance", 128, w);
    required_short(o, "action", 128, w);
    required_short(o, "reason", 128, w);
    if (cJSON_IsString(note) && strlen(note->valuestring) > 1024) {
        cJSON *empty = cJSON_CreateString("");
        api_walk_error(w, "note", FIELD_INVALID, empty, "can have at most 1024 characters");
        cJSON_Delete(empty);
    }
    if (series) {
        const cJSON *count = get(series, "count");
        if (cJSON_IsNumber(count) && count->valuedouble < 2)
            api_walk_error(w, "series.count", FIELD_INVALID, count, "should be at least 2");
        if (!get(series, "lastObservedTime"))
            api_walk_error(w, "series.lastObservedTime", FIELD_REQUIRED, NULL, NULL);
    }
}

static const struct api_prop event_props[] = {
    {"eventTime", &micro_time, API_ALWAYS},
    {"series", API_OBJ(series_props)},
    {"reportingController", &api_string, API_VAL},
    {"reportingInstance", &api_string, API_VAL},
    {"action", &api_string, API_VAL},
    {"reason", &api_string, API_VAL},
    {"regarding", &api_object_reference, API_ALWAYS},
    {"related", &api_object_reference},
    {"note", &api_string, API_VAL},
    {"type", &api_string, API_VAL},
    {"deprecatedSource", API_OBJ(source_props)},
    {"deprecatedFirstTimestamp", &api_time},
    {"deprecatedLastTimestamp", &api_time},
    {"deprecatedCount", &api_int32, API_VAL},
    {NULL},
};

const struct api_kind api_kind_events_event = {
    .group = "events.k8s.io",
    .version = "v1",
    .kind = "Event",
    .plural = "events",
    .short_names = (const char *const[]){"ev", NULL},
    .namespaced = true,
    .extra = event_props,
    .check = check_event,
};
