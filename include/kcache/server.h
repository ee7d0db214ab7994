/*
 * kcache/server.h — the embedded, in-memory Kubernetes API server (`kcache serve`).
 *
 * One kc_server serves the Kubernetes REST API over HTTP/1.1 (optionally HTTPS with a throw-away
 * CA) from memory: built-in resources, CRDs, list/watch with a bounded history, bookmarks,
 * streaming lists, Table output, and fault injection changeable at run time. Tests start it on an
 * ephemeral loopback port ("127.0.0.1:0"), read its URL, change faults, and stop it.
 *
 * Lifecycle: kc_server_new → kc_server_start → (use) → kc_server_stop → kc_server_free.
 * Thread-safety: every function except kc_server_free may be called from any thread once the
 * server exists; kc_server_free must not race with other calls.
 */
#ifndef KCACHE_SERVER_H
#define KCACHE_SERVER_H

#include "error.h"

KC_BEGIN_DECLS

typedef struct kc_server kc_server;

/* Verbs for per-verb fault rates. */
typedef enum kc_server_verb {
    KC_SERVER_VERB_GET = 0,
    KC_SERVER_VERB_LIST,
    KC_SERVER_VERB_WATCH,
    KC_SERVER_VERB_CREATE,
    KC_SERVER_VERB_UPDATE,
    KC_SERVER_VERB_PATCH,
    KC_SERVER_VERB_DELETE,
    KC_SERVER_VERB_DELETECOLLECTION,
    KC_SERVER_VERB__COUNT
} kc_server_verb;

/* Entries of each kc_server_faults.rate_* array (>= KC_SERVER_VERB__COUNT). */
#define KC_SERVER_FAULT_VERBS 16

/* Faults. Zero-initialised means "no faults". Copied by the callee. */
typedef struct kc_server_faults {
    /* Each watch event is delivered after a uniform random delay in [min,max] ms, never before an
     * earlier event of the same stream (order preserved). 0,0 = no delay. */
    unsigned watch_delay_min_ms, watch_delay_max_ms;
    /* Probability (0..1) per request of the verb of an injected 429 / 500 / 503, indexed by
     * kc_server_verb. The dimension is fixed (KC_SERVER_FAULT_VERBS), not KC_SERVER_VERB__COUNT,
     * so a verb added later does not move the fields after it; entries past the last verb are
     * ignored. */
    double rate_429[16];
    double rate_500[16];
    double rate_503[16];
    /* Retry-After seconds sent with injected 429/503; 0 = no Retry-After header. */
    unsigned retry_after_s;
    /* Close every watch stream after this many events (0 = never). */
    unsigned watch_close_every;
    /* Probability (0..1) that a watch stream is closed after any event. */
    double watch_close_prob;
    /* Stop delivering watch events (streams stay open, events are dropped from delivery while set;
     * used to test read-your-writes timeouts). */
    bool watch_stall;
    /* Unused and never read: it fills what was the struct's tail padding before list_delay_*
     * were added (bytes an older caller passes but need not have zeroed; docs/abi.md). */
    unsigned reserved_pad_;
    /* Each collection LIST (a GET of a collection, not a watch) is answered after a uniform random
     * delay in [min,max] ms — an API server's read from its storage before the first byte; the
     * server goes on serving other requests meanwhile. 0,0 = no delay. */
    unsigned list_delay_min_ms, list_delay_max_ms;
} kc_server_faults;

/* Options. Zero-initialised means the defaults given. Strings are copied. */
typedef struct kc_server_opts {
    const char *listen;            /* "ADDR:PORT"; NULL = "127.0.0.1:6443"; port 0 = pick free */
    bool tls;                      /* serve HTTPS with a generated CA + serving cert */
    const char *token;             /* require "Authorization: Bearer <token>"; NULL = no auth */
    size_t history;                /* watch history events kept; 0 = 10000 */
    unsigned bookmark_interval_ms; /* bookmark period for allowWatchBookmarks; 0 = 60000 */
    unsigned max_watch_s;          /* server-side max watch duration; 0 = none */
    size_t max_body;               /* request body limit; 0 = 3 MiB */
    size_t watch_queue;            /* per-watcher queue bound (events); 0 = 100000 */
    const char *seed_dir;  /* directory of YAML/JSON fixtures loaded at start; NULL = none */
    const char *seed_spec; /* e.g. "pods=100000" (see `kcache serve --help`); NULL = none */
    uint64_t random_seed;  /* fault/delay PRNG seed; 0 = from time */
    const kc_server_faults *faults; /* initial faults (copied); NULL = none */
    size_t faults_size;             /* sizeof(kc_server_faults) when faults is set (docs/abi.md) */
    bool quiet;                     /* no request log (kcache/log.h: "server.request", info) */
    /* Service allocations (as kube-apiserver's --service-cluster-ip-range and
     * --service-node-port-range): the CIDR cluster IPs come from — IPv4 /12 to /30 or IPv6 /108
     * to /126; NULL = "10.96.0.0/12" — and the node port range "LO-HI" (at least 16 ports);
     * NULL = "30000-32767". A bad value fails kc_server_new with KC_EINVAL. */
    const char *service_cidr;
    const char *node_port_range;
    /* Controllers of kube-controller-manager (kc_server_controller bits). 0 = the default set,
     * KC_SERVER_CONTROLLERS_DEFAULT (namespace lifecycle and garbage collector, as on every
     * cluster); any other value = exactly the bits set; KC_SERVER_CONTROLLER_NONE (alone) = none,
     * the bare store (as envtest). They run inside the write that triggers them, under the store
     * lock, so their effects are visible when the request returns. */
    unsigned controllers;
    /* Ignore the shardSelector parameter of LIST and WATCH (server-side sharded list and watch,
     * KEP-5866) as an older server or one with the ShardedListAndWatch gate off does: full lists
     * without metadata.shardInfo, full watches. false (default) = honour it. Can be changed on a
     * running server (kc_server_set_shard_selector_ignored). */
    bool ignore_shard_selector;
    /* Where admission webhooks whose clientConfig names a Service are dialled (`kcache serve
     * --webhook-service`): comma-separated "NAME.NAMESPACE:PORT=HOST:PORT" entries; the TLS
     * server name checked stays NAME.NAMESPACE.svc. NULL = none (such a webhook's call fails, and
     * its failurePolicy applies). A malformed entry fails kc_server_new with KC_EINVAL. */
    const char *webhook_services;
    /* Simulated nodes and workload controllers (`kcache serve --simulate-nodes N`, docs/server.md
     * "Simulated nodes and workload controllers"): N Nodes kcache-node-0..N-1 with Leases, a
     * scheduler, a kubelet and the Deployment, ReplicaSet, StatefulSet, DaemonSet and Job
     * controllers, on a thread of their own. 0 = off; at most 10000. */
    unsigned simulate_nodes;
    unsigned sim_lease_ms;     /* Lease renewal period; 0 = 10000 (as kubelet) */
    unsigned sim_pod_start_ms; /* delay of each kubelet step (ContainerCreating, Running); 0 = 50 */
    unsigned sim_pod_run_ms;   /* run time of pods that exit (restartPolicy not Always); 0 = 1000 */
    unsigned sim_pod_stop_ms;  /* containers stop this long after a graceful delete (at most the
                                * grace period); 0 = 100 */
    /* Authorization mode (`kcache serve --authorization`; docs/server.md "Authorization"):
     * KC_SERVER_AUTHZ_ALWAYS_ALLOW (0, the default: every authenticated request is allowed) or
     * KC_SERVER_AUTHZ_RBAC (Roles, ClusterRoles and their bindings decide; the bootstrap
     * ClusterRoles are created; token is then the admin's, system:masters — generated when NULL).
     * Another value fails kc_server_new with KC_EINVAL. */
    int authorization;
    /* Identities by bearer token (`--user`): "NAME=TOKEN[:GROUP,GROUP...]" entries separated by
     * newlines or ';' (the token without ':' or ','); a NAME of system:serviceaccount:NS:SA gets
     * that ServiceAccount's groups. NULL = none. Read by kc_server_new only. */
    const char *users;
    /* kube-apiserver's --token-auth-file: a CSV file of token,user,uid[,"group1,group2"] lines
     * (# comments). NULL = none. Read by kc_server_new only (KC_EIO / KC_EINVAL naming the line).
     */
    const char *token_auth_file;
} kc_server_opts;

/* Authorization modes (kc_server_opts.authorization). */
typedef enum kc_server_authorization {
    KC_SERVER_AUTHZ_ALWAYS_ALLOW = 0,
    KC_SERVER_AUTHZ_RBAC = 1,
} kc_server_authorization;

/* The controllers (bits of kc_server_opts.controllers; `kcache serve --controllers`). */
typedef enum kc_server_controller {
    /* Namespace lifecycle: a deleted namespace turns Terminating (status.phase, deletionTimestamp),
     * its objects are deleted as a DELETE would (finalizers and graceful pods honoured), and the
     * namespace goes once it is empty. Without it a namespace and its objects go at once. In the
     * default set. */
    KC_SERVER_CONTROLLER_NAMESPACE = 1u << 0,
    /* Garbage collector of metadata.ownerReferences: an object none of whose owners exists any
     * more is deleted (Background), Foreground deletion waits (foregroundDeletion finalizer) for
     * the dependents that have blockOwnerDeletion, Orphan drops the references. In the default
     * set. */
    KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR = 1u << 1,
    /* ServiceAccount "default" in every namespace (recreated when deleted). Not in the default
     * set. */
    KC_SERVER_CONTROLLER_SERVICE_ACCOUNT = 1u << 2,
    /* No controller: the bit that makes a set of no other bits mean "none" rather than the
     * default (0). Other bits set with it are run. */
    KC_SERVER_CONTROLLER_NONE = 1u << 30,
} kc_server_controller;

/* The controllers a zero kc_server_opts.controllers runs. */
#define KC_SERVER_CONTROLLERS_DEFAULT                                                              \
    (KC_SERVER_CONTROLLER_NAMESPACE | KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR)

/* Create a server (not yet listening); opts are copied. On success *ret_srv is new — caller frees
 * with kc_server_free().
 * Errors: KC_EINVAL (bad option, err says which), KC_ENOMEM, KC_EIO or KC_EPARSE (a fixture
 * file: err names it), or the create error of a fixture or seed object the server refuses (err
 * names the file, the object and the reason; objects that already exist are skipped),
 * KC_EUNSUPPORTED (opts of a newer header). Thread-safe. Since 0.1. */
KC_API int(kc_server_new)(const kc_server_opts *opts, size_t opts_size, kc_server **ret_srv,
                          kc_error *err);
#define kc_server_new(opts, ret_srv, err)                                                          \
    (kc_server_new)((opts), sizeof(kc_server_opts), (ret_srv), (err))

/* Start listening and serving on background threads. Returns once connections are accepted.
 * Errors: KC_EIO (cannot bind: err names the address and the system's reason, e.g. "Address
 * already in use"), KC_ETLS (certificate generation), KC_EBUSY (already started), KC_EINVAL
 * (NULL). No ownership transfer. Not thread-safe: call it once, before other threads use the
 * server (its already-started check takes no lock). Since 0.1. */
KC_API int kc_server_start(kc_server *srv, kc_error *err);

/* Base URL, e.g. "http://127.0.0.1:41234" or "https://…". Borrowed: valid until kc_server_free.
 * NULL before a successful start. Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_server_url(const kc_server *srv);

/* PEM of the generated CA when tls is on (borrowed, valid until kc_server_free), else NULL.
 * Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_server_ca_pem(const kc_server *srv);

/* Write a kubeconfig (cluster, user, context, current-context; CA and token embedded) that
 * kubectl, python-kubernetes and client-node accept. path is borrowed for the call.
 * Errors: KC_EIO, KC_EINVAL (not started). Thread-safe. Since 0.1. */
KC_API int kc_server_write_kubeconfig(const kc_server *srv, const char *path, kc_error *err);

/* Write a kubeconfig as kc_server_write_kubeconfig does, whose user is the identity named user
 * (the first token configured for it: kc_server_opts.users or token_auth_file; the admin is
 * "kubernetes-admin"). path and user are borrowed for the call. No ownership transfer.
 * Errors: KC_EINVAL (NULL argument, not started), KC_ENOTFOUND (no token for user), KC_EIO.
 * Thread-safe. Since 0.1. */
KC_API int kc_server_write_kubeconfig_as(const kc_server *srv, const char *user, const char *path,
                                         kc_error *err);

/* Replace the faults in force (copied). Takes effect for requests and events from now on.
 * Errors: KC_EINVAL (NULL srv or faults), KC_EUNSUPPORTED (see kcache/common.h, "Structs").
 * Thread-safe. Since 0.1. */
KC_API int(kc_server_set_faults)(kc_server *srv, const kc_server_faults *faults,
                                 size_t faults_size);
#define kc_server_set_faults(srv, faults)                                                          \
    (kc_server_set_faults)((srv), (faults), sizeof(kc_server_faults))
/* Current faults, copied into *ret (the caller's). Thread-safe. Never fails. Since 0.1. */
KC_API void(kc_server_get_faults)(const kc_server *srv, kc_server_faults *ret, size_t ret_size);
#define kc_server_get_faults(srv, ret)                                                             \
    (kc_server_get_faults)((srv), (ret), sizeof(kc_server_faults))

/* Server-side sharded list and watch (KEP-5866; docs/serve.md "Sharded list and watch"): ignore
 * (true) or honour (false) the shardSelector parameter from now on, as kc_server_opts
 * .ignore_shard_selector. Requests already running keep the setting they started with (a watch
 * stays sharded or not for its life). No ownership transfer. Thread-safe. Errors: KC_EINVAL (NULL
 * srv). Since 0.1. */
KC_API int kc_server_set_shard_selector_ignored(kc_server *srv, bool ignored);
/* Whether the server ignores shardSelector now. NULL srv → false. No ownership transfer.
 * Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_server_shard_selector_ignored(const kc_server *srv);

/* Forget all watch history older than the current resourceVersion: later watches or lists from
 * an older RV get 410 Expired. No ownership transfer. Thread-safe. Errors: KC_EINVAL (NULL srv).
 * Since 0.1. */
KC_API int kc_server_compact(kc_server *srv);

/* What a simulated restart does with the stored objects (kc_server_restart). */
typedef enum kc_server_restart_mode {
    /* Storage lost: every object and CRD dropped, the built-in namespaces recreated. */
    KC_SERVER_RESTART_WIPE = 0,
    /* As after a restore from backup: every object and CRD kept (uid, content, generation), their
     * resourceVersions renumbered 1..N in their old order, the counter continuing from N (the
     * number of objects) — so RVs go back, below what clients saw unless every write so far was
     * a create. Costs one re-encoding of every object, under the store lock. */
    KC_SERVER_RESTART_RESTORE = 1,
} kc_server_restart_mode;

/* Simulate a restart in which the RV counter goes back (spec #101). Either mode also empties the
 * watch history and closes every watch; afterwards a resourceVersion above the new current one
 * gets 504 ResourceVersionTooLarge (lists, gets) or an ERROR event (watches), one below it 410
 * Expired, and an update carrying an old RV 409 Conflict (unless it happens to be the object's
 * new RV), so clients must notice and relist. Thread-safe (takes the store lock).
 * Errors (err, may be NULL, says which): KC_EINVAL (NULL srv, unknown mode), KC_ENOMEM (RESTORE:
 * nothing changed; WIPE: the built-in namespaces could not all be recreated). No ownership
 * transfer. Since 0.1. */
KC_API int kc_server_restart(kc_server *srv, kc_server_restart_mode mode, kc_error *err);

/* The current global resourceVersion (decimal; 0 for NULL). No ownership transfer. Thread-safe.
 * Never fails. Since 0.1. */
KC_API uint64_t kc_server_current_rv(const kc_server *srv);

/* Stop serving: close every connection and watch, join threads. Idempotent; NULL: nothing. No
 * ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API void kc_server_stop(kc_server *srv);

/* Stop (if needed) and free (srv is consumed). Accepts NULL. Not thread-safe: must not race with
 * other calls. Never fails. Since 0.1. */
KC_API void kc_server_free(kc_server *srv);

/* ---- text forms of settings ------------------------------------------------------------------
 * The grammars `kcache serve` flags and the admin endpoint accept, for programs that take the same
 * settings as text (command lines, configuration files). All three are pure functions: no state,
 * thread-safe, strings borrowed for the call, no server needed. */

/* Parse a duration: a non-negative decimal number with a unit "us", "ms", "s" or "m" ("250us",
 * "50ms", "0.5s", "2m"), or a bare "0", into milliseconds (rounded to the nearest) in *ret_ms.
 * Errors: KC_EINVAL (NULL text or ret_ms, not a duration, or above 2^31 ms; err quotes the text);
 * *ret_ms is untouched on error. text is borrowed for the call. Thread-safe (pure). Since 0.1. */
KC_API int kc_server_duration_parse(const char *text, unsigned *ret_ms, kc_error *err);

/* Parse one fault setting given as text into *inout, changing only the fields that setting names
 * (the others keep their value). field is one of the admin endpoint's names (PUT /admin/faults):
 *   "watchDelay"   MIN[-MAX], two durations as above ("10ms-500ms", "50ms", "0"; MAX >= MIN)
 *                  → watch_delay_min_ms, watch_delay_max_ms
 *   "listDelay"    MIN[-MAX], the same syntax → list_delay_min_ms, list_delay_max_ms
 *   "rate429", "rate500", "rate503"
 *                  RATE[:VERB,VERB…] with RATE in 0..1 and verbs get, list, watch, create, update,
 *                  patch, delete, deletecollection (any case); without a verb list RATE applies
 *                  to every verb, with one the verbs not listed get 0 → rate_429 / _500 / _503
 * Errors: KC_EINVAL (NULL argument, unknown field, or bad text: err names the bad part); *inout
 * is untouched on error. field and text are borrowed for the call; *inout is the caller's.
 * Thread-safe (pure). Since 0.1. */
KC_API int(kc_server_faults_parse)(const char *field, const char *text, kc_server_faults *inout,
                                   size_t inout_size, kc_error *err);
#define kc_server_faults_parse(field, text, inout, err)                                            \
    (kc_server_faults_parse)((field), (text), (inout), sizeof(kc_server_faults), (err))

/* Check a seed spec (kc_server_opts.seed_spec: KIND=N[:ns=NAME],… as `kcache serve --help`
 * describes it) without generating anything, so a program can reject it before creating a server.
 * Errors: KC_EINVAL (NULL or bad spec; err names the bad part, e.g. the unknown kind). spec is
 * borrowed for the call. Thread-safe (pure). Since 0.1. */
KC_API int kc_server_seed_spec_check(const char *spec, kc_error *err);

KC_END_DECLS

#endif
