/*
 * Tests for sched/reservation/owners (reference manager-behaviour.md 7.3, koordlet-and-
 * scheduler.md 5.3, api-types.md 4.5): owner terms ORed, object/controller/labelSelector ANDed
 * inside a term with absent parts matching, empty owners matching nothing, a term {} matching
 * everything, a bad selector making the reservation match nothing; then the whole "matched"
 * predicate in upstream's order (active, ignored, owners, affinity name, unschedulable, taints
 * only with an affinity, selector/terms on node+reservation labels, exact match). Each row's
 * expectation is worked out from those rules by hand.
 *
 * JSON in the tables is written with ' for " and ` for \" (the annotations hold JSON text).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/base.h"
#include "sched/reservation/owners.h"
#include "sched/schedtest.h"

static cJSON *js(const char *s)
{
    char *t = xstrdup(s), *q = t;
    struct strbuf sb = STRBUF_INIT;
    cJSON *o;

    for (; *q; q++) {
        if (*q == '\'')
            strbuf_addch(&sb, '"');
        else if (*q == '`')
            strbuf_addstr(&sb, "\\\"");
        else
            strbuf_addch(&sb, *q);
    }
    o = cJSON_Parse(sb.buf);
    if (!o)
        fail_msg("bad test JSON: %s", sb.buf);
    strbuf_release(&sb);
    free(t);
    return o;
}

static struct sched_resv *R(const char *json)
{
    cJSON *o = js(json);
    struct sched_resv *r = NULL;

    assert_int_equal(sched_resv_decode(o, &r), 0);
    cJSON_Delete(o);
    return r;
}

static struct sched_resv_pod *RP(const char *json)
{
    cJSON *o = js(json);
    struct sched_resv_pod *p = NULL;

    assert_int_equal(sched_resv_pod_decode(o, &p), 0);
    cJSON_Delete(o);
    return p;
}

static struct sched_pod *SP(const char *json)
{
    cJSON *o = js(json);
    struct sched_pod *p = NULL;

    assert_int_equal(sched_pod_decode(o, &p), 0);
    cJSON_Delete(o);
    return p;
}

/* A Reservation r1 on n1, Available with allocatable cpu 2 memory 4Gi; meta and spec are extra
 * members (",..."), status members to put first ("...,": cJSON finds the first of duplicates). */
static struct sched_resv *resv(const char *meta, const char *spec, const char *status)
{
    char json[4096];

    (void)snprintf(json, sizeof(json),
                   "{'apiVersion':'scheduling.koordinator.sh/v1alpha1','kind':'Reservation',"
                   "'metadata':{'name':'r1','uid':'ru1'%s},'spec':{'template':{}%s},"
                   "'status':{%s'phase':'Available','nodeName':'n1','allocatable':{'cpu':'2',"
                   "'memory':'4Gi'}}}",
                   meta, spec, status);
    return R(json);
}

/* The test pod: web-0 in ns team, uid pu1, labels app=web, owned by ReplicaSet rs (uid rsu,
 * controller) and by a ConfigMap cm (uid cmu, not controller), requesting cpu 2 memory 4Gi;
 * extra is more metadata members (",..."). */
static const char pod_fmt[] =
    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'web-0','namespace':'team',"
    "'uid':'pu1','labels':{'app':'web'%s},'ownerReferences':[{'apiVersion':'apps/v1',"
    "'kind':'ReplicaSet','name':'rs','uid':'rsu','controller':true},{'apiVersion':'v1',"
    "'kind':'ConfigMap','name':'cm','uid':'cmu'}]%s},'spec':{'containers':[{'name':'c',"
    "'resources':{'requests':{'cpu':'%s','memory':'4Gi'}}}]}}";

static void test_owners(void **unused)
{
    static const struct {
        const char *owners;
        bool want;
    } cases[] = {
        /* empty owners match nothing; a term {} everything */
        {"[]", false},
        {"[{}]", true},
        /* object: set fields compared, kind ignored */
        {"[{'object':{'uid':'pu1'}}]", true},
        {"[{'object':{'uid':'other'}}]", false},
        {"[{'object':{'name':'web-0','namespace':'team'}}]", true},
        {"[{'object':{'name':'web-0','namespace':'other'}}]", false},
        {"[{'object':{'name':'web-0','apiVersion':'v1','kind':'Deployment'}}]", true},
        {"[{'object':{'name':'web-0','apiVersion':'v2'}}]", false},
        /* controller: any ownerReference equal on the non-empty fields */
        {"[{'controller':{'apiVersion':'apps/v1','kind':'ReplicaSet','name':'rs','uid':'rsu'}}]",
         true},
        {"[{'controller':{'apiVersion':'apps/v1','kind':'ReplicaSet','name':'rs','uid':'x'}}]",
         false},
        {"[{'controller':{'apiVersion':'','kind':'ReplicaSet','name':'','uid':''}}]", true},
        {"[{'controller':{'apiVersion':'','kind':'ConfigMap','name':'cm','uid':''}}]", true},
        /* controller flag: the ConfigMap ref has none, so controller=false matches nothing */
        {"[{'controller':{'apiVersion':'','kind':'ConfigMap','name':'','uid':'',"
         "'controller':false}}]",
         false},
        {"[{'controller':{'apiVersion':'','kind':'ReplicaSet','name':'','uid':'',"
         "'controller':true}}]",
         true},
        {"[{'controller':{'apiVersion':'','kind':'ReplicaSet','name':'','uid':'',"
         "'namespace':'team'}}]",
         true},
        {"[{'controller':{'apiVersion':'','kind':'ReplicaSet','name':'','uid':'',"
         "'namespace':'other'}}]",
         false},
        /* labelSelector */
        {"[{'labelSelector':{'matchLabels':{'app':'web'}}}]", true},
        {"[{'labelSelector':{'matchLabels':{'app':'db'}}}]", false},
        {"[{'labelSelector':{'matchExpressions':[{'key':'app','operator':'In','values':["
         "'db','web']}]}}]",
         true},
        {"[{'labelSelector':{}}]", true},
        /* AND inside a term, OR across terms */
        {"[{'object':{'name':'web-0'},'labelSelector':{'matchLabels':{'app':'db'}}}]", false},
        {"[{'object':{'name':'web-0'},'controller':{'apiVersion':'','kind':'ReplicaSet',"
         "'name':'rs','uid':''},'labelSelector':{'matchLabels':{'app':'web'}}}]",
         true},
        {"[{'object':{'name':'other'}},{'labelSelector':{'matchLabels':{'app':'web'}}}]", true},
        /* a bad selector: the reservation matches nothing, even through a {} term */
        {"[{}, {'labelSelector':{'matchExpressions':[{'key':'a','operator':'Gt'}]}}]", false},
    };
    char pod[2048];
    struct sched_resv_pod *p;
    (void)unused;

    (void)snprintf(pod, sizeof(pod), pod_fmt, "", "", "2");
    p = RP(pod);
    assert_null(p->invalid);
    assert_int_equal(p->nowner_refs, 2);
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char spec[1024];
        struct sched_resv *r;
        (void)snprintf(spec, sizeof(spec), ",'owners':%s", cases[i].owners);
        r = resv("", spec, "");
        if (sched_resv_match_owners(r, p) != cases[i].want)
            fail_msg("case %zu (%s): want %d", i, cases[i].owners, cases[i].want);
        (void)sched_resv_unref(r);
    }
    sched_resv_pod_free(p);
}

static void test_pod_without_owner_refs(void **unused)
{
    struct sched_resv *r =
        resv("", ",'owners':[{'controller':{'apiVersion':'','kind':'','name':'','uid':''}}]", "");
    struct sched_resv_pod *p = RP("{'metadata':{'name':'solo','uid':'u'}}");
    (void)unused;

    /* a controller term with every field empty still needs some ownerReference */
    assert_false(sched_resv_match_owners(r, p));
    assert_string_equal(p->namespace, "default");
    sched_resv_pod_free(p);
    (void)sched_resv_unref(r);
}

static void test_bad_selector_reported(void **unused)
{
    struct sched_resv *r = resv(
        "", ",'owners':[{'labelSelector':{'matchExpressions':[{'key':'a','operator':'Gt'}]}}]", "");
    (void)unused;

    assert_non_null(r->invalid);
    assert_non_null(strstr(r->invalid, "spec.owners[0].labelSelector"));
    (void)sched_resv_unref(r);
}

static void test_decode(void **unused)
{
    struct sched_resv *r =
        R("{'metadata':{'name':'r','uid':'u','labels':{'pool':'a'},"
          "'deletionTimestamp':'2024-01-01T00:00:00Z'},'spec':{'owners':[{}],"
          "'allocateOnce':false,'allocatePolicy':'Restricted','unschedulable':true,"
          "'taints':[{'key':'k','value':'v','effect':'NoSchedule'},{'key':'','effect':"
          "'NoSchedule'},{'key':'x','effect':'Bogus'}]},'status':{'phase':'Waiting',"
          "'nodeName':'n','allocatable':{'cpu':'1500m','bad':'x'}}}");
    struct sched_resv *d = R("{'metadata':{'name':'d'},'spec':{}}");
    (void)unused;

    assert_true(r->deleting);
    assert_int_equal(r->phase, SCHED_RESV_WAITING);
    assert_false(r->allocate_once);
    assert_int_equal(r->allocate_policy, SCHED_RESV_POLICY_RESTRICTED);
    assert_true(r->unschedulable);
    assert_int_equal(r->ntaints, 1); /* key and effect are required */
    assert_string_equal(r->taints[0].key, "k");
    assert_int_equal(r->nallocatable, 1);
    assert_string_equal(r->allocatable[0].name, "cpu");
    assert_true(sched_resv_is_active(r));
    /* defaults: allocateOnce true, phase Pending, policy "" */
    assert_true(d->allocate_once);
    assert_int_equal(d->phase, SCHED_RESV_PENDING);
    assert_int_equal(d->allocate_policy, SCHED_RESV_POLICY_DEFAULT);
    assert_false(sched_resv_is_active(d));
    assert_ptr_equal(sched_resv_ref(d), d);
    (void)sched_resv_unref(d);
    (void)sched_resv_unref(d);
    (void)sched_resv_unref(r);
}

static void test_match(void **unused)
{
    static const struct {
        const char *meta;                  /* extra Reservation metadata */
        const char *spec;                  /* extra Reservation spec (owners included) */
        const char *status;                /* overrides of phase / nodeName, or "" */
        const char *plabels, *pmeta, *cpu; /* extra pod labels, pod metadata, pod cpu */
        enum sched_resv_match want;
    } cases[] = {
        /* 0: plain owner match */
        {"", ",'owners':[{'object':{'name':'web-0'}}]", "", "", "", "2", SCHED_RESV_MATCHED},
        /* 1-3: active = Available/Waiting with a node */
        {"", ",'owners':[{}]", "'phase':'Pending',", "", "", "2", SCHED_RESV_INACTIVE},
        {"", ",'owners':[{}]", "'nodeName':'',", "", "", "2", SCHED_RESV_INACTIVE},
        {"", ",'owners':[{}]", "'phase':'Waiting',", "", "", "2", SCHED_RESV_MATCHED},
        /* 4: reservation-ignored comes before the owners */
        {"", ",'owners':[{'object':{'name':'x'}}]", "", ",'" SCHED_RESV_LABEL_IGNORED "':'true'",
         "", "2", SCHED_RESV_IGNORED},
        /* 5: owners */
        {"", ",'owners':[{'object':{'name':'x'}}]", "", "", "", "2", SCHED_RESV_OWNER_UNMATCHED},
        /* 6-8: a named affinity skips unschedulable, taints and selectors */
        {"", ",'owners':[{}],'unschedulable':true,'taints':[{'key':'k','effect':'NoSchedule'}]", "",
         "", ",'annotations':{'" SCHED_RESV_ANN_AFFINITY "':'{`name`:`r1`}'}", "2",
         SCHED_RESV_MATCHED},
        {"", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY "':'{`name`:`r2`}'}", "2",
         SCHED_RESV_NAME_UNMATCHED},
        {"", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY
         "':'{`name`:`r1`}','" SCHED_RESV_ANN_EXACT_MATCH "':'{`resourceNames`:[`cpu`]}'}",
         "1", SCHED_RESV_NOT_EXACT_MATCHED},
        /* 9-10: unschedulable, or being deleted */
        {"", ",'owners':[{}],'unschedulable':true", "", "", "", "2", SCHED_RESV_UNSCHEDULABLE},
        {",'deletionTimestamp':'2024-01-01T00:00:00Z'", ",'owners':[{}]", "", "", "", "2",
         SCHED_RESV_UNSCHEDULABLE},
        /* 11-14: taints count only for pods with an affinity (even an empty one) */
        {"", ",'owners':[{}],'taints':[{'key':'k','value':'v','effect':'NoSchedule'}]", "", "", "",
         "2", SCHED_RESV_MATCHED},
        {"", ",'owners':[{}],'taints':[{'key':'k','value':'v','effect':'NoSchedule'}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY "':''}", "2", SCHED_RESV_TAINTS_UNTOLERATED},
        {"", ",'owners':[{}],'taints':[{'key':'k','value':'v','effect':'NoExecute'}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY
         "':'{`tolerations`:[{`key`:`k`,`operator`:`Equal`,`value`:`v`}]}'}",
         "2", SCHED_RESV_MATCHED},
        {"", ",'owners':[{}],'taints':[{'key':'k','effect':'PreferNoSchedule'}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY "':'{}'}", "2", SCHED_RESV_MATCHED},
        /* 15-18: reservationSelector on the reservation's labels over the node's (zone=z1) */
        {",'labels':{'pool':'a'}", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY "':'{`reservationSelector`:{`pool`:`a`}}'}",
         "2", SCHED_RESV_MATCHED},
        {",'labels':{'pool':'b'}", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY "':'{`reservationSelector`:{`pool`:`a`}}'}",
         "2", SCHED_RESV_AFFINITY_UNMATCHED},
        {"", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY "':'{`reservationSelector`:{`zone`:`z1`}}'}",
         "2", SCHED_RESV_MATCHED},
        {",'labels':{'zone':'z2'}", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY "':'{`reservationSelector`:{`zone`:`z1`}}'}",
         "2", SCHED_RESV_AFFINITY_UNMATCHED},
        /* 19-21: required terms, matchFields metadata.name = the reservation's name */
        {",'labels':{'pool':'a'}", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY
         "':'{`requiredDuringSchedulingIgnoredDuringExecution`:{`reservationSelectorTerms`:[{"
         "`matchExpressions`:[{`key`:`pool`,`operator`:`In`,`values`:[`b`]}]},{"
         "`matchExpressions`:[{`key`:`pool`,`operator`:`In`,`values`:[`a`]}]}]}}'}",
         "2", SCHED_RESV_MATCHED},
        {"", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY
         "':'{`requiredDuringSchedulingIgnoredDuringExecution`:{`reservationSelectorTerms`:[{"
         "`matchFields`:[{`key`:`metadata.name`,`operator`:`In`,`values`:[`r1`]}]}]}}'}",
         "2", SCHED_RESV_MATCHED},
        {"", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_AFFINITY
         "':'{`requiredDuringSchedulingIgnoredDuringExecution`:{`reservationSelectorTerms`:[{"
         "`matchFields`:[{`key`:`metadata.name`,`operator`:`In`,`values`:[`r9`]}]}]}}'}",
         "2", SCHED_RESV_AFFINITY_UNMATCHED},
        /* 22-26: exact match against allocatable cpu 2, memory 4Gi */
        {"", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_EXACT_MATCH "':'{`resourceNames`:[`cpu`,`memory`]}'}",
         "2000m", SCHED_RESV_MATCHED},
        {"", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_EXACT_MATCH "':'{`resourceNames`:[`cpu`]}'}", "1",
         SCHED_RESV_NOT_EXACT_MATCHED},
        /* absent from both sides ends the check with a match, cpu is not looked at */
        {"", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_EXACT_MATCH
         "':'{`resourceNames`:[`example.com/gpu`,`cpu`]}'}",
         "1", SCHED_RESV_MATCHED},
        {"", ",'owners':[{}]", "'allocatable':{'cpu':'2','example.com/gpu':'1'},", "",
         ",'annotations':{'" SCHED_RESV_ANN_EXACT_MATCH
         "':'{`resourceNames`:[`example.com/gpu`]}'}",
         "2", SCHED_RESV_NOT_EXACT_MATCHED},
        {"", ",'owners':[{}]", "", "",
         ",'annotations':{'" SCHED_RESV_ANN_EXACT_MATCH "':'{`resourceNames`:[]}'}", "1",
         SCHED_RESV_MATCHED},
    };
    cJSON *node_labels = js("{'zone':'z1','pool':'n'}");
    (void)unused;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char pod[4096];
        struct sched_resv *r = resv(cases[i].meta, cases[i].spec, cases[i].status);
        struct sched_resv_pod *rp;
        struct sched_pod *sp;
        enum sched_resv_match m;

        (void)snprintf(pod, sizeof(pod), pod_fmt, cases[i].plabels, cases[i].pmeta, cases[i].cpu);
        rp = RP(pod);
        sp = SP(pod);
        if (rp->invalid)
            fail_msg("case %zu: pod invalid: %s", i, rp->invalid);
        m = sched_resv_match(r, rp, &sp->req, node_labels, NULL);
        if (m != cases[i].want)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, sched_resv_match_str(m),
                     sched_resv_match_str(cases[i].want));
        sched_resv_pod_free(rp);
        (void)sched_pod_unref(sp);
        (void)sched_resv_unref(r);
    }
    cJSON_Delete(node_labels);
}

static void test_untolerated_taint_reported(void **unused)
{
    struct sched_resv *r = resv("",
                                ",'owners':[{}],'taints':[{'key':'a','effect':'NoSchedule'},"
                                "{'key':'b','value':'v','effect':'NoExecute'}]",
                                "");
    char pod[2048];
    struct sched_resv_pod *rp;
    struct sched_pod *sp;
    const struct sched_taint *t = NULL;
    (void)unused;

    (void)snprintf(pod, sizeof(pod), pod_fmt, "",
                   ",'annotations':{'" SCHED_RESV_ANN_AFFINITY
                   "':'{`tolerations`:[{`key`:`a`,`operator`:`Exists`}]}'}",
                   "2");
    rp = RP(pod);
    sp = SP(pod);
    assert_int_equal(sched_resv_match(r, rp, &sp->req, NULL, &t), SCHED_RESV_TAINTS_UNTOLERATED);
    assert_non_null(t);
    assert_string_equal(t->key, "b");
    sched_resv_pod_free(rp);
    (void)sched_pod_unref(sp);
    (void)sched_resv_unref(r);
}

static void test_pod_decode(void **unused)
{
    static const struct {
        const char *annotations;
        const char *invalid; /* substring of the error, or NULL */
    } cases[] = {
        {"{}", NULL},
        {"{'" SCHED_RESV_ANN_AFFINITY "':'not json'}", SCHED_RESV_ANN_AFFINITY ": not a JSON"},
        {"{'" SCHED_RESV_ANN_AFFINITY "':'{`reservationSelector`:{`a`:1}}'}",
         "reservationSelector.a"},
        {"{'" SCHED_RESV_ANN_AFFINITY
         "':'{`requiredDuringSchedulingIgnoredDuringExecution`:{`reservationSelectorTerms`:[{"
         "`matchExpressions`:[{`key`:`a`,`operator`:`Bad`}]}]}}'}",
         "reservationSelectorTerms[0].matchExpressions[0].operator"},
        {"{'" SCHED_RESV_ANN_AFFINITY "':'{`tolerations`:[{`key`:`a`,`effect`:`Bad`}]}'}",
         "tolerations[0].effect"},
        {"{'" SCHED_RESV_ANN_EXACT_MATCH "':'[1]'}", SCHED_RESV_ANN_EXACT_MATCH},
    };
    (void)unused;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char pod[2048];
        struct sched_resv_pod *p;
        (void)snprintf(pod, sizeof(pod), "{'metadata':{'name':'p','annotations':%s}}",
                       cases[i].annotations);
        p = RP(pod);
        if (!cases[i].invalid)
            assert_null(p->invalid);
        else if (!p->invalid || !strstr(p->invalid, cases[i].invalid))
            fail_msg("case %zu: invalid \"%s\", want \"%s\"", i, p->invalid ? p->invalid : "",
                     cases[i].invalid);
        sched_resv_pod_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owners),
        cmocka_unit_test(test_pod_without_owner_refs),
        cmocka_unit_test(test_bad_selector_reported),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_untolerated_taint_reported),
        cmocka_unit_test(test_pod_decode),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
