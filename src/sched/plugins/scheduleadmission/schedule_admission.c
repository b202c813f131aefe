/*
 * ScheduleAdmission (koordinator issue #3058, PR #3062; reference scheduler.md 8.6): a PreEnqueue
 * plugin that holds a pod while it carries any label whose key starts with
 * "scheduling.koordinator.sh/schedule-admission-". spec.schedulingGates can only be set when a
 * pod is created; a label can be added and removed at any time, so a queueing controller
 * (koord-queue) can hold pods that were created without gates, each controller under its own
 * suffix. The value is not looked at (the upstream snapshot does not contain the plugin, so
 * the exact semantics are unverified; "any such label holds" is the wording).
 *
 * Removing the last such label is an update of the pod's labels, which the queue treats as a
 * change and answers with PreEnqueue again; no cluster event can admit a pod, so the plugin
 * registers none (as SchedulingGates). A held pod is counted as gated and costs no attempt.
 */
#include <string.h>

#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

#define SA_PREFIX "scheduling.koordinator.sh/schedule-admission-"

static enum sched_code sa_pre_enqueue(void *self, const struct sched_pod *pod,
                                      struct sched_status *st)
{
    const cJSON *l;

    (void)self;
    cJSON_ArrayForEach(l, pod->labels)
    {
        if (l->string && !strncmp(l->string, SA_PREFIX, sizeof(SA_PREFIX) - 1))
            return sched_status_set(st, SCHED_UNRESOLVABLE,
                                    "waiting for schedule admission: label %s", l->string);
    }
    return SCHED_SUCCESS;
}

static const struct sched_event_reg sa_events[] = {{NULL, 0}};

const struct sched_plugin sched_plugin_schedule_admission = {
    .name = "ScheduleAdmission",
    .args_kind = NULL,
    .default_weight = 0,
    .events = sa_events,
    .pre_enqueue = sa_pre_enqueue,
};
