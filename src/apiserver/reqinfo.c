/*
 * Request info parsing after apiserver's requestinfo.go (see reqinfo.h): split the path into
 * segments, peel "api"/"apis", group and version, the namespace, then
 * resource/name/subresource; GET without a name is list or watch, DELETE without a name
 * deletecollection.
 */
#include "apiserver/reqinfo.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

#define MAX_SEGMENTS 64

static char *lower(const char *s)
{
    char *r = xstrdup(s);
    for (char *p = r; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return r;
}

/* `watch` is true for any value but "false" and "0" (reference 1.2). */
static bool watch_requested(const char *v)
{
    return v && strcmp(v, "false") != 0 && strcmp(v, "0") != 0;
}

/* The name a field selector pins with metadata.name=X or metadata.name==X, else NULL. */
static char *selector_name(const char *sel)
{
    const char *p = sel;

    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        static const char key[] = "metadata.name";
        size_t k = sizeof(key) - 1;

        if (n > k && !strncmp(p, key, k) && p[k] == '=') {
            size_t off = k + 1 + (p[k + 1] == '=');
            if (n > off && !memchr(p + off, '/', n - off) && !memchr(p + off, '%', n - off))
                return xstrndup(p + off, n - off);
        }
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

static const char *method_verb(const char *method)
{
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD"))
        return "get";
    if (!strcmp(method, "POST"))
        return "create";
    if (!strcmp(method, "PUT"))
        return "update";
    if (!strcmp(method, "PATCH"))
        return "patch";
    if (!strcmp(method, "DELETE"))
        return "delete";
    return "";
}

static void set_empty(struct api_reqinfo *ri)
{
    ri->api_prefix = xstrdup("");
    ri->group = xstrdup("");
    ri->version = xstrdup("");
    ri->namespace = xstrdup("");
    ri->resource = xstrdup("");
    ri->subresource = xstrdup("");
    ri->name = xstrdup("");
}

int api_reqinfo_parse(const char *method, const char *path, const char *query_watch,
                      const char *field_selector, struct api_reqinfo *ret)
{
    struct api_reqinfo ri = {0};
    const char *seg[MAX_SEGMENTS];
    size_t seglen[MAX_SEGMENTS], n = 0, i = 0;
    const char *p;
    char *verb;

    if (!path || path[0] != '/' || !method)
        return -EINVAL;
    if (strlen(path) > API_REQINFO_MAX_PATH)
        return -E2BIG;
    for (p = path; *p;) {
        const char *end;
        while (*p == '/')
            p++;
        if (!*p)
            break;
        end = strchr(p, '/');
        if (!end)
            end = p + strlen(p);
        if (n == MAX_SEGMENTS)
            return -E2BIG;
        seg[n] = p;
        seglen[n] = (size_t)(end - p);
        if ((seglen[n] == 1 && p[0] == '.') || (seglen[n] == 2 && !strncmp(p, "..", 2)))
            return -EINVAL;
        n++;
        p = end;
    }
    ri.path = xstrdup(path);
    /* Non-resource: not under /api or /apis, or shorter than a resource path. */
    if (n == 0 || !((seglen[0] == 3 && !strncmp(seg[0], "api", 3)) ||
                    (seglen[0] == 4 && !strncmp(seg[0], "apis", 4)))) {
        ri.verb = lower(method);
        set_empty(&ri);
        goto out;
    }
    ri.api_prefix = xstrndup(seg[0], seglen[0]);
    if (seglen[0] == 3) {
        if (n < 3)
            goto nonresource;
        ri.group = xstrdup("");
        ri.version = xstrndup(seg[1], seglen[1]);
        i = 2;
    } else {
        if (n < 4)
            goto nonresource;
        ri.group = xstrndup(seg[1], seglen[1]);
        ri.version = xstrndup(seg[2], seglen[2]);
        i = 3;
    }
    ri.is_resource = true;
    verb = xstrdup(method_verb(method));
    /* The deprecated /apis/g/v/watch/... form. */
    if (n - i >= 2 && seglen[i] == 5 && !strncmp(seg[i], "watch", 5) && !strcmp(verb, "get")) {
        free(verb);
        verb = xstrdup("watch");
        i++;
    }
    ri.verb = verb;
    if (seglen[i] == 10 && !strncmp(seg[i], "namespaces", 10) && n - i > 1) {
        ri.namespace = xstrndup(seg[i + 1], seglen[i + 1]);
        /* A further segment that is not a namespace subresource is a resource of its own. */
        if (n - i > 2 && !(seglen[i + 2] == 6 && !strncmp(seg[i + 2], "status", 6)) &&
            !(seglen[i + 2] == 8 && !strncmp(seg[i + 2], "finalize", 8)))
            i += 2;
    } else {
        ri.namespace = xstrdup("");
    }
    ri.resource = xstrndup(seg[i], seglen[i]);
    ri.name = n - i >= 2 ? xstrndup(seg[i + 1], seglen[i + 1]) : xstrdup("");
    ri.subresource = n - i >= 3 ? xstrndup(seg[i + 2], seglen[i + 2]) : xstrdup("");
    if (!*ri.name && !strcmp(ri.verb, "get")) {
        char *name = field_selector ? selector_name(field_selector) : NULL;
        free(ri.verb);
        ri.verb = xstrdup(watch_requested(query_watch) ? "watch" : "list");
        if (name) {
            free(ri.name);
            ri.name = name;
        }
    } else if (!*ri.name && !strcmp(ri.verb, "delete")) {
        free(ri.verb);
        ri.verb = xstrdup("deletecollection");
    }
    goto out;
nonresource:
    free(ri.api_prefix);
    ri.verb = lower(method);
    set_empty(&ri);
out:
    *ret = ri;
    return 0;
}

void api_reqinfo_release(struct api_reqinfo *ri)
{
    if (!ri)
        return;
    free(ri->verb);
    free(ri->path);
    free(ri->api_prefix);
    free(ri->group);
    free(ri->version);
    free(ri->namespace);
    free(ri->resource);
    free(ri->subresource);
    free(ri->name);
    *ri = (struct api_reqinfo){0};
}
