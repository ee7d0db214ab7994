/*
 * kcache/workqueue.h — kc_workqueue: the controller's work queue (client-go's workqueue: a FIFO
 * with dirty and processing sets, delayed adds, rate-limited adds).
 *
 * Keys are opaque NUL-terminated strings, copied on add: controllers use "namespace/name" (plus the
 * type for a multi-type queue, e.g. "apps/v1/Deployment:ns/name"). A key is held at most once in
 * the queue; a key being processed (between kc_workqueue_get and kc_workqueue_done) is never handed
 * to a second worker — an add during processing marks it dirty and it is queued once more at done.
 *
 * Delayed adds (kc_workqueue_add_after) are served by one timer thread per queue, never a thread
 * per item. Rate-limited adds combine a per-key exponential backoff (base 5 ms doubling to 1000 s)
 * with an overall token bucket (10/s, burst 100): the delay is the larger of the two, as
 * client-go's default controller rate limiter. kc_workqueue_forget resets a key's backoff.
 *
 * Priorities (controller-runtime's priority queue, its default since v0.23): every add may carry
 * a priority (the *_with_priority calls; the others use 0). Keys are handed out highest priority
 * first; within a priority, in the order they became ready (FIFO; delayed keys by when they
 * fire). A key keeps the highest priority it was added with while it waits: a re-add with a
 * higher priority raises it (moving it behind the keys of that priority), a lower one changes
 * nothing. Deduplication, dirty and processing are as above whatever the priority.
 *
 * Lifecycle: kc_workqueue_new → add / get / done from any threads → kc_workqueue_shutdown (or
 * kc_workqueue_shutdown_drain) → kc_workqueue_free.
 * Thread-safety: every function is thread-safe except kc_workqueue_free, which must not race with
 * other calls (call it after every worker has returned from kc_workqueue_get).
 */
#ifndef KCACHE_WORKQUEUE_H
#define KCACHE_WORKQUEUE_H

#include "error.h"

KC_BEGIN_DECLS

typedef struct kc_workqueue kc_workqueue;

/* Longest key accepted, in bytes (a longer one is KC_EINVAL): "namespace/name" is at most 317. */
#define KC_WORKQUEUE_KEY_MAX 4096

/* Priorities (higher runs first): 0 is the default; the controller enqueues the keys of an
 * informer's initial list and of resyncs at KC_WORKQUEUE_PRIORITY_LOW (controller-runtime's
 * handler.LowPriority), so changes go first. */
#define KC_WORKQUEUE_PRIORITY_DEFAULT 0
#define KC_WORKQUEUE_PRIORITY_LOW     (-100)

/* Queue options. Zero-initialised (or NULL) means the defaults. */
typedef struct kc_workqueue_opts {
    const char *name;       /* metrics label name="…"; copied; NULL or "" = no metrics */
    uint64_t base_delay_ms; /* per-key backoff base; 0 = 5 */
    uint64_t max_delay_ms;  /* per-key backoff cap; 0 = 1,000,000 (1000 s) */
    double bucket_qps;      /* overall token bucket rate; 0 = 10; < 0 = no bucket */
    unsigned bucket_burst;  /* 0 = 100 */
} kc_workqueue_opts;

/* New queue; opts copied (NULL = defaults). Errors: KC_EINVAL (ret NULL, bad option),
 * KC_EUNSUPPORTED (opts of a newer header), KC_ENOMEM (also: the timer thread cannot start).
 * *ret is new — caller frees with kc_workqueue_free. Thread-safe. Since 0.1. */
KC_API int(kc_workqueue_new)(const kc_workqueue_opts *opts, size_t opts_size, kc_workqueue **ret,
                             kc_error *err);
#define kc_workqueue_new(opts, ret, err)                                                           \
    (kc_workqueue_new)((opts), sizeof(kc_workqueue_opts), (ret), (err))

/* Queue key now (copied). No-op if key is already queued, or dirty while processing.
 * Errors: KC_EINVAL (NULL, or longer than KC_WORKQUEUE_KEY_MAX), KC_ESTOPPED (shutting down:
 * dropped), KC_ENOMEM. Thread-safe. Since 0.1. */
KC_API int kc_workqueue_add(kc_workqueue *q, const char *key);

/* Queue key (copied) after delay_ms (0 = now); a key already waiting keeps the earlier time.
 * Errors: as kc_workqueue_add (KC_EINVAL, KC_ESTOPPED, KC_ENOMEM). Thread-safe. Since 0.1. */
KC_API int kc_workqueue_add_after(kc_workqueue *q, const char *key, uint64_t delay_ms);

/* Queue key (copied) after the rate limiter's delay for it (and count a requeue). Errors: as
 * kc_workqueue_add (KC_EINVAL, KC_ESTOPPED, KC_ENOMEM). Thread-safe. Since 0.1. */
KC_API int kc_workqueue_add_rate_limited(kc_workqueue *q, const char *key);

/* kc_workqueue_add at priority (higher first): a key not dirty is queued at the tail of its
 * priority; a key dirty already keeps the higher of the two priorities (a queued key raised moves
 * to the tail of the higher one). key copied. Errors: as kc_workqueue_add (KC_EINVAL, KC_ESTOPPED,
 * KC_ENOMEM). Thread-safe. Since 0.1. */
KC_API int kc_workqueue_add_with_priority(kc_workqueue *q, const char *key, int priority);

/* kc_workqueue_add_after at priority: when it fires the key is added at priority; a key already
 * waiting keeps the earlier time and the higher priority. key copied. Errors: as kc_workqueue_add
 * (KC_EINVAL, KC_ESTOPPED, KC_ENOMEM). Thread-safe. Since 0.1. */
KC_API int kc_workqueue_add_after_with_priority(kc_workqueue *q, const char *key, uint64_t delay_ms,
                                                int priority);

/* kc_workqueue_add_rate_limited at priority (the key is added at priority when its delay ends).
 * key copied. Errors: as kc_workqueue_add (KC_EINVAL, KC_ESTOPPED, KC_ENOMEM). Thread-safe.
 * Since 0.1. */
KC_API int kc_workqueue_add_rate_limited_with_priority(kc_workqueue *q, const char *key,
                                                       int priority);

/* Reset key's backoff (its requeue count goes to 0). key is borrowed for the call.
 * Errors: KC_EINVAL (NULL, or a key too long). Thread-safe. Since 0.1. */
KC_API int kc_workqueue_forget(kc_workqueue *q, const char *key);

/* Times key (borrowed for the call) was requeued through kc_workqueue_add_rate_limited since its
 * last forget. Errors: KC_EINVAL for NULL. Thread-safe. Since 0.1. */
KC_API int kc_workqueue_num_requeues(kc_workqueue *q, const char *key);

/*
 * Take the next key, waiting up to timeout_ms (< 0 = forever). *key is borrowed: valid until
 * kc_workqueue_done for it. Returns 0, KC_ETIMEOUT, or KC_ESTOPPED once the queue is shut down
 * and holds no more keys; KC_EINVAL for NULL. Errors: KC_ETIMEOUT, KC_ESTOPPED, KC_EINVAL.
 * Thread-safe. Since 0.1.
 */
KC_API int kc_workqueue_get(kc_workqueue *q, int64_t timeout_ms, const char **key);

/* kc_workqueue_get that also reports the priority the key was queued at into *priority (may be
 * NULL), so a requeue can keep it. *key borrowed as for kc_workqueue_get. Errors: KC_ETIMEOUT,
 * KC_ESTOPPED, KC_EINVAL. Thread-safe. Since 0.1. */
KC_API int kc_workqueue_get_with_priority(kc_workqueue *q, int64_t timeout_ms, const char **key,
                                          int *priority);

/* Mark key processed; if it was added meanwhile it is queued again. key may be the pointer from
 * kc_workqueue_get or an equal string. Errors: KC_EINVAL (NULL, or key not being processed —
 * state unchanged). key is borrowed for the call. Thread-safe. Since 0.1. */
KC_API int kc_workqueue_done(kc_workqueue *q, const char *key);

/* Keys queued now (not processing, not waiting for a delay). No ownership transfer.
 * Errors: KC_EINVAL for NULL. Thread-safe. Since 0.1. */
KC_API int kc_workqueue_len(kc_workqueue *q);

/* Stop accepting adds; waiting and later kc_workqueue_get calls return what is queued, then
 * KC_ESTOPPED. Delayed keys are dropped. Idempotent; NULL is a no-op. No ownership transfer.
 * Thread-safe. Never fails. Since 0.1. */
KC_API void kc_workqueue_shutdown(kc_workqueue *q);

/* kc_workqueue_shutdown, then wait up to timeout_ms (< 0 = forever) until no key is processing.
 * Returns 0, KC_ETIMEOUT, KC_EINVAL (NULL); KC_ECANCELED when a kc_workqueue_shutdown from
 * another thread released the wait while keys were still processing. Must not be called from a
 * worker holding a key. No ownership transfer. Errors: KC_ETIMEOUT, KC_EINVAL, KC_ECANCELED.
 * Thread-safe. Since 0.1. */
KC_API int kc_workqueue_shutdown_drain(kc_workqueue *q, int64_t timeout_ms);

/* Prometheus text (0.0.4) of this queue's metrics under client-go's names (workqueue_depth,
 * workqueue_adds_total, workqueue_queue_duration_seconds, workqueue_work_duration_seconds,
 * workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds,
 * workqueue_retries_total), labelled name="<opts.name>". New malloc'd string (caller frees); ""
 * for an unnamed queue. Errors: NULL on out of memory or for NULL. Thread-safe. Since 0.1. */
KC_API char *kc_workqueue_metrics_text(kc_workqueue *q);

/* kc_workqueue_metrics_text with the signature a metrics source of the health endpoint takes:
 * kc_health_add_metrics_source(h, kc_workqueue_metrics_render, q) serves the queue's metrics on
 * /metrics (remove the source before freeing the queue). q is a kc_workqueue * (borrowed for the
 * call); the result is a new malloc'd string — caller (the endpoint) frees. Errors: NULL on out of
 * memory or for NULL. Thread-safe. Since 0.1. */
KC_API char *kc_workqueue_metrics_render(void *q);

/* Shut down, join the timer thread, free (q is consumed). Accepts NULL. Not thread-safe: after
 * every worker has returned from kc_workqueue_get, with no other call in flight. Never fails.
 * Since 0.1. */
KC_API void kc_workqueue_free(kc_workqueue *q);

KC_END_DECLS

#endif
