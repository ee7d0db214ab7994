/*
 * cli_watch.c — what the two watching commands (`kcache watch`, `kcache get -w`) share: stopping
 * on Ctrl-C, and telling the user why a watch ended in words of their own, not the transport's.
 *
 * Design: SIGINT and SIGTERM are blocked in every thread and taken by a small thread with
 * sigwait(), which fires the watch's kc_cancel (a signal handler could not safely do that);
 * SIGUSR1 tells that thread the watch ended by itself. A watch that ends is explained as: the
 * server closed the stream (with the last resourceVersion, to resume from with watch --rv; get -w
 * then exits 0 as kubectl get -w does), the connection broke
 * or timed out (libcurl's text is not shown: it names internals such as "transfer closed with
 * outstanding read data remaining"), or the error from the server as every command reports it.
 */
#include "cli.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct kc__cli_sigstop {
    sigset_t set;
    kc_cancel *cancel;
    pthread_t th;
};

static void *sig_thread(void *p)
{
    kc__cli_sigstop *s = p;
    int sig = 0;
    sigwait(&s->set, &sig);
    if (sig != SIGUSR1) /* SIGUSR1: the watch ended by itself, just exit */
        kc_cancel_fire(s->cancel);
    return NULL;
}

kc__cli_sigstop *kc__cli_sigstop_start(kc_cancel *cancel)
{
    kc__cli_sigstop *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->cancel = cancel;
    sigemptyset(&s->set);
    sigaddset(&s->set, SIGINT);
    sigaddset(&s->set, SIGTERM);
    sigaddset(&s->set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &s->set, NULL);
    if (pthread_create(&s->th, NULL, sig_thread, s)) {
        free(s);
        return NULL;
    }
    return s;
}

void kc__cli_sigstop_end(kc__cli_sigstop *s)
{
    if (!s)
        return;
    if (!kc_cancel_fired(s->cancel))
        pthread_kill(s->th, SIGUSR1);
    pthread_join(s->th, NULL);
    free(s);
}

int kc__cli_watch_ended(const char *cmd, int rc, const kc_error *err, unsigned long events,
                        const char *last_rv)
{
    char where[200];
    snprintf(where, sizeof where, "after %lu event%s%s%s", events, events == 1 ? "" : "s",
             *last_rv ? ", last resourceVersion " : "", last_rv);
    if (rc == KC_ECANCELED) /* interrupted: what the user asked for */
        return 0;
    bool resumable = !strcmp(cmd, "watch"); /* only watch takes --rv */
    if (rc == 0) {
        fprintf(stderr, "kcache %s: the server closed the watch stream %s%s%s\n", cmd, where,
                *last_rv && resumable ? "; resume with --rv " : "",
                *last_rv && resumable ? last_rv : "");
        return resumable ? KC_CLI_EXIT_FAIL : 0; /* get -w: kubectl exits 0 there */
    }
    if (rc == KC_EIO && !(err && err->http_status)) {
        fprintf(stderr, "kcache %s: the connection to the server broke (%s)\n", cmd, where);
    } else if (rc == KC_ETIMEOUT && !(err && err->http_status)) {
        fprintf(stderr, "kcache %s: the server stopped answering (%s)\n", cmd, where);
    } else {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s (%s)", err && err->message ? err->message : kc_strerror(rc),
                 where);
        kc_error shown = err ? *err : (kc_error)KC_ERROR_INIT;
        shown.message = msg;
        kc__cli_error(cmd, rc, &shown);
    }
    return KC_CLI_EXIT_FAIL;
}
