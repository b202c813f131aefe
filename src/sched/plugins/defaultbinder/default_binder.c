/*
 * DefaultBinder (kube-scheduler plugins/defaultbinder/default_binder.go, reference scheduler.md
 * 2.4): binds a pod by POSTing a v1 Binding to pods/<name>/binding. The pod's UID goes into the
 * Binding's metadata, where the apiserver checks it as a precondition, so a pod deleted and
 * re-created under the same name is never bound by a stale decision. The apiserver sets
 * PodScheduled=True; the scheduler writes nothing else.
 */
#include "base/base.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

/* The instance is the framework handle itself (borrowed; it outlives the profile's plugins). */
static int binder_init(const cJSON *args, const char *path, struct sched_handle *h, void **ret_self,
                       struct field_errors *errs)
{
    (void)args;
    (void)path;
    (void)errs;
    *ret_self = h;
    return 0;
}

/* The Binding object's JSON text into out; strings escaped, nothing peer-sized to bound. */
static void binding_body(const struct sched_pod *pod, const char *node, struct strbuf *out)
{
    strbuf_addstr(out, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"namespace\":");
    strbuf_add_json_str(out, pod->namespace);
    strbuf_addstr(out, ",\"name\":");
    strbuf_add_json_str(out, pod->name);
    strbuf_addstr(out, ",\"uid\":");
    strbuf_add_json_str(out, pod->uid);
    strbuf_addstr(out, "},\"target\":{\"kind\":\"Node\",\"name\":");
    strbuf_add_json_str(out, node);
    strbuf_addstr(out, "}}");
}

static enum sched_code binder_bind(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                   const char *node, struct sched_status *st)
{
    struct kube_client *c = self ? sched_handle_client(self) : NULL;
    struct kube_status ks = {0};
    struct strbuf path = STRBUF_INIT, body = STRBUF_INIT;
    int r;

    (void)cs;
    if (!c)
        return sched_status_set(st, SCHED_ERROR, "no API client to bind pod %s", pod->key);
    binding_body(pod, node, &body);
    kube_path(&kube_res_pods, pod->namespace, pod->name, "binding", &path);
    r = kube_request(c, "POST", path.buf, body.buf, NULL, NULL, &ks);
    if (r < 0) {
        /* framework.AsStatus(err): the API error's text is the reason. */
        sched_status_set(st, SCHED_ERROR, "%s", ks.message[0] ? ks.message : err_str(r));
        goto out;
    }
    r = 0;
out:
    strbuf_release(&body);
    strbuf_release(&path);
    return r < 0 ? SCHED_ERROR : SCHED_SUCCESS;
}

/* No events: like upstream, the plugin does not implement EnqueueExtensions (NULL = all). */
const struct sched_plugin sched_plugin_default_binder = {
    .name = "DefaultBinder",
    .args_kind = NULL,
    .default_weight = 0,
    .init = binder_init,
    .bind = binder_bind,
};
