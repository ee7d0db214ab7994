/*
 * http/internal.h — library-internal contracts of the HTTP layer (prefix kc__):
 *   - struct kc_config (immutable, refcounted) and its exec-plugin description;
 *   - kc__auth: the mutable credential state of one client (token file, exec plugin cache);
 *   - kc__http: the libcurl transport (handle pool, shared DNS/TLS sessions, one request);
 *   - kc__ratelimit: token bucket;
 *   - kc_cancel internals (wakes a transfer blocked in curl_multi_poll);
 *   - small helpers: base64, file reading with a size limit, the YAML tree used by kubeconfig.
 * Not installed. Include as "http/internal.h".
 */
#ifndef KC_HTTP_INTERNAL_H
#define KC_HTTP_INTERNAL_H

#include "core/internal.h"
#include "kcache/cancel.h"
#include "kcache/config.h"

#include <stdatomic.h>

/* ---- limits ---------------------------------------------------------------------------------- */
#define KC__KUBECONFIG_MAX_BYTES  ((size_t)8 * 1024 * 1024)    /* one kubeconfig file */
#define KC__CRED_FILE_MAX_BYTES   ((size_t)1024 * 1024)        /* token, cert, key, CA files */
#define KC__EXEC_OUTPUT_MAX_BYTES ((size_t)1024 * 1024)        /* plugin stdout / stderr each */
#define KC__EXEC_TIMEOUT_MS       60000                        /* plugin run time (default) */
#define KC__RESPONSE_MAX_BYTES    ((size_t)1024 * 1024 * 1024) /* one non-streamed response */
#define KC__KUBECONFIG_MAX_FILES  64

/* ---- configuration --------------------------------------------------------------------------- */

enum kc__interactive {
    KC__INTERACTIVE_NEVER = 0,
    KC__INTERACTIVE_IF_AVAILABLE,
    KC__INTERACTIVE_ALWAYS
};

typedef struct kc__exec_config {
    char *api_version; /* client.authentication.k8s.io/v1 or /v1beta1 */
    char *command;     /* resolved: absolute when it contained a '/' */
    char **args;
    size_t n_args;
    char **env; /* "NAME=value" entries added to the plugin's environment */
    size_t n_env;
    bool provide_cluster_info;
    int interactive; /* enum kc__interactive */
    char *install_hint;
} kc__exec_config;

struct kc_config {
    _Atomic int refs;
    char *server;  /* base URL, no trailing '/' */
    char *ns;      /* default namespace */
    char *context; /* context name or NULL */
    char *source;  /* "kubeconfig /path" | "in-cluster" | "url" (for messages) */
    /* TLS */
    char *ca_pem; /* NULL = system CAs */
    size_t ca_len;
    bool insecure;
    char *tls_server_name;
    char *proxy_url;
    char *cert_pem, *key_pem; /* client certificate + key, in memory */
    size_t cert_len, key_len;
    /* credentials */
    char *token;
    char *token_file;         /* re-read when it changes */
    bool token_file_periodic; /* in-cluster: also re-read at least once a minute */
    char *username, *password;
    kc__exec_config *exec;
    int64_t exec_timeout_ms; /* kc_config_opts.exec_timeout_ms; 0 = KC__EXEC_TIMEOUT_MS */
};

/* New empty config (refs = 1, ns = "default"). NULL on out of memory. */
kc_config *kc__config_alloc(void);
void kc__exec_config_free(kc__exec_config *e);
/* true when host of url is loopback (127.0.0.0/8, ::1, localhost). */
bool kc__url_is_loopback(const char *url);

/* Normalise and set cfg->server (KC_EINVAL on a bad URL). */
int kc__config_set_server(kc_config *c, const char *url, kc_error *err);
/* In-cluster configuration (in_cluster.c); sa_dir NULL = the standard directory. KC_ECONFIG when
 * not in a cluster. */
int kc__config_in_cluster(const char *ns_override, const char *sa_dir, kc_config **ret,
                          kc_error *err);
/* Kubeconfig files (kubeconfig.c): paths[n] merged in order. */
int kc__config_from_kubeconfigs(const char *const *paths, size_t n, bool explicit_path,
                                const kc_config_opts *opts, kc_config **ret, kc_error *err);

/* ---- files and encoding ---------------------------------------------------------------------- */

/* Read a whole file (at most max bytes) into a new NUL-terminated buffer. KC_EIO naming the path,
 * KC_ETOOLARGE, KC_ENOMEM. */
int kc__read_file(const char *path, size_t max, char **ret, size_t *ret_len, kc_error *err);
/* Standard base64 decode (whitespace ignored). New buffer (NUL-terminated), KC_EINVAL / KC_ENOMEM.
 */
int kc__base64_decode(const char *in, size_t len, char **ret, size_t *ret_len);
/* Path relative to dir (dir of a file); absolute paths copied. New string or NULL (nomem). */
char *kc__path_resolve(const char *dir, const char *path);
/* Append s as a JSON string literal (quotes and escapes) — writing only, never parsing. */
int kc__json_append_string(kc__buf *b, const char *s);

/* ---- YAML tree (yaml_tree.c) ----------------------------------------------------------------- */

typedef enum { KC__Y_SCALAR, KC__Y_MAP, KC__Y_SEQ } kc__ynode_type;
typedef struct kc__ynode kc__ynode;
struct kc__ynode {
    kc__ynode_type type;
    char *scalar;      /* SCALAR value; for a MAP child, the key is in key */
    char *key;         /* when the node is a map value: its key */
    kc__ynode **items; /* MAP values (each with key) or SEQ items */
    size_t n;
    int line; /* 1-based, for messages */
};
#define KC__YAML_MAX_DEPTH 64
#define KC__YAML_MAX_NODES 200000

/* Parse one YAML document. Empty input → NULL tree and 0. KC_ECONFIG with line/column in err. */
int kc__yaml_parse(const char *text, size_t len, kc__ynode **ret, kc_error *err);
void kc__ynode_free(kc__ynode *n);
/* Map lookup by key; NULL when n is not a map or the key is absent. */
const kc__ynode *kc__ynode_get(const kc__ynode *n, const char *key);
/* Scalar string of a map child (NULL when absent or not a scalar). */
const char *kc__ynode_str(const kc__ynode *n, const char *key);

/* ---- credentials (auth.c, exec.c) ------------------------------------------------------------ */

/* One request's credential: owned strings, cleared with kc__cred_clear. */
typedef struct kc__cred {
    char *bearer; /* token, or NULL */
    char *username, *password;
    char *cert_pem, *key_pem; /* client certificate from an exec plugin, or NULL (config's apply) */
    size_t cert_len, key_len;
    uint64_t generation; /* for kc__auth_invalidate */
} kc__cred;

void kc__cred_clear(kc__cred *c);

typedef struct kc__auth kc__auth;
kc__auth *kc__auth_new(const kc_config *cfg);
void kc__auth_free(kc__auth *a);
/* Current credential (runs the exec plugin or re-reads the token file when needed). */
int kc__auth_get(kc__auth *a, kc__cred *ret, kc_error *err);
/* A 401 answered a request sent with generation gen: drop cached credentials so the next
 * kc__auth_get refreshes them. Returns true when a refresh can help (exec plugin, token file). */
bool kc__auth_invalidate(kc__auth *a, uint64_t gen);

/* Exec plugin: run it and parse the ExecCredential (exec.c). */
typedef struct kc__exec_result {
    char *token;
    char *cert_pem, *key_pem;
    size_t cert_len, key_len;
    int64_t expiry_ms; /* wall-clock ms since epoch; 0 = never expires */
} kc__exec_result;
int kc__exec_run(const kc_config *cfg, kc__exec_result *ret, kc_error *err);
void kc__exec_result_clear(kc__exec_result *r);
/* RFC 3339 → wall ms since epoch. false on a malformed timestamp. */
bool kc__parse_rfc3339(const char *s, int64_t *ret_ms);

/* ---- rate limiter (ratelimit.c) -------------------------------------------------------------- */

typedef struct kc__ratelimit {
    pthread_mutex_t mu;
    double qps; /* <= 0: disabled */
    double burst;
    double tokens; /* may go negative: reservations ahead */
    uint64_t last_ns;
} kc__ratelimit;

int kc__ratelimit_init(kc__ratelimit *rl, double qps, int burst);
void kc__ratelimit_destroy(kc__ratelimit *rl);
/* Reserve one token; returns the ns to wait before using it (0 = now). */
uint64_t kc__ratelimit_reserve(kc__ratelimit *rl);
/* Reserve and sleep as needed. */
void kc__ratelimit_wait(kc__ratelimit *rl);

/* ---- cancellation (cancel.c) ----------------------------------------------------------------- */

/* A registration of one transfer's multi handle (lives on the transfer's stack). Any number of
 * transfers may wait on the same token. */
typedef struct kc__cancel_reg {
    void *multi;
    struct kc__cancel_reg *prev, *next;
} kc__cancel_reg;
/* Register / unregister the multi handle a transfer waits in, so kc_cancel_fire wakes it. */
void kc__cancel_attach(kc_cancel *c, kc__cancel_reg *reg, void *multi);
void kc__cancel_detach(kc_cancel *c, kc__cancel_reg *reg);
/* How many blocked transfers kc_cancel_fire has woken so far (for tests: proves a cancel woke the
 * transfer rather than waiting for its poll timeout). */
size_t kc__cancel_wakeups(kc_cancel *c);

/* ---- transport (transport.c) ----------------------------------------------------------------- */

typedef struct kc__http kc__http;

typedef size_t (*kc__http_data_fn)(void *ud, const char *p, size_t n);

typedef struct kc__http_req {
    const char *method;       /* "GET", … */
    const char *path;         /* path and query, starting with '/' (escaped) */
    const char *content_type; /* of body; NULL = application/json */
    const char *accept;       /* NULL = application/json */
    const char *body;
    size_t body_len;
    const kc__cred *cred;     /* may be NULL */
    int64_t timeout_ms;       /* <= 0: none */
    bool stream;              /* watch: TCP keepalive, no timeout, data to on_data on 2xx */
    kc_cancel *cancel;        /* may be NULL */
    kc__http_data_fn on_data; /* 2xx body chunks when stream; must return n to go on */
    void *ud;
    /* stream: called with idle_ud after each receive step (every chunk of one read delivered to
     * on_data), before the transfer waits for more; may be NULL. */
    void (*on_idle)(void *idle_ud);
    void *idle_ud;
    size_t max_body; /* collected body ceiling; 0 = KC__RESPONSE_MAX_BYTES */
    /* not stream: called with body_ud and the body collected so far after each chunk of a 2xx
     * response is appended (a paged LIST reads its continue token from the head while the rest
     * is still arriving); may be NULL. Must not modify the buffer. */
    void (*on_body)(void *body_ud, const kc__buf *body);
    void *body_ud;
} kc__http_req;

typedef struct kc__http_resp {
    int status;        /* HTTP status; 0 when no response */
    int retry_after_s; /* integer Retry-After header; -1 when absent */
    kc__buf body;      /* collected body (non-stream, or non-2xx stream) */
} kc__http_resp;

void kc__http_resp_init(kc__http_resp *r);
void kc__http_resp_free(kc__http_resp *r);

int kc__http_new(const kc_config *cfg, const char *user_agent, kc__http **ret, kc_error *err);
void kc__http_free(kc__http *h);
/* Perform one request. Returns 0 when an HTTP response arrived (any status), or a transport error:
 * KC_EDNS, KC_ETLS (reason in err), KC_ETIMEOUT, KC_ECANCELED, KC_EIO, KC_ETOOLARGE, or the code an
 * on_data callback stored (see kc__http_stream_error). */
/* curl_result.c: the error of a failed transfer (cc, libcurl's errbuf text; body_started: some of
 * the body had arrived) as a KC_E* code with err naming server; and the integer Retry-After of
 * the response (seconds, at most 86400), or -1 when absent or not an integer. easy is a CURL *. */
int kc__curl_error(const char *server, void *easy, int cc, const char *errbuf, bool body_started,
                   kc_error *err);
int kc__curl_retry_after(void *easy);
int kc__http_do(kc__http *h, const kc__http_req *req, kc__http_resp *resp, kc_error *err);
/* Number of new connections opened so far (bench and tests). */
uint64_t kc__http_connections(kc__http *h);
/* Response body bytes received so far, every request and stream (bench_shard). */
uint64_t kc__http_bytes_received(kc__http *h);

#endif
