/*
 * The `default` ServiceAccount every namespace has, as kube-controller-manager's ServiceAccount
 * controller creates it (pkg/controller/serviceaccount/serviceaccounts_controller.go): koord
 * apiserver runs no controller manager, so the server creates it itself, for the namespaces
 * that exist when service-account tokens are turned on and for every namespace created later.
 * A namespace being deleted gets none; one deleted by hand comes back on the next namespace
 * write, as the controller recreates it.
 */
#ifndef KOORD_APISERVER_SERVICEACCOUNTS_H
#define KOORD_APISERVER_SERVICEACCOUNTS_H

struct store;

/* Creates default ServiceAccounts that are missing in active namespaces. now is their
 * creationTimestamp, new_uid makes their uids. Returns how many were created, or -errno of the
 * store. */
int api_serviceaccounts_ensure_defaults(struct store *store, const char *now,
                                        void (*new_uid)(char uid[37]));

#endif
