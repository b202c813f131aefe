/* Pod and node summaries, CPU sets and shared annotations of the QoS strategies (qos.h). */
#include "agent/qos/qos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/qos/qos-int.h"
#include "api/quantity.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

static const char *const res_names[QOS_RES_COUNT] = {
    [QOS_RES_CPU] = "cpu",
    [QOS_RES_MEMORY] = "memory",
    [QOS_RES_BATCH_CPU] = "kubernetes.io/batch-cpu",
    [QOS_RES_BATCH_MEMORY] = "kubernetes.io/batch-memory",
    [QOS_RES_MID_CPU] = "kubernetes.io/mid-cpu",
    [QOS_RES_MID_MEMORY] = "kubernetes.io/mid-memory",
};

const char *qos_res_name(enum qos_res r)
{
    return (unsigned)r < QOS_RES_COUNT ? res_names[r] : "";
}

/* ---- JSON helpers (qos-int.h) ---- */

int qos__json_parse(const char *s, cJSON **ret)
{
    size_t len = strlen(s);
    int r;

    if (len > QOS__JSON_MAX)
        return -EINVAL;
    r = json_parse(s, len, NULL, ret, NULL);
    return r == -ENOMEM ? r : (r < 0 ? -EINVAL : 0);
}

const cJSON *qos__member(const cJSON *o, const char *key)
{
    const cJSON *v;

    if (!cJSON_IsObject(o))
        return NULL;
    v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNull(v) ? NULL : v;
}

const cJSON *qos__get(const cJSON *o, const char *key)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

const char *qos__get_str(const cJSON *o, const char *key)
{
    const cJSON *v = qos__get(o, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int qos__json_int(const cJSON *v, int64_t min, int64_t max, int64_t *ret)
{
    double d;

    if (!cJSON_IsNumber(v))
        return -EINVAL;
    d = v->valuedouble;
    /* Beyond 2^53 a double no longer says which integer was written; such values are refused. */
    if (d != floor(d) || fabs(d) > 9007199254740992.0 || d < (double)min || d > (double)max)
        return -EINVAL;
    *ret = (int64_t)d;
    return 0;
}

void qos__sort(void *base, size_t n, size_t size, int (*cmp)(const void *a, const void *b))
{
    unsigned char tmp[QOS__SORT_ELEM_MAX], *v = base;

    CHECK(size <= sizeof(tmp));
    /* Insertion sort: victim lists are short, and it is stable. */
    for (size_t i = 1; i < n; i++) {
        size_t j = i;

        memcpy(tmp, v + i * size, size);
        while (j > 0 && cmp(tmp, v + (j - 1) * size) < 0)
            j--;
        if (j < i) {
            memmove(v + (j + 1) * size, v + j * size, (i - j) * size);
            memcpy(v + j * size, tmp, size);
        }
    }
}

/* ---- quantities ---- */

/* Entry name of a ResourceList in the unit of r; 0 with *ret, -ENOENT absent, -EINVAL bad. */
static int list_amount(const cJSON *list, enum qos_res r, int64_t *ret)
{
    const cJSON *v = qos__get(list, res_names[r]);
    struct quantity q;
    int e;

    if (!v || cJSON_IsNull(v))
        return -ENOENT;
    if (cJSON_IsString(v)) {
        e = quantity_parse(v->valuestring, &q);
    } else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
               fabs(v->valuedouble) <= 9007199254740992.0) {
        quantity_from_int((int64_t)v->valuedouble, QUANTITY_DECIMAL_SI, &q);
        e = 0;
    } else {
        return -EINVAL;
    }
    if (e < 0)
        return -EINVAL;
    e = r == QOS_RES_CPU ? quantity_milli(&q, ret) : quantity_value(&q, ret);
    return e < 0 ? -EINVAL : 0;
}

/* Fills *ret from a ResourceList; returns the presence bits of the entries that parsed. */
static uint32_t read_list(const cJSON *list, struct qos_resources *ret)
{
    uint32_t present = 0;

    for (int r = 0; r < QOS_RES_COUNT; r++) {
        int64_t v;

        ret->v[r] = 0;
        if (list_amount(list, (enum qos_res)r, &v) == 0) {
            ret->v[r] = v;
            present |= 1u << r;
        }
    }
    return present;
}

/* ---- pods ---- */

static enum qos_kube_class kube_class_of(enum api_qos q)
{
    switch (q) {
    case API_QOS_LSR:
        return QOS_KUBE_GUARANTEED;
    case API_QOS_LS:
        return QOS_KUBE_BURSTABLE;
    case API_QOS_BE:
        return QOS_KUBE_BESTEFFORT;
    default:
        return QOS_KUBE_NONE;
    }
}

/*
 * The Kubernetes QoS class: api_pod_qos() on a view of the pod without labels, which maps the
 * kube class (status.qosClass or ComputePodQOS) to LSR/LS/BE. The view is built on the stack
 * from shallow copies of the spec and status items (lookups only follow `child`, `next` and
 * `string`), so nothing is allocated and the pod is not touched.
 */
static enum qos_kube_class kube_qos(const cJSON *pod)
{
    const cJSON *spec = qos__get(pod, "spec"), *status = qos__get(pod, "status");
    cJSON view, s, st, *last = NULL;

    memset(&view, 0, sizeof(view));
    view.type = cJSON_Object;
    if (spec) {
        s = *spec;
        s.string = (char *)"spec";
        s.next = s.prev = NULL;
        view.child = last = &s;
    }
    if (status) {
        st = *status;
        st.string = (char *)"status";
        st.next = st.prev = NULL;
        if (last)
            last->next = &st;
        else
            view.child = &st;
    }
    return kube_class_of(api_pod_qos(&view));
}

/* Band of spec.priority (GetPriorityClassByPriority). */
static void read_container(const cJSON *c, const cJSON *statuses, struct qos_container *ret)
{
    const cJSON *rs = qos__get(c, "resources"), *st;

    memset(ret, 0, sizeof(*ret));
    ret->name = qos__get_str(c, "name");
    (void)read_list(qos__get(rs, "requests"), &ret->requests);
    (void)read_list(qos__get(rs, "limits"), &ret->limits);
    if (!ret->name || !cJSON_IsArray(statuses))
        return;
    cJSON_ArrayForEach(st, statuses)
    {
        const char *n = qos__get_str(st, "name");

        if (n && !strcmp(n, ret->name)) {
            ret->id = qos__get_str(st, "containerID");
            ret->running = qos__get(qos__get(st, "state"), "running") != NULL;
            break;
        }
    }
}

/* Pod request per resource: max(sum of containers, each init container) + overhead. */
static void pod_requests(const struct qos_pod *p, const cJSON *spec, struct qos_resources *ret)
{
    const cJSON *inits = qos__get(spec, "initContainers"), *c;
    struct qos_resources o;

    memset(ret, 0, sizeof(*ret));
    for (size_t i = 0; i < p->ncontainers; i++)
        for (int r = 0; r < QOS_RES_COUNT; r++)
            ret->v[r] += p->containers[i].requests.v[r];
    if (cJSON_IsArray(inits)) {
        cJSON_ArrayForEach(c, inits)
        {
            struct qos_resources ir;

            (void)read_list(qos__get(qos__get(c, "resources"), "requests"), &ir);
            for (int r = 0; r < QOS_RES_COUNT; r++)
                if (ir.v[r] > ret->v[r])
                    ret->v[r] = ir.v[r];
        }
    }
    (void)read_list(qos__get(spec, "overhead"), &o);
    for (int r = 0; r < QOS_RES_COUNT; r++)
        ret->v[r] += o.v[r];
}

int qos_pod_from_json(const cJSON *pod, struct qos_pod *ret)
{
    const cJSON *meta = qos__get(pod, "metadata"), *spec = qos__get(pod, "spec");
    const cJSON *labels = qos__get(meta, "labels"), *ann = qos__get(meta, "annotations");
    const cJSON *prio = qos__get(spec, "priority"), *containers = qos__get(spec, "containers");
    const cJSON *statuses = qos__get(qos__get(pod, "status"), "containerStatuses"), *c;
    const char *phase = qos__get_str(qos__get(pod, "status"), "phase"), *s;
    struct qos_pod p;
    int64_t v;

    if (!cJSON_IsObject(pod))
        return -EINVAL;
    memset(&p, 0, sizeof(p));
    p.uid = qos__get_str(meta, "uid");
    p.namespace = qos__get_str(meta, "namespace");
    p.name = qos__get_str(meta, "name");
    p.qos = api_pod_qos(pod);
    p.qos_label = api_qos_by_name(qos__get_str(labels, "koordinator.sh/qosClass"));
    p.kube_qos = kube_qos(pod);
    p.priority_class = api_pod_priority(pod);
    if (qos__json_int(prio, INT32_MIN, INT32_MAX, &v) == 0) {
        p.has_priority = true;
        p.priority = (int32_t)v;
    }
    if (qos__get(labels, "koordinator.sh/priority-class"))
        p.priority_class_raw =
            api_priority_by_name(qos__get_str(labels, "koordinator.sh/priority-class"));
    else if (p.has_priority)
        p.priority_class_raw = api_priority_of_value(p.priority);
    p.active = !phase || (strcmp(phase, "Succeeded") && strcmp(phase, "Failed"));
    s = qos__get_str(labels, QOS_LABEL_EVICTION_ENABLED);
    p.eviction_enabled = s && !strcmp(s, "true");
    if (parse_i64(qos__get_str(labels, QOS_LABEL_SUB_PRIORITY), &v) == 0) {
        p.has_sub_priority = true;
        p.sub_priority = v;
    }
    if (parse_i64(qos__get_str(ann, QOS_ANNOTATION_EVICTION_PRIO), &v) == 0 && v >= INT32_MIN &&
        v <= INT32_MAX)
        p.eviction_priority = (int32_t)v;
    p.eviction_policy = qos__get_str(ann, QOS_ANNOTATION_EVICTION_POLICY);
    p.cpu_burst = qos__get_str(ann, QOS_ANNOTATION_CPU_BURST);
    p.cpu_qos = qos__get_str(ann, QOS_ANNOTATION_CPU_QOS);
    p.memory_qos = qos__get_str(ann, QOS_ANNOTATION_MEMORY_QOS);
    p.resource_status = qos__get_str(ann, QOS_ANNOTATION_RESOURCE_STATUS);
    p.has_resctrl_annotation = qos__get(ann, QOS_ANNOTATION_POD_RESCTRL) != NULL;
    if (cJSON_IsArray(containers) && cJSON_GetArraySize(containers) > 0) {
        size_t n = (size_t)cJSON_GetArraySize(containers);

        p.containers = ccalloc(n, sizeof(*p.containers));
        if (!p.containers)
            return -ENOMEM;
        cJSON_ArrayForEach(c, containers)
        {
            read_container(c, statuses, &p.containers[p.ncontainers++]);
        }
    }
    pod_requests(&p, spec, &p.requests);
    *ret = p;
    return 0;
}

void qos_pod_release(struct qos_pod *p)
{
    FREE_AND_NULL(p->containers);
    p->ncontainers = 0;
}

int32_t qos_pod_priority_value(const struct qos_pod *p)
{
    if (p->has_priority && p->priority != 0)
        return p->priority;
    return api_priority_value(p->priority_class);
}

int64_t qos_pod_sum_requests(const struct qos_pod *p, enum qos_res r)
{
    int64_t sum = 0;

    for (size_t i = 0; i < p->ncontainers; i++)
        if (p->containers[i].requests.v[r] > 0)
            sum += p->containers[i].requests.v[r];
    return sum;
}

int64_t qos_pod_class_request(const struct qos_pod *p, enum qos_res want, enum qos_res *ret_res)
{
    bool cpu = want == QOS_RES_CPU;
    enum qos_res r;

    switch (p->priority_class) {
    case API_PRIORITY_MID:
        r = cpu ? QOS_RES_MID_CPU : QOS_RES_MID_MEMORY;
        break;
    case API_PRIORITY_BATCH:
        r = cpu ? QOS_RES_BATCH_CPU : QOS_RES_BATCH_MEMORY;
        break;
    default:
        *ret_res = cpu ? QOS_RES_CPU : QOS_RES_MEMORY;
        return p->requests.v[*ret_res];
    }
    *ret_res = r;
    return qos_pod_sum_requests(p, r);
}

/* ---- nodes ---- */

int qos_node_from_json(const cJSON *node, struct qos_node *ret)
{
    const cJSON *status = qos__get(node, "status");
    const char *ann = qos__get_str(qos__get(qos__get(node, "metadata"), "annotations"),
                                   QOS_ANNOTATION_NODE_RESERVATION);
    struct qos_reservation res;

    if (!cJSON_IsObject(node))
        return -EINVAL;
    memset(ret, 0, sizeof(*ret));
    ret->capacity_present = read_list(qos__get(status, "capacity"), &ret->capacity);
    ret->allocatable_present = read_list(qos__get(status, "allocatable"), &ret->allocatable);
    if (qos_reservation_parse(ann, &res) == 0) {
        ret->reserved_cpu_milli = res.cpu_milli;
        ret->reserved_memory = res.memory;
    }
    return 0;
}

int64_t qos_node_reserved_cpu_milli(const struct qos_node *n)
{
    int64_t kubelet = n->capacity.v[QOS_RES_CPU] - n->allocatable.v[QOS_RES_CPU];

    if (kubelet < 0)
        kubelet = 0;
    return kubelet > n->reserved_cpu_milli ? kubelet : n->reserved_cpu_milli;
}

/* ---- CPU sets ---- */

int qos_cpuset_parse(const char *s, struct cg_cpuset *ret)
{
    /* The kernel's grammar (cg_cpuset_parse) without the whitespace a kernel file ends with. */
    if (strpbrk(s, " \t\n\r\v\f"))
        return -EINVAL;
    return cg_cpuset_parse(s, ret);
}

/* ---- annotations ---- */

/* A Quantity field as encoding/json decodes it: string or number; 0, -EINVAL. */
static int quantity_member(const cJSON *v, bool milli, int64_t *ret)
{
    struct quantity q;
    int r;

    if (cJSON_IsString(v)) {
        r = quantity_parse(v->valuestring, &q);
    } else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
               fabs(v->valuedouble) <= 9007199254740992.0) {
        quantity_from_int((int64_t)v->valuedouble, QUANTITY_DECIMAL_SI, &q);
        r = 0;
    } else {
        return -EINVAL;
    }
    if (r == 0)
        r = milli ? quantity_milli(&q, ret) : quantity_value(&q, ret);
    return r < 0 ? -EINVAL : 0;
}

int qos_reservation_parse(const char *annotation, struct qos_reservation *ret)
{
    struct qos_reservation out;
    const cJSON *resources, *cpus, *v;
    cJSON *doc = NULL;
    int r;

    memset(ret, 0, sizeof(*ret));
    if (!annotation)
        return 0;
    r = qos__json_parse(annotation, &doc);
    if (r < 0)
        return r;
    memset(&out, 0, sizeof(out));
    r = -EINVAL;
    if (cJSON_IsNull(doc))
        goto done;
    if (!cJSON_IsObject(doc))
        goto out;
    resources = qos__member(doc, "resources");
    cpus = qos__member(doc, "reservedCPUs");
    v = qos__member(doc, "applyPolicy");
    if ((resources && !cJSON_IsObject(resources)) || (cpus && !cJSON_IsString(cpus)) ||
        (v && !cJSON_IsString(v)))
        goto out;
    cJSON_ArrayForEach(v, resources)
    {
        int64_t amount = 0;
        bool cpu = !strcmp(v->string, "cpu");

        /* Every entry must decode, as json.Unmarshal of the whole ResourceList must succeed. */
        if (!cJSON_IsNull(v) && quantity_member(v, cpu, &amount) < 0)
            goto out;
        if (cpu)
            out.cpu_milli = amount;
        else if (!strcmp(v->string, "memory"))
            out.memory = amount;
    }
    if (cpus && *cpus->valuestring) {
        if (qos_cpuset_parse(cpus->valuestring, &out.cpus) < 0)
            goto out;
        out.cpu_milli = (int64_t)cg_cpuset_count(&out.cpus) * 1000;
    }
done:
    *ret = out;
    r = 0;
out:
    cJSON_Delete(doc);
    return r;
}

int qos_system_qos_exclusive_cpus(const char *annotation, struct cg_cpuset *ret)
{
    const cJSON *cpuset, *exclusive;
    cJSON *doc = NULL;
    int r;

    cg_cpuset_clear(ret);
    if (!annotation)
        return 0;
    r = qos__json_parse(annotation, &doc);
    if (r < 0)
        return r;
    r = -EINVAL;
    if (cJSON_IsNull(doc)) {
        r = 0;
        goto out;
    }
    if (!cJSON_IsObject(doc))
        goto out;
    cpuset = qos__member(doc, "cpuset");
    exclusive = qos__member(doc, "cpusetExclusive");
    if ((cpuset && !cJSON_IsString(cpuset)) || (exclusive && !cJSON_IsBool(exclusive)))
        goto out;
    r = 0;
    if (!cpuset || !*cpuset->valuestring || cJSON_IsFalse(exclusive))
        goto out;
    r = qos_cpuset_parse(cpuset->valuestring, ret);
    if (r < 0) {
        cg_cpuset_clear(ret);
        r = -EINVAL;
    }
out:
    cJSON_Delete(doc);
    return r;
}

int qos_resource_status_cpus(const char *annotation, struct cg_cpuset *ret)
{
    const cJSON *cpuset;
    cJSON *doc = NULL;
    int r;

    cg_cpuset_clear(ret);
    if (!annotation)
        return 0;
    r = qos__json_parse(annotation, &doc);
    if (r < 0)
        return r;
    r = -EINVAL;
    if (!cJSON_IsObject(doc) && !cJSON_IsNull(doc))
        goto out;
    cpuset = qos__member(doc, "cpuset");
    if (cpuset && !cJSON_IsString(cpuset))
        goto out;
    r = 0;
    if (!cpuset || !*cpuset->valuestring)
        goto out;
    r = qos_cpuset_parse(cpuset->valuestring, ret) < 0 ? -EINVAL : 1;
    if (r < 0)
        cg_cpuset_clear(ret);
out:
    cJSON_Delete(doc);
    return r;
}
