/*
 * Reaching a Service from inside the API server, shared by the aggregation layer
 * (aggregator.h) and the admission webhooks (webhook.h). There is no kube-proxy here, so a
 * Service is resolved the way kube-apiserver does with --enable-aggregator-routing=true
 * (staging/src/k8s.io/apiserver/pkg/util/proxy ResolveEndpoint): the Service's port whose
 * `port` is the one asked for, then a random ready address of its Endpoints object carrying a
 * port of the same name (ExternalName services: spec.externalName and the port asked for).
 * The cluster IP is never used: nothing routes it. TLS still checks the name
 * <service>.<namespace>.svc (the caller connects with http_client_req.connect_to).
 *
 * Thread safety: both functions may be called from any thread.
 */
#ifndef KOORD_APISERVER_SVCREF_H
#define KOORD_APISERVER_SVCREF_H

#include "base/strbuf.h"

struct store;

/* Why a Service did not resolve, for callers that word it their own way. */
enum svcref_fail {
    SVCREF_OK,
    SVCREF_NO_SERVICE,   /* no Service object */
    SVCREF_NO_PORT,      /* the Service has no port `port` */
    SVCREF_NO_ENDPOINTS, /* no Endpoints object */
    SVCREF_NO_ADDRESSES, /* no ready address with a port of the Service port's name */
};

/*
 * Resolves ns/name:port through store: SVCREF_OK with the address appended to host and its
 * port in *ret_port; otherwise the reason (port_name, when not NULL, gets the Service port's
 * name for SVCREF_NO_ADDRESSES messages).
 */
enum svcref_fail svcref_resolve(struct store *store, const char *ns, const char *name, int port,
                                struct strbuf *host, int *ret_port, struct strbuf *port_name);

/*
 * Writes a caBundle (base64 PEM, line breaks allowed) decoded to dir/<stem>.<seq>.crt, mode
 * 0600: the file name (free it; unlink it when done), or NULL with why (what, e.g.
 * "spec.caBundle", names the field in messages).
 */
char *svcref_write_ca(const char *dir, const char *stem, unsigned seq, const char *b64,
                      const char *what, struct strbuf *why);

/* "host:port" with an IPv6 host in brackets. */
void svcref_add_host_port(struct strbuf *out, const char *host, int port);

#endif
