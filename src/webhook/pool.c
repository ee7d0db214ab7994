/*
 * webhook/pool.c — the handler workers: bounded concurrency and a bounded wait.
 *
 * Design: a fixed set of `workers` threads takes jobs from one FIFO queue, so at most `workers`
 * reviews (and user handlers) run at once whatever the number of connections. The caller — the
 * libmicrohttpd thread of the connection — queues a job and waits on the job's condition variable
 * until the request's deadline (request_timeout_ms from the request's first byte). A C thread
 * cannot be cancelled safely, so a handler that overruns is not stopped: the caller stops
 * waiting, answers 504 to the client and drops its reference; the worker finishes the handler
 * "into the void" and frees the job and its answer. Such a worker stays busy meanwhile, which is
 * what bounded concurrency means. Jobs are reference-counted (caller + worker).
 */
#include "webhook/transport.h"

#include <stdlib.h>
#include <string.h>

typedef struct job {
    struct job *next;
    int refs; /* guarded by the pool's mutex */
    const kc__wh_route *route;
    char *ctype_in, *body; /* owned by the job: the handler may outlive the caller's wait */
    size_t len;
    bool done;
    int rc, status;
    char *resp;
    size_t resp_len;
    const char *ctype;
    pthread_cond_t cond;
} job;

struct kc__wh_pool {
    kc_webhook_server *srv;
    pthread_mutex_t mu;
    pthread_cond_t cond; /* a job queued, a worker idle, or stopping */
    job *head, *tail;
    bool stopping;
    unsigned n;
    pthread_t *threads;
};

static void job_unref(kc__wh_pool *p, job *j)
{
    if (--j->refs > 0)
        return;
    (void)p;
    pthread_cond_destroy(&j->cond);
    free(j->resp);
    free(j->ctype_in);
    free(j->body);
    free(j);
}

static void *worker(void *arg)
{
    kc__wh_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stopping)
            pthread_cond_wait(&p->cond, &p->mu);
        if (!p->head)
            break; /* stopping and nothing left */
        job *j = p->head;
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        int status = 500;
        char *resp = NULL;
        size_t resp_len = 0;
        const char *ctype = "text/plain; charset=utf-8";
        int rc = kc__wh_review(p->srv, j->route, j->ctype_in, j->body, j->len, &status, &resp,
                               &resp_len, &ctype);
        pthread_mutex_lock(&p->mu);
        j->rc = rc;
        j->status = status;
        j->resp = resp;
        j->resp_len = resp_len;
        j->ctype = ctype;
        j->done = true;
        pthread_cond_signal(&j->cond);
        job_unref(p, j);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int kc__wh_pool_new(kc_webhook_server *srv, unsigned workers, kc__wh_pool **ret)
{
    kc__wh_pool *p = calloc(1, sizeof(*p));
    if (!p)
        return KC_ENOMEM;
    p->srv = srv;
    pthread_mutex_init(&p->mu, NULL);
    kc__cond_init_monotonic(&p->cond);
    p->threads = calloc(workers, sizeof(pthread_t));
    if (!p->threads) {
        kc__wh_pool_free(p);
        return KC_ENOMEM;
    }
    for (; p->n < workers; p->n++) {
        if (pthread_create(&p->threads[p->n], NULL, worker, p) != 0) {
            kc__wh_pool_free(p);
            return KC_ENOMEM;
        }
    }
    *ret = p;
    return 0;
}

int kc__wh_pool_run(kc__wh_pool *p, const kc__wh_route *route, char *content_type, char *body,
                    size_t len, uint64_t deadline_ns, int *status, char **resp, size_t *resp_len,
                    const char **ctype)
{
    job *j = calloc(1, sizeof(*j));
    if (!j) {
        free(content_type);
        free(body);
        return KC_ENOMEM;
    }
    j->refs = 2;
    j->route = route;
    j->ctype_in = content_type;
    j->body = body;
    j->len = len;
    kc__cond_init_monotonic(&j->cond);
    pthread_mutex_lock(&p->mu);
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    pthread_cond_signal(&p->cond); /* one job, one worker: waking every idle one costs each a
                                    * wake-up and a sleep for nothing */
    while (!j->done && kc__cond_wait_until(&j->cond, &p->mu, deadline_ns) == 0)
        ;
    int rc;
    if (j->done) {
        rc = j->rc;
        *status = j->status;
        *resp = j->resp;
        *resp_len = j->resp_len;
        *ctype = j->ctype;
        j->resp = NULL;
    } else {
        rc = KC_ETIMEOUT;
    }
    job_unref(p, j);
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void kc__wh_pool_free(kc__wh_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->n; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
