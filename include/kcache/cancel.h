/*
 * kcache/cancel.h — kc_cancel: a cancellation token for calls that block on the network (a watch,
 * a paged LIST). Implemented by the HTTP layer: firing it wakes the transfer at once (the transfer
 * waits in curl_multi_poll and is woken, never polled).
 *
 * A token is fired from any thread: every call taking it that is in progress returns
 * KC_ECANCELED promptly; one token may be shared by any number of concurrent calls. Once fired it
 * stays fired. Thread-safe, except kc_cancel_free, which must not race with users.
 */
#ifndef KCACHE_CANCEL_H
#define KCACHE_CANCEL_H

#include "error.h"

KC_BEGIN_DECLS

typedef struct kc_cancel kc_cancel;

/* New token (not fired). Errors: KC_EINVAL (ret NULL), KC_ENOMEM. On success *ret is new —
 * caller frees with kc_cancel_free(). Thread-safe. Since 0.1. */
KC_API int kc_cancel_new(kc_cancel **ret, kc_error *err);
/* Fire the token: calls in progress with it return KC_ECANCELED. Idempotent. Accepts NULL.
 * cancel is borrowed for the call. Thread-safe. Never fails. Since 0.1. */
KC_API void kc_cancel_fire(kc_cancel *cancel);
/* true once fired. false for NULL. cancel is borrowed for the call. Thread-safe. Never fails.
 * Since 0.1. */
KC_API bool kc_cancel_fired(const kc_cancel *cancel);
/* Free (cancel is consumed). Accepts NULL. Not thread-safe: no call may be using the token.
 * Never fails. Since 0.1. */
KC_API void kc_cancel_free(kc_cancel *cancel);

KC_END_DECLS

#endif
