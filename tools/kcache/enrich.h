/*
 * enrich.h — the pieces of `kcache enrich` (cmd_enrich.c), one concept per file:
 *
 *   enrich_record.c  which pod a record names: file name, journald fields or explicit fields (FN)
 *   enrich_project.c the few fields a key needs, read through the library's simdjson projection
 *   enrich_keys.c    label/annotation key filtering (POSIX ERE) and de-dotting (EF10, EF11)
 *   enrich_format.c  the fields added, as mmkubernetes or Fluent Bit's filter emits them (EF)
 *   enrich_mmx.c     rsyslog's mmexternal exchange on stdin/stdout, and the JSON-lines filter (MX)
 *   enrich_opts.c    argv and --config FILE into kc__enrich_opts, --help
 *   enrich_proto.c   the node daemon's line protocol (request and reply lines)
 *   enrich_client.c  a metadata view that asks the daemon over its Unix socket, with backoff
 *   enrich_daemon.c  the daemon's socket server (any view behind it)
 *   enrich_podmeta.c the view backed by kc_podmeta (include/kcache/podmeta.h), and /metrics
 *   enrich_reuse.c   the helper's answer cache: reply text reused while the generation holds
 *
 * Everything but enrich_podmeta.c and cmd_enrich.c is free of the cache: it takes a metadata view
 * (kc__enrich_view, a lookup callback), so tests drive it with a fake one. JSON is jansson's.
 */
#ifndef KC_ENRICH_H
#define KC_ENRICH_H

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

/* ---- what a record names (enrich_record.c) ------------------------------------------------ */

typedef enum { KC_ENRICH_FMT_MMK = 0, KC_ENRICH_FMT_FLB = 1 } kc__enrich_fmt;

/* The file-derived fields of one record. Strings point into buf (NUL-terminated) or are NULL. */
typedef struct kc__enrich_key {
    const char *ns, *pod, *container;
    const char *container_id;   /* the 64-hex of the file name, or CONTAINER_ID_FULL verbatim */
    const char *container_hash; /* journald CONTAINER_NAME's hash part (FN6) */
    const char *uid;            /* from /var/log/pods/<ns>_<pod>_<uid>/ (FN2) */
    const char *have_version;   /* the asker holds the answer of this version (the daemon's
                                   clients): a view may then answer "same" without the JSON */
    char buf[1024];
} kc__enrich_key;

typedef struct kc__enrich_fields {
    /* '!'-separated paths into the record ("$!metadata!filename" is rec["$!"]["metadata"]
     * ["filename"]); NULL = not read */
    const char *filename, *container_name, *container_id_full;
    const char *ns, *pod, *container, *container_id; /* explicit fields (default: none) */
    const char *tag; /* Fluent Bit's tag ("kube.var.log.containers.<name>"), read
                        when the record has no file name; NULL = not read */
    const char
        *tag_prefix;   /* skipped by length, unchecked (FN4); NULL = "kube.var.log.containers." */
    bool pods_dir;     /* also accept /var/log/pods/<ns>_<pod>_<uid>/<container>/N.log */
    bool resolve_link; /* readlink a /var/log/containers name to learn the pod UID (FN13) */
    const char *containers_dir; /* "/var/log/containers/" (NULL); ends with '/' */
} kc__enrich_fields;

/* Parse a file name per FN7 (mmkubernetes) or FN3 (fluentbit); 0 or -1 (no match). */
int kc__enrich_parse_tag(const char *tag, const char *prefix, kc__enrich_key *key);
int kc__enrich_parse_filename(kc__enrich_fmt fmt, const char *path, bool pods_dir,
                              kc__enrich_key *key);
/* Parse journald's CONTAINER_NAME per FN8 (mmk: id = CONTAINER_ID_FULL verbatim, both must be
 * non-empty) or FN6 (fluentbit: CONTAINER_ID_FULL unused); 0 or -1. */
int kc__enrich_parse_journald(kc__enrich_fmt fmt, const char *name, const char *id_full,
                              kc__enrich_key *key);
/* The key of a record (a JSON object): explicit fields, then journald, then the file name. 0, or
 * -1 when the record names no pod. */
int kc__enrich_record_key(kc__enrich_fmt fmt, const kc__enrich_fields *f, json_t *rec,
                          kc__enrich_key *key);
/* rec's string at a '!'-separated path, or NULL. */
const char *kc__enrich_path_get(json_t *rec, const char *path);
/* The record line reduced to the members at f's paths (a new reference), read through
 * kc_obj_parse's projection; NULL when that way cannot tell (the caller parses the whole line).
 * id (cap bytes) gets the values read, path after path — records with equal ids have equal keys
 * but for the file system (a link's target); *id_len is 0 when they did not fit. */
json_t *kc__enrich_record_fields(const kc__enrich_fields *f, const char *line, size_t len, char *id,
                                 size_t cap, size_t *id_len);

/* ---- metadata views ------------------------------------------------------------------------ */

/* One lookup's answer: the Pod (projected, API JSON) and its Namespace; new references or NULL. */
typedef struct kc__enrich_meta {
    json_t *pod, *ns;
    bool deleted;      /* a tombstone (DP4) */
    bool same;         /* key->have_version is current: pod and ns left NULL */
    char version[192]; /* what changes whenever the answer does ("" = not versioned) */
} kc__enrich_meta;

/* lookup returns 0 (meta filled), KC_ENOTFOUND (no such pod), or another negative code (no
 * answer now: daemon down, cache not synced) — the record then gets file-derived fields. */
/* generation (may be NULL: none): a counter the view's owner increments (atomic, release) after
 * any change that may alter any answer — a pod or namespace event applied, a tombstone expired, a
 * background GET's result stored — and never otherwise. The daemon points it into a shared page its
 * helpers map read-only: a helper reuses an answer it holds while the counter is unchanged (CA3
 * holds: the increment follows the change, and a helper reads the counter before each reuse). */
/* generation_fd: the memfd whose first page holds *generation at offset 0 (kc__enrich_genpage_new)
 * — the daemon passes it to each helper; meaningful only with generation. stamp (may be NULL): for
 * a view whose counter can vanish (the daemon's client): true and a token when answers may be
 * reused (the token changes whenever the counter does, and never repeats across reconnects),
 * false when they may not (not connected, the daemon gone). */
typedef struct kc__enrich_view {
    int (*lookup)(void *ud, const kc__enrich_key *key, kc__enrich_meta *ret);
    void *ud;
    _Atomic uint64_t *generation;
    int generation_fd;
    bool (*stamp)(void *ud, uint64_t *ret);
} kc__enrich_view;

/* A shared page for a generation counter: a one-page memfd mapped read-write, the counter (0) at
 * offset 0. Returns the counter and its fd in *fd, or NULL. kc__enrich_genpage_free unmaps, closes.
 */
_Atomic uint64_t *kc__enrich_genpage_new(int *fd);
void kc__enrich_genpage_free(_Atomic uint64_t *gen, int fd);

void kc__enrich_meta_clear(kc__enrich_meta *m);

/* ---- output (enrich_keys.c, enrich_format.c) ---------------------------------------------- */

#define KC_ENRICH_MAX_MATCH 32

typedef struct kc__enrich_filter {
    regex_t re[KC_ENRICH_MAX_MATCH];
    int n;
} kc__enrich_filter;

typedef struct kc__enrich_out {
    kc__enrich_fmt fmt;
    bool labels, annotations;       /* emit them (flb: both on; mmk: labels on, annotations
                                       only through annotation_match) */
    bool ns_meta;                   /* mmk includeNamespaceMetadata (on) */
    bool ns_labels, ns_annotations; /* flb kubernetes_namespace switches (off) */
    bool owner_refs, pod_ip, image; /* flb owner_references (off); mmk extras EF14 (off) */
    bool de_dot, de_slash;          /* mmk: de_dot on; flb: off */
    char de_dot_sep[16], de_slash_sep[16];
    bool orphans_keep;      /* flb: file-derived fields when the pod is not known */
    const char *master_url; /* mmk master_url */
    kc__enrich_filter annotation_match, label_match; /* n == 0: no filtering (annotations: mmk
                                                        drops all) */
} kc__enrich_out;

/* Compile pattern (POSIX ERE) into f. 0, or -1 with msg (size n) saying why. */
int kc__enrich_filter_add(kc__enrich_filter *f, const char *pattern, char *msg, size_t n);
void kc__enrich_filter_free(kc__enrich_filter *f);
/* A copy of the object obj (labels or annotations): keys kept when f is empty or one pattern
 * matches (unanchored), then '.' → dot_sep and '/' → slash_sep in the keys (NULL: kept). New
 * reference; NULL when obj is not an object. */
json_t *kc__enrich_keys(json_t *obj, const kc__enrich_filter *f, const char *dot_sep,
                        const char *slash_sep);

/* The fields to add for key given meta (pod NULL: not known): a new object of top-level keys
 * ("kubernetes", "docker" / "kubernetes_namespace"), or NULL when nothing is to be added. */
json_t *kc__enrich_format(const kc__enrich_out *o, const kc__enrich_key *key,
                          const kc__enrich_meta *meta);

/* ---- the exchange (enrich_mmx.c) ------------------------------------------------------------ */

typedef struct kc__enrich_stats {
    uint64_t lines, enriched, file_only, no_match, malformed, too_long, lookup_errors;
} kc__enrich_stats;

typedef struct kc__enrich_loop {
    int in_fd, out_fd;
    bool mmexternal; /* replies {"$!":{…}} per line; else the record itself, enriched */
    size_t max_line; /* longer lines: {} (or passed through) and counted */
    kc__enrich_fmt fmt;
    const kc__enrich_fields *fields;
    const kc__enrich_out *out;
    kc__enrich_view view;
    volatile int *stop; /* set by a signal: return at once (SIGTERM) */
    kc__enrich_stats stats;
    uint64_t reused;                /* records answered from the answer cache (enrich_reuse.c) */
    struct kc__enrich_reuse *reuse; /* made on first use when the view has a generation */
} kc__enrich_loop;

/* The reply line (without LF, a new malloc'd string) for one input line. */
char *kc__enrich_reply(kc__enrich_loop *l, const char *line, size_t len);
/* Release what the loop made (its answer cache); kc__enrich_run does it before returning. */
void kc__enrich_loop_release(kc__enrich_loop *l);

/* ---- the answer cache (enrich_reuse.c) ------------------------------------------------------- */

/* What one record got: the lookup's rc (0 or KC_ENOTFOUND) and the reply — mmexternal: the reply
 * line; filter mode: the fields to merge (add, NULL = none). */
typedef struct kc__enrich_answer {
    int rc;
    const char *reply;
    size_t reply_len;
    json_t *add;
} kc__enrich_answer;

typedef struct kc__enrich_reuse kc__enrich_reuse;
kc__enrich_reuse *kc__enrich_reuse_new(void);
void kc__enrich_reuse_free(kc__enrich_reuse *r);
/* The answer held for key at stamp, or NULL (borrowed: valid until the next put). */
const kc__enrich_answer *kc__enrich_reuse_get(kc__enrich_reuse *r, const kc__enrich_key *key,
                                              uint64_t stamp);
/* Hold a (copied; add: a new reference taken) for key, valid at stamp. */
void kc__enrich_reuse_put(kc__enrich_reuse *r, const kc__enrich_key *key, uint64_t stamp,
                          const kc__enrich_answer *a);
/* The key derived for a record id (kc__enrich_record_fields) less than KC_ENRICH_KEY_TTL_MS
 * before now_ms: 0 and *key filled, or -1. _put holds key for id, derived at now_ms. */
#define KC_ENRICH_KEY_TTL_MS 1000
int kc__enrich_reuse_key_get(kc__enrich_reuse *r, const char *id, size_t n, int64_t now_ms,
                             kc__enrich_key *key);
void kc__enrich_reuse_key_put(kc__enrich_reuse *r, const char *id, size_t n, int64_t now_ms,
                              const kc__enrich_key *key);
/* Serve in_fd until EOF (0), a stop signal (0) or a write error (-1). Signals in sigmask are
 * unblocked only while waiting for input (ppoll), so a SIGTERM ends the loop promptly. */
int kc__enrich_run(kc__enrich_loop *l);

/* ---- the daemon's protocol (enrich_proto.c) ------------------------------------------------ */

#define KC_ENRICH_MAX_REQUEST 65536
/* A request line (no LF; new malloc'd) for key. */
char *kc__enrich_proto_request(const kc__enrich_key *key);
/* Parse a request line into key; 0 or -1. */
int kc__enrich_proto_parse_request(const char *line, size_t len, kc__enrich_key *key);
/* The reply line (no LF; new malloc'd) for a lookup's rc and meta. */
char *kc__enrich_proto_reply(int rc, const kc__enrich_meta *meta);
/* Parse a reply line: returns the lookup's rc (0: meta filled) or -1 when malformed. */
int kc__enrich_proto_parse_reply(const char *line, size_t len, kc__enrich_meta *meta);

/* ---- daemon and client (enrich_daemon.c, enrich_client.c) ---------------------------------- */

typedef struct kc__enrich_client kc__enrich_client;
/* A view asking the daemon at path; connects lazily, retries with backoff (min_ms doubling to
 * max_ms) and answers "unavailable" meanwhile; timeout_ms bounds one exchange. */
kc__enrich_client *kc__enrich_client_new(const char *path, int64_t timeout_ms, int64_t min_ms,
                                         int64_t max_ms);
void kc__enrich_client_free(kc__enrich_client *c);
kc__enrich_view kc__enrich_client_view(kc__enrich_client *c);
/* Connections made so far, and answers reused because the daemon said "same" (tests, log). */
uint64_t kc__enrich_client_connects(const kc__enrich_client *c);
uint64_t kc__enrich_client_reused(const kc__enrich_client *c);

typedef struct kc__enrich_daemon kc__enrich_daemon;
/* Listen on the Unix socket path (an old socket file there is replaced) and serve view to at most
 * max_clients connections at once, one thread each. NULL with msg (size n) on failure. */
kc__enrich_daemon *kc__enrich_daemon_start(const char *path, kc__enrich_view view, int max_clients,
                                           char *msg, size_t n);
/* Stop accepting, close every connection, wait for their threads, remove the socket file. */
void kc__enrich_daemon_stop(kc__enrich_daemon *d);
uint64_t kc__enrich_daemon_requests(const kc__enrich_daemon *d);

/* ---- options (enrich_opts.c) ----------------------------------------------------------------- */

typedef enum { KC_ENRICH_MODE_FILTER, KC_ENRICH_MODE_MMX, KC_ENRICH_MODE_DAEMON } kc__enrich_mode;

typedef struct kc__enrich_opts {
    kc__enrich_mode mode;
    bool standalone;    /* own cache in this process (no daemon) */
    const char *socket; /* daemon socket */
    const char *node, *kubeconfig, *context, *health_listen, *log_file;
    const char *server, *token_file, *ca_file; /* --server: no kubeconfig, no environment */
    int64_t deleted_grace_ms, not_seen_wait_ms, sync_wait_ms, socket_timeout_ms;
    bool unsynced_bare; /* --unsynced=bare: never wait for the first sync */
    bool all_nodes;     /* --all-nodes: no node field selector (tests, cluster agents) */
    size_t max_line;
    int max_clients;
    double fetch_rate;    /* CA5 background GETs per second (0: none); enrich_fetch.c */
    int fetch_burst;      /* their token bucket's size */
    int64_t fetch_ttl_ms; /* a fetched pod is served this long before it is fetched again */
    kc__enrich_fields fields;
    kc__enrich_out out;
    char **owned; /* strings read from --config, freed by _free */
    size_t n_owned;
    bool de_dot_set; /* --de-dot given (else: on for mmkubernetes, off for fluentbit) */
} kc__enrich_opts;

/* Parse argv (argv[0] the command). 0, or KC_CLI_EXIT_USAGE with msg (size n) naming the
 * argument; 1 (and msg empty) for --help, whose text kc__enrich_usage gives. */
int kc__enrich_opts_parse(kc__enrich_opts *o, int argc, char **argv, char *msg, size_t n);
void kc__enrich_opts_free(kc__enrich_opts *o);
extern const char kc__enrich_usage[];

/* ---- the kc_podmeta-backed view (enrich_podmeta.c; CLI only) ------------------------------- */

typedef struct kc__enrich_cache kc__enrich_cache;
/* Connect (--kubeconfig/--context, in-cluster), start a kc_podmeta for --node (or every node)
 * with the cache options of o, and --health-listen when given (the daemon's /metrics add
 * extra_metrics(extra_ud) when not NULL). NULL with msg (size n) on failure. */
kc__enrich_cache *kc__enrich_cache_start(const kc__enrich_opts *o, char *(*extra_metrics)(void *),
                                         void *extra_ud, char *msg, size_t n);
kc__enrich_view kc__enrich_cache_view(kc__enrich_cache *c);
/* The health endpoint's URL, or NULL. */
const char *kc__enrich_cache_health_url(kc__enrich_cache *c);
/* Stop the health endpoint (before what its metrics sources read goes away); the cache stays. */
void kc__enrich_cache_stop_health(kc__enrich_cache *c);
void kc__enrich_cache_free(kc__enrich_cache *c);

#endif
