/* Subcommands of the koord binary: flags and wiring only; the logic lives in src/. */
#ifndef KOORD_CMD_H
#define KOORD_CMD_H

#include <signal.h>
#include <stdint.h>

int cmd_validate(int argc, char **argv);
int cmd_slo(int argc, char **argv);
int cmd_crds(int argc, char **argv);
int cmd_apiserver(int argc, char **argv);
int cmd_manager(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_scheduler(int argc, char **argv);
int cmd_sim(int argc, char **argv);

/* Shared by the subcommands: reads FILE ("-" = stdin) as a YAML/JSON stream. 0, or prints
 * "koord: <path>[:line:col]: <why>" and returns a negative errno. */
struct cJSON;
int cmd_read_docs(const char *path, struct cJSON ***ret_docs, size_t *ret_n);

/* A --listen "HOST:PORT" (port 0-65535, 0 = any): host into *host, port into *port. 0, or
 * prints "<cmd>: --listen must be HOST:PORT, not ..." and returns -EINVAL. */
struct strbuf;
int cmd_parse_listen(const char *cmd, const char *listen, struct strbuf *host, uint16_t *port);

/*
 * --max-connections / --max-connections-per-address (a count, 0 = the default: no cap past the
 * open-file limit, 1024 per address) into the server's options. 0, or prints
 * "<cmd>: --FLAG must be ..." and returns -EINVAL.
 */
struct http_server_opts;
int cmd_parse_conn_limit(const char *cmd, const char *flag, const char *value,
                         struct http_server_opts *o);

/*
 * Flags upstream's manifests pass that koord takes with the same meaning or, where the flag
 * only tunes upstream's own libraries, accepts and ignores (docs/install.md lists which):
 *  - cmd_klog_v: klog's --v=N (0-10) as a log level: N <= 4 info (upstream's charts pass 4 by
 *    default), N >= 5 debug. 0, or prints "<cmd>: --v must be ..." and returns -EINVAL.
 *  - cmd_ignored_bool: an optional true/false value of an accepted-and-ignored switch
 *    (--logtostderr, --authentication-skip-lookup); 0, or prints why and returns -EINVAL.
 */
int cmd_klog_v(const char *cmd, const char *v);
int cmd_ignored_bool(const char *cmd, const char *flag, const char *v);

/* --ready-file: writes "HOST:PORT" to path (created or truncated). 0 (also for a NULL path), or
 * logs why under comp and returns -errno. */
int cmd_write_ready(const char *comp, const char *path, const char *host, unsigned port);

/* The API server configuration as every koord client finds it: --kubeconfig, else $KUBECONFIG,
 * in-cluster, ~/.kube/config (kube/config.h). 0, or -errno with err naming what is wrong. */
struct kube_config;
struct strbuf;
int cmd_kube_config(const char *kubeconfig, struct kube_config **ret, struct strbuf *err);

/* What a client changes of the kubeconfig it was given (NULL or 0: keep it). */
struct cmd_kube_override {
    const char *server;  /* another server, with the same credentials */
    const char *ca_file; /* and its CA */
    long timeout_ms;
};

/* A client for the API server of cmd_kube_config(), with o applied (o may be NULL). 0, or logs
 * why under comp and returns a negative errno. */
struct kube_client;
int cmd_kube_client(const char *kubeconfig, const char *comp, const struct cmd_kube_override *o,
                    struct kube_client **ret);

/* Blocks SIGINT, SIGTERM and extra (0: none) in this thread, before any other starts, so that
 * sigwait(sigs) receives them. */
void cmd_block_stop_signals(sigset_t *sigs, int extra);

/* Prints one document as YAML ("yaml") or indented JSON ("json") to stdout. */
int cmd_print_doc(const struct cJSON *doc, const char *format);

#endif
