/*
 * koord report: sends one NodeMetric status for a node, from a JSON or YAML file, the way the
 * node agent does (PUT .../nodemetrics/<node>/status), so the manager can be driven before or
 * without a real agent (tests, demos, what-if studies).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "cmd.h"
#include "codec/codec.h"
#include "kube/client.h"
#include "kube/config.h"

static const char usage[] =
    "usage: koord report --node NAME -f FILE [--kubeconfig FILE] [--server URL]\n"
    "                    [--certificate-authority FILE] [--crd] [--keep-update-time]\n"
    "\n"
    "Sends the NodeMetric status in FILE (a NodeMetric object, or just its status; JSON or\n"
    "YAML, '-' for stdin) for node NAME, as koord agent does: PUT\n"
    "/apis/metrics.koordinator.sh/v1alpha1/nodemetrics/NAME/status.\n"
    "\n"
    "  --node NAME                  the node (and NodeMetric) name\n"
    "  -f, --file FILE              the status to send\n"
    "  --kubeconfig FILE            credentials and server (default $KUBECONFIG, in-cluster,\n"
    "                               ~/.kube/config)\n"
    "  --server URL                 send here instead (e.g. straight to the manager)\n"
    "  --certificate-authority FILE verify --server with this CA\n"
    "  --crd                        write the slo.koordinator.sh NodeMetric CRD instead (what\n"
    "                               upstream's koordlet does)\n"
    "  --keep-update-time           send status.updateTime as given (default: now)\n"
    "\n"
    "Exit 0 when the write was accepted, 1 when it was refused (the API's message is printed),\n"
    "2 for bad flags or an unreadable file.\n";

static const struct kube_resource res_crd_nodemetrics = {"slo.koordinator.sh", "v1alpha1",
                                                         "nodemetrics", "NodeMetric", false};

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"node", required_argument, NULL, 'n'},
        {"file", required_argument, NULL, 'f'},
        {"kubeconfig", required_argument, NULL, 'k'},
        {"server", required_argument, NULL, 's'},
        {"certificate-authority", required_argument, NULL, 'c'},
        {"crd", no_argument, NULL, 'C'},
        {"keep-update-time", no_argument, NULL, 'K'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *node = NULL, *file = NULL, *kubeconfig = NULL, *server = NULL, *ca = NULL;
    const struct kube_resource *res = &kube_res_nodemetrics;
    bool keep_time = false;
    struct strbuf err = STRBUF_INIT;
    struct kube_config *cfg = NULL;
    struct kube_client *client = NULL;
    struct kube_status st = {0};
    cJSON **docs = NULL, *obj = NULL, *status, *meta;
    size_t ndocs = 0;
    char now[RFC3339_STR_MAX];
    int c, r, rc = 2;

    while ((c = getopt_long(argc, argv, "hf:", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            node = optarg;
            break;
        case 'f':
            file = optarg;
            break;
        case 'k':
            kubeconfig = optarg;
            break;
        case 's':
            server = optarg;
            break;
        case 'c':
            ca = optarg;
            break;
        case 'C':
            res = &res_crd_nodemetrics;
            break;
        case 'K':
            keep_time = true;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            return 0;
        default:
            (void)fputs(usage, stderr);
            return 2;
        }
    }
    if (!node || !file) {
        (void)fputs("koord report: --node and -f are required\n", stderr);
        return 2;
    }
    if (cmd_read_docs(file, &docs, &ndocs) < 0)
        return 2;
    if (ndocs != 1 || !cJSON_IsObject(docs[0])) {
        (void)fprintf(stderr, "koord report: %s: want one object\n", file);
        goto out;
    }
    status = cJSON_GetObjectItemCaseSensitive(docs[0], "status");
    if (!status)
        status = docs[0]; /* the file is the status itself */
    CHECK(obj = cJSON_CreateObject());
    CHECK(cJSON_AddStringToObject(obj, "apiVersion",
                                  res == &kube_res_nodemetrics ? "metrics.koordinator.sh/v1alpha1"
                                                               : "slo.koordinator.sh/v1alpha1"));
    CHECK(cJSON_AddStringToObject(obj, "kind", "NodeMetric"));
    CHECK(meta = cJSON_AddObjectToObject(obj, "metadata"));
    CHECK(cJSON_AddStringToObject(meta, "name", node));
    status = cJSON_Duplicate(status, true);
    CHECK(status);
    CHECK(cJSON_AddItemToObject(obj, "status", status));
    if (!keep_time) {
        (void)rfc3339_format((int64_t)time(NULL), now);
        cJSON_DeleteItemFromObjectCaseSensitive(status, "updateTime");
        CHECK(cJSON_AddStringToObject(status, "updateTime", now));
    }
    r = cmd_kube_config(kubeconfig, &cfg, &err);
    if (r < 0) {
        (void)fprintf(stderr, "koord report: %s\n", err.len ? err.buf : err_str(r));
        goto out;
    }
    if (server) {
        free(cfg->server);
        cfg->server = xstrdup(server);
    }
    if (ca) {
        free(cfg->ca_file);
        cfg->ca_file = xstrdup(ca);
    }
    if ((r = kube_client_new(cfg, &client)) < 0) {
        cfg = NULL;
        (void)fprintf(stderr, "koord report: %s\n", err_str(r));
        goto out;
    }
    cfg = NULL;
    /* A status write needs no resourceVersion: unconditional, as the agent sends it. */
    r = kube_update(client, res, NULL, obj, "status", NULL, &st);
    if (r < 0) {
        (void)fprintf(stderr, "koord report: node \"%s\": %s\n", node,
                      *st.message ? st.message : err_str(r));
        rc = st.code ? 1 : 2;
        goto out;
    }
    (void)printf("nodemetric/%s status sent\n", node);
    rc = 0;
out:
    kube_client_free(client);
    kube_config_free(cfg);
    cJSON_Delete(obj);
    for (size_t i = 0; i < ndocs; i++)
        cJSON_Delete(docs[i]);
    free(docs);
    strbuf_release(&err);
    return rc;
}
