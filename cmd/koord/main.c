/* koord: one binary, subcommands (DESIGN.md section 2). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "cmd.h"
#include "codec/codec.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/config.h"

static const char usage[] =
    "usage: koord <command> [flags]\n"
    "\n"
    "Koordinator, the Kubernetes colocation system, in C.\n"
    "\n"
    "commands:\n"
    "  validate   decode, default and validate Kubernetes/Koordinator manifests\n"
    "  slo        render the NodeSLO of a node from slo-controller-config (slo render),\n"
    "             or run the ConfigMap admission checks (slo check)\n"
    "  crds       print or write the CustomResourceDefinitions of the Koordinator kinds\n"
    "  apiserver  serve a Kubernetes-compatible API on SQLite, for koord without a cluster\n"
    "  manager    koord-manager: NodeSLO and NodeResource controllers, the NodeMetric API\n"
    "  report     send a NodeMetric status for a node from a file, as the agent does\n"
    "  agent      the node agent: collects usage from /proc and cgroups, reports NodeMetrics\n"
    "  scheduler  koord-scheduler: places pending pods (gates, batch resources, preemption)\n"
    "  sim        replay a trace on a simulated fleet, colocation off and on, and report\n"
    "  version    print the version\n"
    "  help       print this help\n"
    "\n"
    "Run 'koord <command> -h' for the flags of a command.\n";

int cmd_read_docs(const char *path, cJSON ***ret_docs, size_t *ret_n)
{
    struct strbuf buf = STRBUF_INIT;
    struct codec_error err = {0};
    int r;

    r = codec_read_file(path, codec_default_limits.max_bytes, &buf);
    if (r < 0) {
        (void)fprintf(stderr, "koord: %s: %s\n", path, err_str(r));
        goto out;
    }
    r = yaml_parse_stream(buf.buf, buf.len, NULL, ret_docs, ret_n, &err);
    if (r < 0) {
        if (err.line)
            (void)fprintf(stderr, "koord: %s:%d:%d: %s\n", path, err.line, err.column, err.msg);
        else
            (void)fprintf(stderr, "koord: %s: %s\n", path, *err.msg ? err.msg : err_str(r));
    }
out:
    strbuf_release(&buf);
    return r;
}

int cmd_parse_listen(const char *cmd, const char *listen, struct strbuf *host, uint16_t *port)
{
    const char *colon = strrchr(listen, ':');
    uint32_t p;

    if (!colon || colon == listen || parse_u32(colon + 1, &p) < 0 || p > 65535) {
        (void)fprintf(stderr, "%s: --listen must be HOST:PORT, not \"%s\"\n", cmd, listen);
        return -EINVAL;
    }
    strbuf_add(host, listen, (size_t)(colon - listen));
    *port = (uint16_t)p;
    return 0;
}

int cmd_klog_v(const char *cmd, const char *v)
{
    uint32_t n;

    if (!v || parse_u32(v, &n) < 0 || n > 10) {
        (void)fprintf(stderr, "%s: --v must be a klog verbosity 0-10, not \"%s\"\n", cmd,
                      v ? v : "");
        return -EINVAL;
    }
    return log_set_level(n >= 5 ? "debug" : "info") < 0 ? -EINVAL : 0;
}

int cmd_ignored_bool(const char *cmd, const char *flag, const char *v)
{
    if (v && strcmp(v, "true") && strcmp(v, "false")) {
        (void)fprintf(stderr, "%s: --%s takes true or false, not \"%s\"\n", cmd, flag, v);
        return -EINVAL;
    }
    return 0;
}

int cmd_parse_conn_limit(const char *cmd, const char *flag, const char *value,
                         struct http_server_opts *o)
{
    uint32_t n;

    if (parse_u32(value, &n) < 0 || n > (1u << 24)) {
        (void)fprintf(stderr, "%s: --%s must be a count up to 16777216, not \"%s\"\n", cmd, flag,
                      value);
        return -EINVAL;
    }
    if (!strcmp(flag, "max-connections"))
        o->max_connections = n;
    else
        o->max_per_address = n;
    return 0;
}

int cmd_write_ready(const char *comp, const char *path, const char *host, unsigned port)
{
    FILE *f;
    int r = 0;

    if (!path)
        return 0;
    if (!(f = fopen(path, "we")))
        r = -errno;
    else if (fprintf(f, "%s:%u", host, port) < 0)
        r = -EIO;
    if (f && fclose(f) != 0 && r == 0)
        r = -errno;
    if (r < 0)
        log_error(comp, "cannot write ready file \"%s\": %s", path, err_str(r));
    return r;
}

int cmd_kube_config(const char *kubeconfig, struct kube_config **ret, struct strbuf *err)
{
    return kube_config_load(
        &(struct kube_config_sources){.kubeconfig = kubeconfig,
                                      .kubeconfig_env = getenv("KUBECONFIG"),
                                      .home = getenv("HOME"),
                                      .service_host = getenv("KUBERNETES_SERVICE_HOST"),
                                      .service_port = getenv("KUBERNETES_SERVICE_PORT")},
        ret, err);
}

int cmd_kube_client(const char *kubeconfig, const char *comp, const struct cmd_kube_override *o,
                    struct kube_client **ret)
{
    struct strbuf err = STRBUF_INIT;
    struct kube_config *cfg = NULL;
    int r = cmd_kube_config(kubeconfig, &cfg, &err);

    if (r < 0) {
        log_error(comp, "%s", err.len ? err.buf : err_str(r));
        strbuf_release(&err);
        return r;
    }
    strbuf_release(&err);
    if (o && o->server) {
        free(cfg->server);
        cfg->server = xstrdup(o->server);
    }
    if (o && o->ca_file) {
        free(cfg->ca_file);
        cfg->ca_file = xstrdup(o->ca_file);
    }
    if (o && o->timeout_ms)
        cfg->timeout_ms = o->timeout_ms;
    if ((r = kube_client_new(cfg, ret)) < 0) /* takes cfg, also on failure */
        log_error(comp, "cannot create the API client: %s", err_str(r));
    return r;
}

void cmd_block_stop_signals(sigset_t *sigs, int extra)
{
    (void)sigemptyset(sigs);
    (void)sigaddset(sigs, SIGINT);
    (void)sigaddset(sigs, SIGTERM);
    if (extra)
        (void)sigaddset(sigs, extra);
    (void)pthread_sigmask(SIG_BLOCK, sigs, NULL);
}

int cmd_print_doc(const cJSON *doc, const char *format)
{
    struct strbuf out = STRBUF_INIT;
    int r;

    if (!strcmp(format, "json")) {
        r = json_print_pretty(doc, &out);
        if (r == 0)
            strbuf_addch(&out, '\n');
    } else {
        r = yaml_emit(doc, &out);
    }
    if (r == 0)
        (void)fwrite(out.buf, 1, out.len, stdout);
    strbuf_release(&out);
    return r;
}

/* Bytes of freed JSON nodes and strings each server thread keeps for reuse: about one decoded
 * 110-pod NodeMetric. */
#define SERVER_JSON_CACHE ((size_t)1 << 20)

/*
 * A server holds a descriptor per connection: 10,000 agents and as many watches need far more
 * than the usual soft limit of 1024. The soft limit goes up to the hard one (the connection cap
 * follows it: http_server_opts.max_connections).
 */
static void raise_open_files(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "help";

    codec_init();
    if (!strcmp(cmd, "validate"))
        return cmd_validate(argc - 1, argv + 1);
    if (!strcmp(cmd, "slo"))
        return cmd_slo(argc - 1, argv + 1);
    if (!strcmp(cmd, "crds"))
        return cmd_crds(argc - 1, argv + 1);
    if (!strcmp(cmd, "apiserver") || !strcmp(cmd, "manager")) {
        int rc;

        raise_open_files();
        /* The servers decode and free thousands of JSON nodes a request (codec.h). */
        codec_alloc_cache(SERVER_JSON_CACHE);
        rc = cmd[0] == 'a' ? cmd_apiserver(argc - 1, argv + 1) : cmd_manager(argc - 1, argv + 1);
        codec_alloc_cache_release();
        return rc;
    }
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "agent"))
        return cmd_agent(argc - 1, argv + 1);
    if (!strcmp(cmd, "scheduler"))
        return cmd_scheduler(argc - 1, argv + 1);
    if (!strcmp(cmd, "sim")) {
        /* a connection per simulated node to the manager (three descriptors each with libcurl's
         * wake-up pair): past the hard limit when the process may, else up to it */
        struct rlimit rl = {.rlim_cur = 1u << 20, .rlim_max = 1u << 20};
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            raise_open_files();
        return cmd_sim(argc - 1, argv + 1);
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        (void)printf("koord version %s\n", KOORD_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        (void)fputs(usage, stdout);
        return 0;
    }
    (void)fprintf(stderr, "koord: unknown command \"%s\"\n\n%s", cmd, usage);
    return 2;
}
