/*
 * bench_doc — kc_doc_from_obj, the hot path of create-or-update (every edit of a cached object
 * starts by copying it into a kc_doc), built two ways, and kc_doc_json back to text.
 *
 * Usage: bench_doc [ITERS] [REPS]   (ITERS operations per repetition, default 20000; REPS timed
 * repetitions, default 9)
 *
 * Workload, one object at a time, one thread: (1) a Pod from bench/genpod.h as the cache stores it
 * (kc_obj_parse with default options drops metadata.managedFields: ~3.7 KB of compact JSON, the
 * "typical ~4 KB Pod"); (2) a ConfigMap of 12 data entries (~0.9 KB), the mirror controller's
 * input (issue 31). Per object:
 *   obj_parse        kc_obj_parse of the stored text: the floor (simdjson + one copy, no tree)
 *   from_obj_jansson kc_doc_from_obj by (a): jansson's json_loadb over the stored text
 *   from_obj_sj      kc_doc_from_obj by (b): a simdjson On-Demand walk building the jansson tree
 *   json             kc_doc_json of the document (doc_write.c)
 *   json_jansson     jansson's json_dumps(JSON_COMPACT) of the same tree: the encoder it replaced
 *   round_jansson    (a) + kc_doc_json + frees: what a create-or-update pays besides the request
 *   round_sj         (b) + kc_doc_json + frees
 * Every from_obj result is freed inside the timed loop (kc_doc_free is part of the cost).
 *
 * Method: thread CPU time (CLOCK_THREAD_CPUTIME_ID; the VM is shared), one untimed warm-up
 * repetition per figure, then REPS timed repetitions of ITERS operations; the median per
 * operation is printed with min and max. Before timing, both builders' documents are checked to be
 * kc_doc_equal and to serialise to the same text.
 *
 * Output: human-readable lines, plus one `BENCH <metric> <value> <unit>` line per figure.
 */
#include "decode_sink.h"
#include "genpod.h"

#include <kcache/doc.h>

#include "json/doc_internal.h" /* kc__doc_from_obj_with: both builders */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_iters = 20000, g_reps = 9;

enum op { OP_OBJ_PARSE, OP_FROM_A, OP_FROM_B, OP_JSON, OP_JSON_JANSSON, OP_ROUND_A, OP_ROUND_B };

static void check(int r, const char *what, const kc_error *err)
{
    if (r)
        die(what, r, err);
}

/* One operation of kind op on (text, obj, doc). */
static void run_op(enum op op, const char *text, size_t len, const kc_obj *obj, const kc_doc *doc)
{
    kc_error err = KC_ERROR_INIT;
    kc_obj *o;
    kc_doc *d;
    char *js;
    switch (op) {
    case OP_OBJ_PARSE:
        check(kc_obj_parse(text, len, NULL, &o, &err), "kc_obj_parse", &err);
        kc_obj_unref(o);
        return;
    case OP_FROM_A:
    case OP_FROM_B:
        check(kc__doc_from_obj_with(
                  obj, op == OP_FROM_A ? KC__DOC_BUILD_JANSSON : KC__DOC_BUILD_SIMDJSON, &d, &err),
              "kc_doc_from_obj", &err);
        kc_doc_free(d);
        return;
    case OP_JSON:
        check(kc_doc_json(doc, &js, NULL, &err), "kc_doc_json", &err);
        free(js);
        return;
    case OP_JSON_JANSSON:
        js = json_dumps(doc->root, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!js)
            die("json_dumps", KC_ENOMEM, NULL);
        free(js);
        return;
    case OP_ROUND_A:
    case OP_ROUND_B:
        check(kc__doc_from_obj_with(
                  obj, op == OP_ROUND_A ? KC__DOC_BUILD_JANSSON : KC__DOC_BUILD_SIMDJSON, &d, &err),
              "kc_doc_from_obj", &err);
        check(kc_doc_json(d, &js, NULL, &err), "kc_doc_json", &err);
        free(js);
        kc_doc_free(d);
        return;
    }
}

/* Median ns per operation over g_reps repetitions (after one warm-up). */
static struct stats measure(enum op op, const char *text, size_t len, const kc_obj *obj,
                            const kc_doc *doc)
{
    double *v = malloc(sizeof *v * (size_t)g_reps);
    for (int rep = -1; rep < g_reps; rep++) {
        double t0 = cpu_now();
        for (int i = 0; i < g_iters; i++)
            run_op(op, text, len, obj, doc);
        if (rep >= 0)
            v[rep] = (cpu_now() - t0) * 1e9 / g_iters;
    }
    struct stats s = summarize(v, g_reps);
    free(v);
    return s;
}

/* (a) and (b) must give the same document. */
static void same_docs(const kc_obj *obj)
{
    kc_error err = KC_ERROR_INIT;
    kc_doc *a, *b;
    char *ja, *jb;
    check(kc__doc_from_obj_with(obj, KC__DOC_BUILD_JANSSON, &a, &err), "from_obj (a)", &err);
    check(kc__doc_from_obj_with(obj, KC__DOC_BUILD_SIMDJSON, &b, &err), "from_obj (b)", &err);
    check(kc_doc_json(a, &ja, NULL, &err), "kc_doc_json", &err);
    check(kc_doc_json(b, &jb, NULL, &err), "kc_doc_json", &err);
    if (!kc_doc_equal(a, b) || strcmp(ja, jb) != 0) {
        fprintf(stderr, "builders differ:\n%s\n%s\n", ja, jb);
        exit(1);
    }
    free(ja);
    free(jb);
    kc_doc_free(a);
    kc_doc_free(b);
}

static void bench_object(const char *name, const char *text, size_t len)
{
    kc_error err = KC_ERROR_INIT;
    kc_obj *obj;
    check(kc_obj_parse(text, len, NULL, &obj, &err), "kc_obj_parse", &err);
    size_t stored;
    const char *st = kc_obj_json(obj, &stored);
    same_docs(obj);
    kc_doc *doc;
    check(kc_doc_from_obj(obj, &doc, &err), "kc_doc_from_obj", &err);
    printf("%s: %zu bytes of input, %zu stored\n", name, len, stored);
    static const struct {
        enum op op;
        const char *metric;
    } figs[] = {{OP_OBJ_PARSE, "obj_parse"},       {OP_FROM_A, "from_obj_jansson"},
                {OP_FROM_B, "from_obj_sj"},        {OP_JSON, "json"},
                {OP_JSON_JANSSON, "json_jansson"}, {OP_ROUND_A, "round_jansson"},
                {OP_ROUND_B, "round_sj"}};
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        /* The floor parses the stored text: what the cache holds, as from_obj reads it. */
        struct stats s = measure(figs[i].op, st, stored, obj, doc);
        printf("  %-18s %9.0f ns/op (min %.0f, max %.0f)\n", figs[i].metric, s.med, s.min, s.max);
        printf("BENCH doc_%s_%s_ns %.0f ns\n", name, figs[i].metric, s.med);
    }
    kc_doc_free(doc);
    kc_obj_unref(obj);
}

/* A ConfigMap of 12 data entries (mirror=true: issue 31's controller input). */
static size_t make_configmap(char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(
        buf, cap,
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"app-config\","
        "\"namespace\":\"ns-1\",\"uid\":\"6c1b2f0e-0d4a-4c36-9a55-3d0e8f7b9c21\","
        "\"resourceVersion\":\"1200345\",\"creationTimestamp\":\"2024-05-01T12:00:00Z\","
        "\"labels\":{\"mirror\":\"true\",\"app\":\"web\"},\"annotations\":{\"owner\":\"team-a\"}},"
        "\"data\":{");
    for (int i = 0; i < 12 && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s\"key-%02d\":\"value-%02d-0123456789abcdef\"",
                              i ? "," : "", i, i);
    n += (size_t)snprintf(buf + n, cap - n, "}}");
    return n;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_iters = atoi(argv[1]);
    if (argc > 2)
        g_reps = atoi(argv[2]);
    if (g_iters <= 0 || g_reps <= 0) {
        fprintf(stderr, "usage: bench_doc [ITERS] [REPS]\n");
        return 2;
    }
    char *pod = malloc(KC_GENPOD_MAX);
    size_t pod_len = kc_genpod_one(pod, KC_GENPOD_MAX, 7);
    bench_object("pod", pod, pod_len);
    char cm[4096];
    size_t cm_len = make_configmap(cm, sizeof cm);
    bench_object("configmap", cm, cm_len);
    free(pod);
    return 0;
}
