/* koord slo render|check: the SLO configuration engine on the command line. */
#include "slo/slo.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/field.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "cmd.h"
#include "codec/codec.h"

static const char usage[] =
    "usage: koord slo render --config CONFIGMAP --node NODE [-o yaml|json]\n"
    "       koord slo check --config CONFIGMAP [--nodes NODES] [--node-strategy-name-need-check]\n"
    "\n"
    "render  prints the NodeSLO object koord-manager writes for the node: the ConfigMap's\n"
    "        strategies, the first node entry whose nodeSelector matches the node's labels,\n"
    "        and the node's network-bandwidth annotation. Keys that fail to decode keep their\n"
    "        defaults and are reported on stderr, as the manager reports them as Events.\n"
    "check   runs the checks of the slo-controller-config admission webhook (value ranges,\n"
    "        paired thresholds, node selectors, overlapping node entries).\n"
    "\n"
    "  --config FILE   the slo-controller-config ConfigMap, YAML or JSON (- for stdin)\n"
    "  --node FILE     the Node object, YAML or JSON\n"
    "  --nodes FILE    check: Node objects (a YAML stream or a v1 List); rejects a config under\n"
    "                  which one node matches two node entries of a key\n"
    "  -o FORMAT       yaml (default) or json\n"
    "  --node-strategy-name-need-check  require unique non-empty names in node entries\n"
    "\n"
    "Exit status: 0 success, 1 check failed, 2 unreadable or malformed input.\n";

/* Reads one object of the given kind from path; prints why not and returns NULL. */
static cJSON *read_one(const char *path, const char *kind)
{
    cJSON **docs = NULL, *doc = NULL;
    size_t n = 0;
    const cJSON *k;

    if (cmd_read_docs(path, &docs, &n) < 0)
        return NULL;
    if (n != 1) {
        (void)fprintf(stderr, "koord slo: %s: expected exactly one %s object, found %zu\n", path,
                      kind, n);
        codec_docs_free(docs, n);
        return NULL;
    }
    k = cJSON_GetObjectItemCaseSensitive(docs[0], "kind");
    if (!cJSON_IsString(k) || strcmp(k->valuestring, kind)) {
        (void)fprintf(stderr, "koord slo: %s: expected a %s, found %s\n", path, kind,
                      cJSON_IsString(k) ? k->valuestring : "an object without kind");
        codec_docs_free(docs, n);
        return NULL;
    }
    doc = docs[0];
    docs[0] = NULL;
    codec_docs_free(docs, n);
    return doc;
}

int cmd_slo(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"node", required_argument, NULL, 'n'},
        {"nodes", required_argument, NULL, 'L'},
        {"output", required_argument, NULL, 'o'},
        {"node-strategy-name-need-check", no_argument, NULL, 'N'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL, *node_path = NULL, *nodes_path = NULL, *format = "yaml", *sub;
    cJSON **nodes = NULL;
    size_t nnodes = 0;
    bool need_names = false;
    cJSON *cm = NULL, *node = NULL, *out = NULL;
    struct slo_config *cfg = NULL;
    struct slo_events ev = {0};
    int c, rc = 2;

    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        (void)fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    sub = argv[1];
    if (strcmp(sub, "render") && strcmp(sub, "check")) {
        (void)fprintf(stderr, "koord slo: unknown command \"%s\"\n\n%s", sub, usage);
        return 2;
    }
    optind = 1;
    while ((c = getopt_long(argc - 1, argv + 1, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            config = optarg;
            break;
        case 'n':
            node_path = optarg;
            break;
        case 'N':
            need_names = true;
            break;
        case 'L':
            nodes_path = optarg;
            break;
        case 'o':
            if (strcmp(optarg, "yaml") && strcmp(optarg, "json")) {
                (void)fprintf(stderr, "koord slo: -o must be yaml or json, not \"%s\"\n", optarg);
                return 2;
            }
            format = optarg;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            return 0;
        default:
            (void)fputs(usage, stderr);
            return 2;
        }
    }
    if (!config || (!strcmp(sub, "render") && !node_path)) {
        (void)fprintf(stderr, "koord slo %s: --config%s is required\n\n%s", sub,
                      strcmp(sub, "render") ? "" : " and --node are", usage);
        return 2;
    }
    cm = read_one(config, "ConfigMap");
    if (!cm)
        goto out;
    if (!strcmp(sub, "check")) {
        struct field_errors errs = FIELD_ERRORS_INIT;
        struct strbuf line = STRBUF_INIT;
        size_t n;

        if (nodes_path && cmd_read_docs(nodes_path, &nodes, &nnodes) < 0)
            goto out;
        {
            /* `kubectl get nodes -o yaml` writes one List; a stream holds Nodes directly. */
            const cJSON *items =
                nnodes == 1 ? cJSON_GetObjectItemCaseSensitive(nodes[0], "items") : NULL;
            const cJSON **list = NULL, *it;
            size_t nl = 0;
            if (cJSON_IsArray(items)) {
                list = xcalloc((size_t)cJSON_GetArraySize(items) + 1, sizeof(const cJSON *));
                cJSON_ArrayForEach(it, items) list[nl++] = it;
            }
            n = slo_config_validate(cJSON_GetObjectItemCaseSensitive(cm, "data"),
                                    list ? list : (const cJSON *const *)nodes, list ? nl : nnodes,
                                    need_names, &errs);
            free(list);
        }
        for (size_t i = 0; i < errs.n; i++) {
            strbuf_reset(&line);
            field_error_format(&errs.v[i], &line);
            (void)printf("%s\n", line.buf);
        }
        if (!n) {
            const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(cm, "metadata"), "name"));
            (void)printf("ok ConfigMap/%s\n", name ? name : "");
        }
        strbuf_release(&line);
        field_errors_release(&errs);
        rc = n ? 1 : 0;
        goto out;
    }
    node = read_one(node_path, "Node");
    if (!node)
        goto out;
    cfg = slo_config_new();
    if (slo_config_update(cfg, cJSON_GetObjectItemCaseSensitive(cm, "data"), &ev, NULL) < 0 ||
        slo_render_nodeslo(cfg, node, &out) < 0) {
        (void)fprintf(stderr, "koord slo: out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < ev.n; i++)
        (void)fprintf(stderr, "warning: %s: %s%s%s%s\n", ev.v[i].key, ev.v[i].message,
                      ev.v[i].reason ? " (" : "", ev.v[i].reason ? ev.v[i].reason : "",
                      ev.v[i].reason ? ")" : "");
    rc = cmd_print_doc(out, format) < 0 ? 2 : 0;
out:
    slo_events_release(&ev);
    slo_config_free(cfg);
    cJSON_Delete(out);
    cJSON_Delete(node);
    cJSON_Delete(cm);
    codec_docs_free(nodes, nnodes);
    return rc;
}
