/*
 * bench_events.c — what recording an Event costs the caller, and how fast the sender drains.
 *
 * 1. record: N calls of kc_event_recorder_record from one thread into a queue big enough to hold
 *    them all (nothing dropped), timed around the loop: the cost a reconcile pays per event
 *    (format, copy, one mutex hold), while the sender is working on the other core.
 * 2. drain: from the first record to kc_event_recorder_flush returning, with every event reaching
 *    the embedded API server (loopback, no client rate limit): events handled per second, over a
 *    mix of 500 objects × 40 repeats of one message — 500 creates and 19,500 patches, the spam
 *    filter turned off so that every event is a request.
 * 3. the same drain with the default spam filter: 25 requests per object, the rest skipped.
 * Prints human text and `BENCH <metric> <value> <unit>` lines.
 */
#include "core/internal.h"
#include "kcache/event.h"
#include "kcache/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OBJECTS 500
#define REPEATS 40
#define N       (OBJECTS * REPEATS)

static void die(const char *what, int rc, const kc_error *e)
{
    fprintf(stderr, "bench_events: %s: %s%s%s\n", what, kc_strerror(rc),
            e && e->message ? ": " : "", e && e->message ? e->message : "");
    exit(1);
}

/* One run: returns the ns spent in record calls; *drain_ns gets first record → flush done. */
static uint64_t run(kc_client *cli, int spam_burst, uint64_t *drain_ns, kc_event_recorder_stats *st)
{
    kc_event_recorder_opts o = {
        .component = "bench", .host = "h", .queue_len = N, .spam_burst = spam_burst};
    kc_event_recorder *rec = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_event_recorder_new(cli, &o, &rec, &err);
    if (rc)
        die("recorder", rc, &err);
    char name[32];
    uint64_t in_record = 0, t0 = kc__now_ns();
    for (int r = 0; r < REPEATS; r++)
        for (int i = 0; i < OBJECTS; i++) {
            snprintf(name, sizeof name, "pod-%d", i);
            kc_event_ref ref = {"v1", "Pod", "bench", name, NULL, NULL, NULL};
            uint64_t a = kc__now_ns();
            rc = kc_event_recorder_record(rec, &ref, KC_EVENT_NORMAL, "Reconciled", "reconciled %s",
                                          name);
            in_record += kc__now_ns() - a;
            if (rc)
                die("record", rc, NULL);
        }
    if ((rc = kc_event_recorder_flush(rec, 300000, &err)) != 0)
        die("flush", rc, &err);
    *drain_ns = kc__now_ns() - t0;
    kc_event_recorder_get_stats(rec, st);
    kc_event_recorder_free(rec);
    return in_record;
}

int main(void)
{
    kc_server_opts so = {.listen = "127.0.0.1:0", .quiet = true, .history = 1000};
    kc_server *srv = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_server_new(&so, &srv, &err);
    if (rc == 0)
        rc = kc_server_start(srv, &err);
    if (rc)
        die("server", rc, &err);
    kc_config *cfg = NULL;
    kc_client *cli = NULL;
    kc_client_opts co = {.qps = -1};
    if ((rc = kc_config_from_url(kc_server_url(srv), NULL, NULL, &cfg, &err)) != 0 ||
        (rc = kc_client_new(cfg, &co, &cli, &err)) != 0)
        die("client", rc, &err);
    kc_config_unref(cfg);
    const kc_gvr ns = {"", "v1", "namespaces"};
    const char *nsb = "{\"metadata\":{\"name\":\"bench\"}}";
    if ((rc = kc_client_create(cli, &ns, NULL, nsb, strlen(nsb), NULL, NULL, &err)) != 0)
        die("namespace", rc, &err);

    kc_event_recorder_stats st;
    uint64_t drain = 0;
    uint64_t rec_ns = run(cli, -1, &drain, &st);
    printf("record: %d calls, %.0f ns per call (caller side)\n", N, (double)rec_ns / N);
    printf("drain, no spam filter: %llu created + %llu patched in %.1f ms = %.0f events/s\n",
           (unsigned long long)st.created, (unsigned long long)st.patched, (double)drain / 1e6,
           N / ((double)drain / 1e9));
    printf("BENCH events_record_ns %.0f ns\n", (double)rec_ns / N);
    printf("BENCH events_drain_per_s %.0f events/s\n", N / ((double)drain / 1e9));

    uint64_t rec2 = run(cli, 0, &drain, &st);
    printf("drain, spam filter on: %llu requests, %llu skipped, in %.1f ms = %.0f events/s "
           "(record %.0f ns per call)\n",
           (unsigned long long)(st.created + st.patched), (unsigned long long)st.spam_filtered,
           (double)drain / 1e6, N / ((double)drain / 1e9), (double)rec2 / N);
    printf("BENCH events_drain_spam_per_s %.0f events/s\n", N / ((double)drain / 1e9));

    kc_client_free(cli);
    kc_server_free(srv);
    return 0;
}
