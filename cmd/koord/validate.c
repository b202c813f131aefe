/* koord validate: decode, default and validate manifests (api_object_validate). */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "cmd.h"
#include "codec/codec.h"

static const char usage[] =
    "usage: koord validate -f FILE|DIR|- [-f ...] [--strict] [--defaults crd|all] [-o text|json]\n"
    "\n"
    "Decodes every object in the YAML/JSON files (multi-document streams; directories are\n"
    "walked recursively for *.yaml, *.yml and *.json), validates it against the Koordinator\n"
    "and Kubernetes rules, and applies defaults.\n"
    "\n"
    "  -f, --filename PATH   file, directory or - for stdin (repeatable)\n"
    "      --strict          unknown fields are errors instead of warnings\n"
    "      --defaults WHICH  crd: the CRD defaults the API server applies (default);\n"
    "                        all: also the defaults controllers and node agents assume\n"
    "  -o, --output FORMAT   text (one line per object or error) or json (a report with the\n"
    "                        defaulted objects)\n"
    "\n"
    "Exit status: 0 all objects valid, 1 some object invalid, 2 unreadable input.\n";

struct opts {
    unsigned vflags;
    unsigned dflags;
    bool json;
    int invalid;
    int unreadable;
    cJSON *report;
};

static bool has_manifest_ext(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml") || !strcmp(dot, ".json"));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void validate_doc(struct opts *o, const char *path, size_t idx, cJSON *doc)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    const struct api_kind *k = NULL;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(doc, "kind");
    struct strbuf id = STRBUF_INIT, line = STRBUF_INIT;
    size_t nerr = api_object_validate(doc, o->vflags, &k, &errs);

    strbuf_addf(&id, "%s/%s", cJSON_IsString(kind) ? kind->valuestring : "<unknown>",
                cJSON_IsString(name) ? name->valuestring : "<unnamed>");
    if (nerr == 0 && k && api_object_default(k, doc, o->dflags) < 0) {
        (void)fprintf(stderr, "koord: out of memory\n");
        exit(2);
    }
    if (nerr)
        o->invalid++;
    if (!o->json) {
        for (size_t i = 0; i < errs.n; i++) {
            strbuf_reset(&line);
            field_error_format(&errs.v[i], &line);
            (void)printf("%s: %s: %s%s\n", path, id.buf,
                         errs.v[i].type == FIELD_WARNING ? "warning: " : "", line.buf);
        }
        if (!nerr)
            (void)printf("ok %s\n", id.buf);
    } else {
        cJSON *e = cJSON_CreateObject(), *list = cJSON_CreateArray(), *warn = cJSON_CreateArray();
        CHECK(e && list && warn);
        (void)cJSON_AddStringToObject(e, "file", path);
        (void)cJSON_AddNumberToObject(e, "document", (double)idx);
        (void)cJSON_AddStringToObject(e, "object", id.buf);
        (void)cJSON_AddBoolToObject(e, "valid", nerr == 0);
        for (size_t i = 0; i < errs.n; i++) {
            strbuf_reset(&line);
            field_error_format(&errs.v[i], &line);
            (void)cJSON_AddItemToArray(errs.v[i].type == FIELD_WARNING ? warn : list,
                                       cJSON_CreateString(line.buf));
        }
        (void)cJSON_AddItemToObject(e, "errors", list);
        (void)cJSON_AddItemToObject(e, "warnings", warn);
        if (!nerr)
            (void)cJSON_AddItemToObject(e, "defaulted", cJSON_Duplicate(doc, true));
        (void)cJSON_AddItemToArray(o->report, e);
    }
    strbuf_release(&id);
    strbuf_release(&line);
    field_errors_release(&errs);
}

static void validate_file(struct opts *o, const char *path)
{
    cJSON **docs = NULL;
    size_t n = 0;

    if (cmd_read_docs(path, &docs, &n) < 0) {
        o->unreadable++;
        return;
    }
    for (size_t i = 0; i < n; i++)
        validate_doc(o, path, i, docs[i]);
    codec_docs_free(docs, n);
}

static void validate_path(struct opts *o, const char *path, int depth)
{
    struct stat st;
    DIR *d;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;

    if (!strcmp(path, "-") || (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))) {
        validate_file(o, path);
        return;
    }
    if (depth > 32 || !(d = opendir(path))) {
        (void)fprintf(stderr, "koord: %s: %s\n", path, depth > 32 ? "too deep" : err_str(errno));
        o->unreadable++;
        return;
    }
    while ((de = readdir(d))) {
        struct strbuf p = STRBUF_INIT;
        if (de->d_name[0] == '.')
            continue;
        strbuf_addf(&p, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", de->d_name);
        if (stat(p.buf, &st) == 0 && (S_ISDIR(st.st_mode) || has_manifest_ext(de->d_name))) {
            names = xrealloc(names, (n + 1) * sizeof(*names));
            names[n++] = strbuf_detach(&p, NULL);
        } else {
            strbuf_release(&p);
        }
    }
    (void)closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        validate_path(o, names[i], depth + 1);
        free(names[i]);
    }
    free(names);
}

int cmd_validate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"filename", required_argument, NULL, 'f'}, {"strict", no_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},   {"defaults", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    struct opts o = {0};
    const char **paths = NULL;
    size_t npaths = 0;
    int c, rc;

    while ((c = getopt_long(argc, argv, "f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            paths = xrealloc(paths, (npaths + 1) * sizeof(*paths));
            paths[npaths++] = optarg;
            break;
        case 's':
            o.vflags |= API_V_STRICT;
            break;
        case 'o':
            if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
                (void)fprintf(stderr, "koord validate: -o must be text or json, not \"%s\"\n",
                              optarg);
                free(paths);
                return 2;
            }
            o.json = !strcmp(optarg, "json");
            break;
        case 'd':
            if (strcmp(optarg, "crd") && strcmp(optarg, "all")) {
                (void)fprintf(stderr, "koord validate: --defaults must be crd or all, not \"%s\"\n",
                              optarg);
                free(paths);
                return 2;
            }
            o.dflags = !strcmp(optarg, "all") ? API_D_CTRL : 0;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            free(paths);
            return 0;
        default:
            (void)fputs(usage, stderr);
            free(paths);
            return 2;
        }
    }
    if (!npaths || optind < argc) {
        (void)fprintf(stderr, "koord validate: %s\n\n%s",
                      npaths ? "unexpected argument" : "-f is required", usage);
        free(paths);
        return 2;
    }
    if (o.json)
        o.report = cJSON_CreateArray();
    for (size_t i = 0; i < npaths; i++)
        validate_path(&o, paths[i], 0);
    if (o.json) {
        (void)cmd_print_doc(o.report, "json");
        cJSON_Delete(o.report);
    }
    free(paths);
    rc = o.unreadable ? 2 : o.invalid ? 1 : 0;
    return rc;
}
