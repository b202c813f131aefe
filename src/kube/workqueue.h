/*
 * The controller work queue, with client-go's semantics (util/workqueue queue.go,
 * delaying_queue.go, default_rate_limiters.go): keys ("namespace/name") are deduplicated while
 * waiting; a key being processed is never handed to a second worker; one added again while
 * processed is queued once more when done() is called; failed keys come back after a per-key
 * exponential backoff; shutdown lets the workers drain what is queued.
 *
 * The worker loop:
 *
 *     char *key;
 *     while (kube_workqueue_get(q, &key) == 0) {
 *         if (sync(key) == 0)
 *             kube_workqueue_forget(q, key);
 *         else
 *             kube_workqueue_add_rate_limited(q, key);
 *         kube_workqueue_done(q, key);
 *         free(key);
 *     }
 *
 * and, to stop, kube_workqueue_shutdown_drain(q) and join the workers.
 *
 * Thread safety: every call may run on any thread.
 */
#ifndef KOORD_KUBE_WORKQUEUE_H
#define KOORD_KUBE_WORKQUEUE_H

#include <stddef.h>

struct kube_workqueue_opts {
    long base_delay_ms; /* first retry delay of a key; 0 = 5 ms (client-go) */
    long max_delay_ms;  /* cap of the doubling; 0 = 1000 s (client-go) */
};

struct kube_workqueue;

/* opts may be NULL for the defaults. */
struct kube_workqueue *kube_workqueue_new(const struct kube_workqueue_opts *opts);

/* Frees the queue; call after kube_workqueue_shutdown() and after the workers returned. NULL
 * is fine. */
void kube_workqueue_free(struct kube_workqueue *q);

/* Queues key unless it is already waiting; ignored after shutdown. */
void kube_workqueue_add(struct kube_workqueue *q, const char *key);

/* Queues key after delay_ms (<= 0: now). Of several pending delays for one key the earliest
 * wins. Delayed keys not yet due at shutdown are dropped. */
void kube_workqueue_add_after(struct kube_workqueue *q, const char *key, long delay_ms);

/* add_after with the key's next backoff: base * 2^n, n the number of retries so far. */
void kube_workqueue_add_rate_limited(struct kube_workqueue *q, const char *key);

/* Resets the key's retry count (call when it synced fine). */
void kube_workqueue_forget(struct kube_workqueue *q, const char *key);

/* Retries recorded for key since its last forget. */
unsigned kube_workqueue_num_requeues(struct kube_workqueue *q, const char *key);

/*
 * Blocks until a key is ready and hands it to the caller (*ret_key: free() it), marking it
 * processing until kube_workqueue_done(). After shutdown it still returns the queued keys, then
 * -ESHUTDOWN.
 */
int kube_workqueue_get(struct kube_workqueue *q, char **ret_key);

/* Ends processing of key; if it was added meanwhile it is queued again. */
void kube_workqueue_done(struct kube_workqueue *q, const char *key);

/* Keys waiting (not processing, not delayed). */
size_t kube_workqueue_len(struct kube_workqueue *q);

/* Stops accepting keys and wakes every waiter; get() still hands out what is queued. Does not
 * wait. Idempotent. */
void kube_workqueue_shutdown(struct kube_workqueue *q);

/*
 * Shutdown, then waits until the queued keys were handed out and every processing key is done
 * (client-go ShutDownWithDrain). Workers must still be running, and it must not be called from
 * a worker that holds a key.
 */
void kube_workqueue_shutdown_drain(struct kube_workqueue *q);

#endif
