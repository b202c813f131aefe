/*
 * The standalone API server's certificates and the admin kubeconfig: on first start a CA, a
 * serving certificate for 127.0.0.1/localhost/the host name and an admin client certificate
 * (CN=admin, O=system:masters) are generated into <data-dir>/pki and reused afterwards, so
 * kubectl configured once keeps working across restarts. For the aggregation layer (reference
 * kubernetes-api.md 6.2-6.3) also a front-proxy CA (the request-header CA extension servers
 * trust) and the front-proxy client certificate signed by it (CN=front-proxy-client), which
 * the server presents when it proxies a request; file names as kubeadm's.
 */
#ifndef KOORD_APISERVER_PKI_H
#define KOORD_APISERVER_PKI_H

#include "http/tls.h"

struct apiserver_pki {
    struct tls_pem ca;
    struct tls_pem serving;
    struct tls_pem admin;
    struct tls_pem front_proxy_ca;
    struct tls_pem front_proxy_client;
};

/* Loads <dir>/{ca,apiserver,admin,front-proxy-ca,front-proxy-client}.{crt,key}, generating
 * what is missing (files 0600). 0, -errno from the file system, -ENOMEM, -EIO. */
int apiserver_pki_load(const char *dir, struct apiserver_pki *ret);
void apiserver_pki_release(struct apiserver_pki *p);

/*
 * A serving certificate of another koord server (the manager's NodeMetric API): <dir>/<name>.crt
 * and .key for localhost/127.0.0.1/::1/the host name and the DNS names of dns_names
 * (NULL-terminated, may be NULL: e.g. the <service>.<namespace>.svc name an aggregating API
 * server verifies), signed by its own CA <dir>/<name>-ca.crt (what an APIService's caBundle and
 * a client's CA file carry). Generated on first use, and again when the stored one lacks a
 * name. 0, -EINVAL (too many names, or a bad one), -errno, -ENOMEM, -EIO.
 */
int apiserver_pki_serving(const char *dir, const char *name, const char *const *dns_names,
                          struct tls_pem *ret_ca, struct tls_pem *ret_serving);

/* Writes a kubeconfig for server (e.g. "https://127.0.0.1:6443") with the CA and the admin
 * client certificate embedded; mode 0600, replaced atomically. 0 or -errno. */
int apiserver_write_kubeconfig(const char *path, const char *server,
                               const struct apiserver_pki *pki);

#endif
