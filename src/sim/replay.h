/*
 * One replay of a trace against a control plane (issue 19 §2-3): the trace clock, the pods
 * created and ended when the trace says, the simulated fleet (fleet.h) in front of the API
 * server, and the outcome measured into a struct sim_run. `koord sim` calls it once per
 * colocation setting.
 *
 * The clock: trace time = (wall time since the start) x speed. The control plane runs in real
 * time; reports keep their real interval and carry the usage of the trace time they are sent
 * at. The run ends when trace time passes the trace's span (or at stop).
 */
#ifndef KOORD_SIM_REPLAY_H
#define KOORD_SIM_REPLAY_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "sim/model.h"
#include "sim/outcome.h"
#include "sim/trace.h"

struct strbuf;

struct sim_replay_opts {
    const struct sim_trace *trace;
    const struct sim_model *model;
    bool colocation;
    double speed; /* trace seconds per wall second, > 0 */

    /* The control plane: started by the replay in state_dir (a new directory) from exe, or
     * (kubeconfig set) the running one it names, whose colocation setting is used as it is. */
    const char *exe;
    const char *state_dir;
    const char *kubeconfig;

    unsigned report_interval_s; /* NodeMetric reports (metricReportIntervalSeconds) */
    double qos_interval_s;      /* the agent stand-ins' QoS tick, wall seconds */
    double sample_interval_s;   /* outcome samples, wall seconds */
    unsigned senders;           /* threads sending reports; 0 = 4 */
    bool node_certs;            /* report with per-node client certificates (default) */

    atomic_bool *stop; /* set by a signal handler thread: end the run early */
};

/*
 * Runs the replay and fills *ret (name, colocation, samples, the summary; release with
 * sim_run_release()). 0, or a negative errno with err saying what failed (the control plane did
 * not start, the API server refused the fleet's nodes, ...). A run stopped through opts->stop
 * returns -EINTR with what was measured so far in *ret.
 */
int sim_replay_run(const struct sim_replay_opts *o, struct sim_run *ret, struct strbuf *err);

#endif
