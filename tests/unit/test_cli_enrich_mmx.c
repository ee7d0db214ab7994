/*
 * test_cli_enrich_mmx.c — the mmexternal exchange of `kcache enrich` (tools/kcache/enrich_mmx.c)
 * driven through files and pipes with a fake metadata view: spec enrich-semantics.md MX4–MX6,
 * MX10/MX11 and §9 checklist items 3, 10, 11 and 15 (in-process; the binary's own exit and
 * stderr behaviour, item 12, is tests/conformance/run_enrich.sh).
 */
#include "enrich.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kcache/error.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const kc__enrich_fields fields = {.filename = "$!metadata!filename",
                                         .container_name = "$!CONTAINER_NAME",
                                         .container_id_full = "$!CONTAINER_ID_FULL"};

/* The fake view: every pod exists, its labels say its name; pod "gone" is not found. */
static int fake_lookup(void *ud, const kc__enrich_key *key, kc__enrich_meta *ret)
{
    (void)ud;
    memset(ret, 0, sizeof *ret);
    if (!strcmp(key->pod, "gone"))
        return KC_ENOTFOUND;
    ret->pod = json_pack("{s:{s:s,s:s,s:{s:s}},s:{s:s}}", "metadata", "name", key->pod, "uid", "u1",
                         "labels", "pod", key->pod, "spec", "nodeName", "n1");
    return 0;
}

static kc__enrich_out out_mmk(void)
{
    kc__enrich_out o = {.fmt = KC_ENRICH_FMT_MMK, .labels = true, .ns_meta = true, .de_dot = true};
    strcpy(o.de_dot_sep, "_");
    o.master_url = "https://m";
    return o;
}

static kc__enrich_loop loop_for(const kc__enrich_out *o, int in, int out)
{
    return (kc__enrich_loop){.in_fd = in,
                             .out_fd = out,
                             .mmexternal = true,
                             .max_line = 1 << 20,
                             .fmt = o->fmt,
                             .fields = &fields,
                             .out = o,
                             .view = {.lookup = fake_lookup}};
}

/* Run the loop over input (a temp file) and return its output (malloc'd). */
static char *run_over(kc__enrich_loop *l, const char *input, size_t len)
{
    FILE *in = tmpfile(), *out = tmpfile();
    assert_non_null(in);
    assert_non_null(out);
    assert_int_equal(fwrite(input, 1, len, in), len);
    fflush(in);
    rewind(in);
    l->in_fd = fileno(in);
    l->out_fd = fileno(out);
    assert_int_equal(kc__enrich_run(l), 0);
    long n = lseek(l->out_fd, 0, SEEK_END);
    char *r = malloc((size_t)n + 1);
    assert_int_equal(pread(l->out_fd, r, (size_t)n, 0), n);
    r[n] = '\0';
    fclose(in);
    fclose(out);
    return r;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* §9.10 (MX4, MX5): 100k mixed lines — enriched, not JSON, naming no pod, msg with '\n' — get
 * one valid JSON line each, in order. */
static void test_cli_enrich_mmx_100k_lines_in_order(void **state)
{
    (void)state;
    enum { N = 100000 };
    size_t cap = (size_t)N * 200, len = 0;
    char *in = malloc(cap);
    for (int i = 0; i < N; i++) {
        switch (i % 4) {
        case 0:
        case 1:
            len +=
                (size_t)sprintf(in + len,
                                "{\"msg\":\"line %d\\nsecond\\r\\n\",\"$!\":{\"metadata\":{"
                                "\"filename\":\"/var/log/containers/p%d_ns_c-" ID64 ".log\"}}}\n",
                                i, i);
            break;
        case 2:
            len += (size_t)sprintf(in + len, "{\"msg\":\"x\",\"$!\":{}}\n");
            break;
        default:
            len += (size_t)sprintf(in + len, "{not json %d\n", i);
        }
    }
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l = loop_for(&o, -1, -1);
    char *out = run_over(&l, in, len);
    assert_int_equal(count_lines(out), N);
    char *line = out;
    for (int i = 0; i < N; i++) {
        char *nl = strchr(line, '\n');
        json_t *r = json_loadb(line, (size_t)(nl - line), 0, NULL);
        assert_true(json_is_object(r));
        if (i % 4 < 2) {
            char want[32];
            snprintf(want, sizeof want, "p%d", i);
            json_t *k = json_object_get(json_object_get(r, "$!"), "kubernetes");
            assert_string_equal(json_string_value(json_object_get(k, "pod_name")), want);
            assert_string_equal(
                json_string_value(json_object_get(json_object_get(k, "labels"), "pod")), want);
        } else {
            assert_int_equal(json_object_size(r), 0); /* {} */
        }
        json_decref(r);
        line = nl + 1;
    }
    assert_int_equal(l.stats.lines, N);
    assert_int_equal(l.stats.malformed, N / 4);
    assert_int_equal(l.stats.no_match, N / 4);
    assert_int_equal(l.stats.enriched, N / 2);
    free(out);
    free(in);
}

/* §9.3 (FN10) and malformed input (MX8's other side): {} and counted, never a lost line. */
static void test_cli_enrich_mmx_malformed_passes(void **state)
{
    (void)state;
    static const char in[] = "\n"
                             "null\n"
                             "[]\n"
                             "\"str\"\n"
                             "{\"a\":1}{\"b\":2}\n"
                             "{\"$!\":{\"metadata\":{\"filename\":\"/var/log/x.log\"}}}\n"
                             "\xff\xfe\n"
                             "{\"msg\":\"\\u0000\"}\n";
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l = loop_for(&o, -1, -1);
    char *out = run_over(&l, in, sizeof in - 1);
    assert_string_equal(out, "{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n");
    assert_int_equal(l.stats.lines, 8);
    assert_int_equal(l.stats.malformed, 6);
    assert_int_equal(l.stats.no_match, 2);
    free(out);
}

/* Long lines: answered {} and counted; the next line is read normally; memory bounded. */
static void test_cli_enrich_mmx_long_lines(void **state)
{
    (void)state;
    size_t big = 3u << 20;
    char *in = malloc(big + 16384);
    size_t len = (size_t)sprintf(in, "{\"$!\":{\"metadata\":{\"filename\":\"/var/log/containers/"
                                     "a_b_c-" ID64 ".log\"}}}\n{\"msg\":\"");
    memset(in + len, 'x', big);
    len += big;
    len += (size_t)sprintf(in + len, "\"}\n{\"$!\":{\"metadata\":{\"filename\":\"/var/log/"
                                     "containers/d_e_f-" ID64 ".log\"}}}\n");
    memset(in + len, 'y', 5000); /* a last long line without LF */
    len += 5000;
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l = loop_for(&o, -1, -1);
    l.max_line = 4096;
    char *out = run_over(&l, in, len);
    assert_int_equal(count_lines(out), 4);
    char *second = strchr(out, '\n') + 1, *third = strchr(second, '\n') + 1;
    assert_non_null(strstr(out, "\"pod_name\":\"a\""));
    assert_memory_equal(second, "{}\n", 3);
    assert_non_null(strstr(third, "\"pod_name\":\"d\""));
    assert_string_equal(strchr(third, '\n') + 1, "{}\n");
    assert_int_equal(l.stats.too_long, 2);
    free(out);
    free(in);
}

/* §9.11 (MX6): the reply carries the complete kubernetes object, so it replaces a stale one. */
static void test_cli_enrich_mmx_replaces_subtree(void **state)
{
    (void)state;
    static const char in[] =
        "{\"$!\":{\"kubernetes\":{\"stale\":1,\"pod_name\":\"old\"},"
        "\"metadata\":{\"filename\":\"/var/log/containers/web-0_shop_app-" ID64 ".log\"}}}\n";
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l = loop_for(&o, -1, -1);
    char *out = run_over(&l, in, sizeof in - 1);
    json_t *r = json_loads(out, 0, NULL);
    json_t *k = json_object_get(json_object_get(r, "$!"), "kubernetes");
    assert_null(json_object_get(k, "stale"));
    assert_string_equal(json_string_value(json_object_get(k, "pod_name")), "web-0");
    assert_string_equal(json_string_value(json_object_get(k, "host")), "n1");
    assert_string_equal(json_string_value(json_object_get(k, "pod_id")), "u1");
    /* only "$!" at the top level, only kubernetes and docker under it */
    assert_int_equal(json_object_size(r), 1);
    assert_int_equal(json_object_size(json_object_get(r, "$!")), 2);
    json_decref(r);
    free(out);
}

/* A pod not found: file-derived fields (CA4, DP4); the filter mode keeps the record. */
static void test_cli_enrich_mmx_not_found_and_filter(void **state)
{
    (void)state;
    static const char in[] =
        "{\"m\":1,\"$!\":{\"metadata\":{\"filename\":\"/var/log/containers/gone_shop_app-" ID64
        ".log\"}}}\n{\"m\":2}\n";
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l = loop_for(&o, -1, -1);
    char *out = run_over(&l, in, sizeof in - 1);
    assert_non_null(strstr(out, "\"pod_name\":\"gone\""));
    assert_null(strstr(out, "pod_id"));
    assert_int_equal(l.stats.file_only, 1);
    free(out);
    l = loop_for(&o, -1, -1);
    l.mmexternal = false;
    out = run_over(&l, in, sizeof in - 1);
    json_t *r = json_loadb(out, (size_t)(strchr(out, '\n') - out), 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(r, "m")), 1);
    assert_non_null(json_object_get(r, "kubernetes"));
    json_decref(r);
    assert_string_equal(strchr(out, '\n') + 1, "{\"m\":2}\n");
    free(out);
}

static pthread_t main_thread;
static volatile int stop_flag;

static void on_usr1(int sig) /* runs on the loop's thread, as cmd_enrich.c's handler does */
{
    (void)sig;
    stop_flag = 1;
}

static void *stopper(void *arg)
{
    (void)arg;
    usleep(50 * 1000); /* the loop is blocked in ppoll by then, or the signal waits for it */
    pthread_kill(main_thread, SIGUSR1);
    return NULL;
}

/* §9.15 (MX11): a signal ends a loop waiting for input; EOF ends it with 0. */
static void test_cli_enrich_mmx_signal_and_eof(void **state)
{
    (void)state;
    int p[2], q[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(pipe(q), 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    struct sigaction sa = {.sa_handler = on_usr1};
    sigaction(SIGUSR1, &sa, NULL);
    kc__enrich_out o = out_mmk();
    kc__enrich_loop l = loop_for(&o, p[0], q[1]);
    l.stop = &stop_flag;
    main_thread = pthread_self();
    pthread_t th;
    pthread_create(&th, NULL, stopper, NULL);
    assert_int_equal(kc__enrich_run(&l), 0); /* returns only because of the signal */
    pthread_join(th, NULL);
    assert_true(stop_flag);
    /* EOF: the writer closes after one line; one reply, then 0 */
    stop_flag = 0;
    assert_int_equal(write(p[1], "{}\n", 3), 3);
    close(p[1]);
    assert_int_equal(kc__enrich_run(&l), 0);
    char buf[8] = {0};
    assert_int_equal(read(q[0], buf, sizeof buf - 1), 3);
    assert_string_equal(buf, "{}\n");
    close(p[0]);
    close(q[0]);
    close(q[1]);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_enrich_mmx_100k_lines_in_order),
        cmocka_unit_test(test_cli_enrich_mmx_malformed_passes),
        cmocka_unit_test(test_cli_enrich_mmx_long_lines),
        cmocka_unit_test(test_cli_enrich_mmx_replaces_subtree),
        cmocka_unit_test(test_cli_enrich_mmx_not_found_and_filter),
        cmocka_unit_test(test_cli_enrich_mmx_signal_and_eof),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
