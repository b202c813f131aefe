/* koord sim: replay a trace on a simulated fleet in front of the real control plane, with
 * colocation off and on, and report the outcome (flags and wiring; src/sim/ does the work). */
#include <ftw.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "cmd.h"
#include "sim/inflate.h"
#include "sim/model.h"
#include "sim/outcome.h"
#include "sim/replay.h"
#include "sim/report.h"
#include "sim/trace.h"

#define RUN_WALL_S 360.0 /* the default speed fits one run of the trace in 6 minutes */

static const char usage[] =
    "usage: koord sim --nodes FILE|N --pods FILE [flags]\n"
    "\n"
    "Replays a pod trace (openb format) on a simulated fleet in front of the real koord\n"
    "apiserver, manager and scheduler, once with colocation off and once on, prints the\n"
    "outcome side by side and writes timeseries.csv, summary.csv and report.html.\n"
    "\n"
    "  --nodes FILE|N            node list (sn,cpu_milli,memory_mib,gpu,model) or a count of\n"
    "                            synthetic nodes of --node-cpu and --node-memory\n"
    "  --node-cpu MILLI          synthetic node CPU (default 32000)\n"
    "  --node-memory MIB         synthetic node memory (default 262144)\n"
    "  --pods FILE               pod list (name,cpu_milli,memory_mib,...,creation_time,...)\n"
    "  --colocation LIST         off,on (default), on, or off\n"
    "  --inflate                 replay a workload drawn from the trace instead of its\n"
    "                            timestamps: LS services filling the fleet, a stream of BE\n"
    "                            jobs (docs/sim.md, \"Inflating a trace\"), tuned by:\n"
    "  --ls-fill F               LS CPU requests, fraction of the fleet's CPU (default 0.8)\n"
    "  --be-load F               BE CPU work offered, fraction of the fleet's CPU (default 0.5)\n"
    "  --be-stretch X            BE run times x X (default 10)\n"
    "  --inflate-span S          trace seconds of the inflated workload (default 21600)\n"
    "  --speed X                 trace seconds per wall second (default: one run of the whole\n"
    "                            trace in 6 minutes)\n"
    "  --seed N                  the usage model's seed (default 1)\n"
    "  --out DIR                 where the report goes (default sim-out)\n"
    "  --state-dir DIR           the control plane's state (default a temporary directory)\n"
    "  --keep                    keep the state directory (logs, database, certificates)\n"
    "  --kubeconfig FILE         use this running cluster instead (one run, its colocation\n"
    "                            setting; reports go through its API server)\n"
    "  --report-interval S       NodeMetric report interval (default 10)\n"
    "  --qos-interval S          the agent stand-ins' QoS tick, wall seconds (default 1)\n"
    "  --sample-interval S       outcome samples, wall seconds (default 2)\n"
    "  --senders N               threads sending reports (default 4)\n"
    "  --no-node-certs           report with the admin credentials instead of node ones\n"
    "                            (one client: for fleets past the open-file limit)\n"
    "  --log-level LEVEL         error, warn, info (default) or debug\n"
    "\n"
    "The usage model (docs/sim.md says where each default comes from):\n"
    "  --ls-cpu-base F           LS pods' mean CPU use, fraction of request (default 0.15)\n"
    "  --ls-cpu-amplitude F      diurnal swing (default 0.10)\n"
    "  --ls-cpu-noise F          noise, +- (default 0.03)\n"
    "  --spike-prob P            chance of a spike per pod and spike slot (default 0.01)\n"
    "  --spike-height F          what a spike adds, fraction of request (default 0.5)\n"
    "  --spike-seconds S         trace seconds of a spike slot (default 600)\n"
    "  --surge FROM:TO           every LS pod spikes in [FROM, TO) trace seconds\n"
    "  --ls-memory F             LS memory use, fraction of request (default 0.6)\n"
    "  --be-cpu F, --be-memory F BE use, fraction of request (default 1.0, 0.8)\n"
    "  --sys-cpu F, --sys-memory F\n"
    "                            system share of a node (default 0.02, 0.05)\n"
    "  --day-seconds S           the diurnal period (default 86400)\n"
    "\n"
    "Ctrl-C stops the replay and the control plane; the report of what ran is still written.\n";

static atomic_bool stop_flag;

static void *signal_main(void *arg)
{
    sigset_t *sigs = arg;
    int sig = 0;

    /* SIGUSR1 is the command's own "done" (below), not a stop */
    if (sigwait(sigs, &sig) == 0 && sig != SIGUSR1)
        atomic_store(&stop_flag, true);
    return NULL;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    (void)remove(path);
    return 0;
}

static int bad(const char *flag, const char *v, const char *want)
{
    (void)fprintf(stderr, "koord sim: --%s must be %s, not \"%s\"\n", flag, want, v);
    return 2;
}

static bool num(const char *v, double *ret)
{
    return parse_double(v, ret) == 0;
}

enum {
    OPT_NODES = 256,
    OPT_NODE_CPU,
    OPT_NODE_MEM,
    OPT_PODS,
    OPT_COLOC,
    OPT_SPEED,
    OPT_SEED,
    OPT_OUT,
    OPT_STATE,
    OPT_KEEP,
    OPT_KUBECONFIG,
    OPT_REPORT,
    OPT_QOS,
    OPT_SAMPLE,
    OPT_SENDERS,
    OPT_NO_CERTS,
    OPT_LOG,
    OPT_SURGE,
    OPT_INFLATE,
    OPT_TUNE, /* --inflate's tuning flags: the option (enum sim_inflate_opt) is added */
    OPT_MODEL = OPT_TUNE + SIM_INFLATE_NOPTS, /* model fractions: the index into model_flags[] */
};

/* The flag of each of --inflate's options; their ranges are sim/inflate's. */
static const char *const tune_flags[SIM_INFLATE_NOPTS] = {
    [SIM_INFLATE_LS_FILL] = "ls-fill",
    [SIM_INFLATE_BE_LOAD] = "be-load",
    [SIM_INFLATE_BE_STRETCH] = "be-stretch",
    [SIM_INFLATE_SPAN] = "inflate-span",
};

static const struct {
    const char *name;
    size_t off;
} model_flags[] = {
    {"ls-cpu-base", offsetof(struct sim_model, ls_cpu_base)},
    {"ls-cpu-amplitude", offsetof(struct sim_model, ls_cpu_amplitude)},
    {"ls-cpu-noise", offsetof(struct sim_model, ls_cpu_noise)},
    {"spike-prob", offsetof(struct sim_model, spike_prob)},
    {"spike-height", offsetof(struct sim_model, spike_height)},
    {"spike-seconds", offsetof(struct sim_model, spike_s)},
    {"ls-memory", offsetof(struct sim_model, ls_memory)},
    {"be-cpu", offsetof(struct sim_model, be_cpu)},
    {"be-memory", offsetof(struct sim_model, be_memory)},
    {"sys-cpu", offsetof(struct sim_model, sys_cpu)},
    {"sys-memory", offsetof(struct sim_model, sys_memory)},
    {"day-seconds", offsetof(struct sim_model, day_s)},
};

int cmd_sim(int argc, char **argv)
{
    struct option longopts[64] = {
        {"nodes", required_argument, NULL, OPT_NODES},
        {"node-cpu", required_argument, NULL, OPT_NODE_CPU},
        {"node-memory", required_argument, NULL, OPT_NODE_MEM},
        {"pods", required_argument, NULL, OPT_PODS},
        {"colocation", required_argument, NULL, OPT_COLOC},
        {"speed", required_argument, NULL, OPT_SPEED},
        {"seed", required_argument, NULL, OPT_SEED},
        {"out", required_argument, NULL, OPT_OUT},
        {"state-dir", required_argument, NULL, OPT_STATE},
        {"keep", no_argument, NULL, OPT_KEEP},
        {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
        {"report-interval", required_argument, NULL, OPT_REPORT},
        {"qos-interval", required_argument, NULL, OPT_QOS},
        {"sample-interval", required_argument, NULL, OPT_SAMPLE},
        {"senders", required_argument, NULL, OPT_SENDERS},
        {"no-node-certs", no_argument, NULL, OPT_NO_CERTS},
        {"log-level", required_argument, NULL, OPT_LOG},
        {"surge", required_argument, NULL, OPT_SURGE},
        {"inflate", no_argument, NULL, OPT_INFLATE},
        {"help", no_argument, NULL, 'h'},
    };
    const char *nodes = NULL, *pods = NULL, *out = "sim-out", *state = NULL, *kubeconfig = NULL;
    const char *coloc = "off,on", *why = NULL;
    double speed = 0, qos_s = 1, sample_s = 2, node_cpu = 32000, node_mib = 262144;
    uint32_t report_s = 10, senders = 4;
    bool keep = false, certs = true, made_state = false, stopped = false, inflate = false;
    const char *inflate_flag = NULL; /* a tuning flag given, for "needs --inflate" */
    struct sim_inflate_opts infl;
    struct sim_model model;
    struct sim_trace tr = {0};
    struct sim_run runs[2] = {{0}};
    size_t nruns = 0;
    struct strbuf err = STRBUF_INIT, tmp = STRBUF_INIT, nodes_desc = STRBUF_INIT,
                  model_desc = STRBUF_INIT, trace_desc = STRBUF_INIT;
    char tmpl[] = "/tmp/koord-sim-XXXXXX";
    char *exe = NULL;
    bool want[2] = {false, false}; /* off, on */
    sigset_t sigs;
    pthread_t sig_thread;
    int rc = 1, c, r = 0;
    size_t base = 0;

    sim_model_defaults(&model);
    sim_inflate_defaults(&infl);
    while (longopts[base].name) /* the tuning and model flags go after the fixed ones */
        base++;
    for (size_t i = 0; i < SIM_INFLATE_NOPTS; i++)
        longopts[base++] =
            (struct option){tune_flags[i], required_argument, NULL, OPT_TUNE + (int)i};
    for (size_t i = 0; i < ARRAY_SIZE(model_flags); i++)
        longopts[base + i] =
            (struct option){model_flags[i].name, required_argument, NULL, OPT_MODEL + (int)i};
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        double d;
        int64_t i64;
        switch (c) {
        case OPT_NODES:
            nodes = optarg;
            break;
        case OPT_NODE_CPU:
            if (!num(optarg, &node_cpu) || node_cpu < 1)
                return bad("node-cpu", optarg, "a positive number of milli-cores");
            break;
        case OPT_NODE_MEM:
            if (!num(optarg, &node_mib) || node_mib < 1)
                return bad("node-memory", optarg, "a positive number of MiB");
            break;
        case OPT_PODS:
            pods = optarg;
            break;
        case OPT_COLOC:
            coloc = optarg;
            break;
        case OPT_SPEED:
            if (!num(optarg, &speed) || !(speed > 0))
                return bad("speed", optarg, "a positive number");
            break;
        case OPT_SEED:
            if (parse_i64(optarg, &i64) < 0 || i64 < 0)
                return bad("seed", optarg, "a whole number >= 0");
            model.seed = (uint64_t)i64;
            break;
        case OPT_OUT:
            out = optarg;
            break;
        case OPT_STATE:
            state = optarg;
            break;
        case OPT_KEEP:
            keep = true;
            break;
        case OPT_KUBECONFIG:
            kubeconfig = optarg;
            break;
        case OPT_REPORT:
            if (parse_u32(optarg, &report_s) < 0 || report_s < 1 || report_s > 3600)
                return bad("report-interval", optarg, "1 to 3600 seconds");
            break;
        case OPT_QOS:
            if (!num(optarg, &qos_s) || qos_s < 0.05 || qos_s > 60)
                return bad("qos-interval", optarg, "0.05 to 60 seconds");
            break;
        case OPT_SAMPLE:
            if (!num(optarg, &sample_s) || sample_s < 0.05 || sample_s > 3600)
                return bad("sample-interval", optarg, "0.05 to 3600 seconds");
            break;
        case OPT_SENDERS:
            if (parse_u32(optarg, &senders) < 0 || senders < 1 || senders > 64)
                return bad("senders", optarg, "1 to 64");
            break;
        case OPT_NO_CERTS:
            certs = false;
            break;
        case OPT_LOG:
            if (log_set_level(optarg) < 0)
                return bad("log-level", optarg, "error, warn, info or debug");
            break;
        case OPT_SURGE: {
            const char *colon = strchr(optarg, ':');
            struct strbuf a = STRBUF_INIT;
            bool ok = colon != NULL;
            if (ok) {
                strbuf_add(&a, optarg, (size_t)(colon - optarg));
                ok = num(a.buf, &model.surge_from_s) && num(colon + 1, &model.surge_to_s) &&
                     model.surge_from_s >= 0 && model.surge_to_s > model.surge_from_s;
            }
            strbuf_release(&a);
            if (!ok)
                return bad("surge", optarg, "FROM:TO trace seconds with FROM < TO");
            break;
        }
        case OPT_INFLATE:
            inflate = true;
            break;
        case 'h':
            (void)fputs(usage, stdout);
            return 0;
        default:
            if (c >= OPT_TUNE && c < OPT_MODEL) {
                enum sim_inflate_opt k = (enum sim_inflate_opt)(c - OPT_TUNE);
                if (!num(optarg, &d) || sim_inflate_set(&infl, k, d) < 0)
                    return bad(tune_flags[k], optarg, sim_inflate_range(k));
                inflate_flag = tune_flags[k];
                break;
            }
            if (c >= OPT_MODEL && c < OPT_MODEL + (int)ARRAY_SIZE(model_flags)) {
                size_t k = (size_t)(c - OPT_MODEL);
                if (!num(optarg, &d))
                    return bad(model_flags[k].name, optarg, "a number");
                *(double *)((char *)&model + model_flags[k].off) = d;
                break;
            }
            (void)fputs(usage, stderr);
            return 2;
        }
    }
    if (optind < argc) {
        (void)fprintf(stderr, "koord sim: unexpected argument \"%s\"\n", argv[optind]);
        return 2;
    }
    if (!nodes || !pods) {
        (void)fprintf(stderr, "koord sim: --nodes and --pods are required\n\n%s", usage);
        return 2;
    }
    if (inflate_flag && !inflate) {
        (void)fprintf(stderr, "koord sim: --%s tunes --inflate, which is not given\n",
                      inflate_flag);
        return 2;
    }
    if (sim_model_check(&model, &why) < 0) {
        (void)fprintf(stderr, "koord sim: %s\n", why);
        return 2;
    }
    if (!strcmp(coloc, "off,on") || !strcmp(coloc, "on,off")) {
        want[0] = want[1] = true;
    } else if (!strcmp(coloc, "on")) {
        want[1] = true;
    } else if (!strcmp(coloc, "off")) {
        want[0] = true;
    } else {
        return bad("colocation", coloc, "off,on, on or off");
    }
    if (kubeconfig && want[0] && want[1]) {
        (void)fprintf(stderr, "koord sim: with --kubeconfig, one run only: pass --colocation "
                              "on or off (the cluster's own setting applies)\n");
        return 2;
    }

    {
        uint32_t n;
        if (parse_u32(nodes, &n) == 0) {
            r = sim_trace_synthetic_nodes(&tr, n, (int64_t)node_cpu,
                                          (int64_t)node_mib * 1024 * 1024, &err);
            strbuf_addf(&nodes_desc, "%u synthetic nodes (%.0f m CPU, %.0f MiB)", n, node_cpu,
                        node_mib);
        } else {
            r = sim_trace_read_nodes(&tr, nodes, &err);
            strbuf_addstr(&nodes_desc, nodes);
        }
    }
    if (r == 0)
        r = sim_trace_read_pods(&tr, pods, &err);
    strbuf_addstr(&trace_desc, pods);
    if (r == 0 && inflate) {
        infl.seed = model.seed;
        if ((r = sim_trace_inflate(&tr, &infl, &tmp)) < 0)
            strbuf_addf(&err, "%s: cannot inflate it: %s", pods, tmp.buf);
        else
            strbuf_addf(&trace_desc,
                        ", inflated (LS fill %.2f, BE load %.2f, BE run times x%g, %.0f trace "
                        "seconds)",
                        infl.ls_fill, infl.be_load, infl.be_stretch, infl.span_s);
    }
    if (r < 0) {
        (void)fprintf(stderr, "koord sim: %s\n", err.buf);
        rc = 2;
        goto out;
    }
    if (speed == 0)
        speed = tr.span_s > RUN_WALL_S ? ceil(tr.span_s / RUN_WALL_S) : 1;
    sim_model_describe(&model, &model_desc);

    if (!kubeconfig) {
        if (!state) {
            if (!(state = mkdtemp(tmpl))) {
                (void)fprintf(stderr, "koord sim: cannot create a state directory: %s\n",
                              err_str(-errno));
                goto out;
            }
            made_state = true;
        } else if (mkdir(state, 0700) < 0 && errno != EEXIST) {
            (void)fprintf(stderr, "koord sim: cannot create \"%s\": %s\n", state, err_str(-errno));
            goto out;
        }
        if (!(exe = realpath("/proc/self/exe", NULL))) {
            (void)fprintf(stderr, "koord sim: cannot find this binary: %s\n", err_str(-errno));
            goto out;
        }
    }
    cmd_block_stop_signals(&sigs, SIGUSR1);
    if (pthread_create(&sig_thread, NULL, signal_main, &sigs) != 0) {
        (void)fprintf(stderr, "koord sim: cannot start the signal thread\n");
        goto out;
    }
    for (int on = 0; on < 2; on++) {
        struct sim_replay_opts o = {.trace = &tr,
                                    .model = &model,
                                    .colocation = on,
                                    .speed = speed,
                                    .exe = exe,
                                    .kubeconfig = kubeconfig,
                                    .report_interval_s = report_s,
                                    .qos_interval_s = qos_s,
                                    .sample_interval_s = sample_s,
                                    .senders = senders,
                                    .node_certs = certs,
                                    .stop = &stop_flag};
        if (!want[on] || atomic_load(&stop_flag))
            continue;
        strbuf_reset(&tmp);
        if (state)
            strbuf_addf(&tmp, "%s/%s", state, on ? "on" : "off");
        o.state_dir = tmp.buf;
        strbuf_reset(&err);
        r = sim_replay_run(&o, &runs[nruns], &err);
        if (r < 0 && r != -EINTR) {
            (void)fprintf(stderr, "koord sim: %s: %s\n", runs[nruns].name,
                          err.len ? err.buf : err_str(r));
            sim_run_release(&runs[nruns]);
            break;
        }
        nruns++;
        if (r == -EINTR) {
            stopped = true;
            (void)fprintf(stderr,
                          "koord sim: %s stopped before the end of the trace; the report "
                          "covers what ran\n",
                          runs[nruns - 1].name);
            break;
        }
    }
    (void)pthread_kill(sig_thread, SIGUSR1);
    (void)pthread_join(sig_thread, NULL);
    if (nruns) {
        struct sim_report_meta meta = {.trace = trace_desc.buf,
                                       .nodes = nodes_desc.buf,
                                       .nnodes = tr.nnodes,
                                       .npods = tr.npods,
                                       .seed = (unsigned long long)model.seed,
                                       .speed = speed,
                                       .model = model_desc.buf};
        const char *wfail = NULL;
        (void)sim_report_summary(stdout, runs, nruns);
        r = sim_report_write(out, &meta, runs, nruns, &wfail);
        if (r < 0)
            (void)fprintf(stderr, "koord sim: cannot write the report (%s): %s\n",
                          wfail ? wfail : out, err_str(r));
        else
            (void)printf("\nreport: %s/report.html, %s/summary.csv, %s/timeseries.csv\n", out, out,
                         out);
        rc = r < 0 || stopped || nruns < (size_t)(want[0] + want[1]) ? 1 : 0;
    }
out:
    if (made_state && !keep)
        (void)nftw(state, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    else if (state && !kubeconfig)
        (void)fprintf(stderr, "koord sim: state kept in %s\n", state);
    for (size_t i = 0; i < nruns; i++)
        sim_run_release(&runs[i]);
    sim_trace_release(&tr);
    strbuf_release(&err);
    strbuf_release(&tmp);
    strbuf_release(&nodes_desc);
    strbuf_release(&model_desc);
    strbuf_release(&trace_desc);
    free(exe);
    return rc;
}
