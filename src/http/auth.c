/*
 * auth.c — per-client credential state: which Authorization a request carries.
 *
 * Sources, in kubectl's order of precedence: exec plugin, bearer token, token file, basic
 * (username/password); a client certificate from the config applies at the TLS layer.
 *   - Exec: the ExecCredential is cached until its expirationTimestamp and refreshed early
 *     (KC__EXEC_REFRESH_EARLY_MS before it expires); a 401 drops it (once per credential
 *     generation) so the next request runs the plugin again. The plugin runs under the mutex, so
 *     concurrent requests wait for one run instead of starting several.
 *   - Token file: re-read when its mtime/size/inode changes (checked at most once a second) and,
 *     for in-cluster configs, at least once a minute; a 401 forces a re-read.
 * One mutex guards the state; credentials handed out are copies (kc__cred), so no pointer into
 * the state escapes the lock.
 */
#include "http/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define KC__EXEC_REFRESH_EARLY_MS 10000
#define KC__TOKEN_FILE_CHECK_NS   (1 * KC__NS_PER_SEC)
#define KC__TOKEN_FILE_REREAD_NS  (60 * KC__NS_PER_SEC)

struct kc__auth {
    kc_config *cfg;
    pthread_mutex_t mu;
    uint64_t gen; /* bumped whenever the credential changes */
    /* exec */
    kc__exec_result exec;
    bool have_exec;
    /* token file */
    char *file_token;
    struct timespec file_mtime;
    off_t file_size;
    ino_t file_ino;
    uint64_t file_checked_ns, file_read_ns;
};

static void kc__free_secret_str(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

void kc__cred_clear(kc__cred *c)
{
    if (!c)
        return;
    kc__free_secret_str(c->bearer);
    free(c->username);
    kc__free_secret_str(c->password);
    free(c->cert_pem);
    if (c->key_pem) {
        explicit_bzero(c->key_pem, c->key_len);
        free(c->key_pem);
    }
    memset(c, 0, sizeof *c);
}

kc__auth *kc__auth_new(const kc_config *cfg)
{
    kc__auth *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    if (pthread_mutex_init(&a->mu, NULL) != 0) {
        free(a);
        return NULL;
    }
    a->cfg = kc_config_ref(cfg);
    a->gen = 1;
    return a;
}

void kc__auth_free(kc__auth *a)
{
    if (!a)
        return;
    kc__exec_result_clear(&a->exec);
    kc__free_secret_str(a->file_token);
    pthread_mutex_destroy(&a->mu);
    kc_config_unref(a->cfg);
    free(a);
}

/* Under a->mu. */
static int kc__auth_token_file(kc__auth *a, kc_error *err)
{
    uint64_t now = kc__now_ns();
    bool force = !a->file_token ||
                 (a->cfg->token_file_periodic && now - a->file_read_ns >= KC__TOKEN_FILE_REREAD_NS);
    if (!force && now - a->file_checked_ns < KC__TOKEN_FILE_CHECK_NS)
        return 0;
    a->file_checked_ns = now;
    struct stat st;
    if (stat(a->cfg->token_file, &st) != 0) {
        if (a->file_token)
            return 0; /* keep the last good token while the file is being rotated */
        return kc_error_set(err, KC_EAUTH, "cannot read token file %s: %s", a->cfg->token_file,
                            strerror(errno));
    }
    if (!force && st.st_mtim.tv_sec == a->file_mtime.tv_sec &&
        st.st_mtim.tv_nsec == a->file_mtime.tv_nsec && st.st_size == a->file_size &&
        st.st_ino == a->file_ino)
        return 0;
    char *tok = NULL;
    size_t len = 0;
    kc_error rerr = KC_ERROR_INIT;
    int rc = kc__read_file(a->cfg->token_file, KC__CRED_FILE_MAX_BYTES, &tok, &len, &rerr);
    if (rc) {
        /* kc__read_file's message names the file and the system's reason */
        rc = a->file_token ? 0
                           : kc_error_set(err, KC_EAUTH, "token file: %s",
                                          rerr.message ? rerr.message : kc_strerror(rc));
        kc_error_clear(&rerr);
        return rc;
    }
    while (len > 0 && (tok[len - 1] == '\n' || tok[len - 1] == '\r' || tok[len - 1] == ' '))
        tok[--len] = '\0';
    if (!a->file_token || strcmp(a->file_token, tok) != 0)
        a->gen++;
    kc__free_secret_str(a->file_token);
    a->file_token = tok;
    a->file_mtime = st.st_mtim;
    a->file_size = st.st_size;
    a->file_ino = st.st_ino;
    a->file_read_ns = now;
    return 0;
}

/* Under a->mu. */
static int kc__auth_exec(kc__auth *a, kc_error *err)
{
    if (a->have_exec && (a->exec.expiry_ms == 0 ||
                         (int64_t)kc__wall_ms() + KC__EXEC_REFRESH_EARLY_MS < a->exec.expiry_ms))
        return 0;
    kc__exec_result r = {0};
    int rc = kc__exec_run(a->cfg, &r, err);
    if (rc)
        return rc;
    kc__exec_result_clear(&a->exec);
    a->exec = r;
    a->have_exec = true;
    a->gen++;
    return 0;
}

static int kc__dup_into(char **dst, const char *src, size_t len)
{
    if (!src)
        return 0;
    *dst = kc__strdup_n(src, len);
    return *dst ? 0 : KC_ENOMEM;
}

int kc__auth_get(kc__auth *a, kc__cred *ret, kc_error *err)
{
    const kc_config *cfg = a->cfg;
    kc__cred c = {0};
    int rc = 0;
    pthread_mutex_lock(&a->mu);
    if (cfg->exec) {
        rc = kc__auth_exec(a, err);
        if (!rc) {
            const kc__exec_result *x = &a->exec;
            if (kc__dup_into(&c.bearer, x->token, x->token ? strlen(x->token) : 0) ||
                kc__dup_into(&c.cert_pem, x->cert_pem, x->cert_len) ||
                kc__dup_into(&c.key_pem, x->key_pem, x->key_len))
                rc = KC_ENOMEM;
            c.cert_len = x->cert_len;
            c.key_len = x->key_len;
        }
    } else if (cfg->token) {
        rc = kc__dup_into(&c.bearer, cfg->token, strlen(cfg->token));
    } else if (cfg->token_file) {
        rc = kc__auth_token_file(a, err);
        if (!rc && a->file_token)
            rc = kc__dup_into(&c.bearer, a->file_token, strlen(a->file_token));
    }
    if (!rc && !c.bearer && cfg->username) {
        if (kc__dup_into(&c.username, cfg->username, strlen(cfg->username)) ||
            (cfg->password && kc__dup_into(&c.password, cfg->password, strlen(cfg->password))))
            rc = KC_ENOMEM;
    }
    c.generation = a->gen;
    pthread_mutex_unlock(&a->mu);
    if (rc) {
        kc__cred_clear(&c);
        if (rc == KC_ENOMEM)
            kc_error_set(err, rc, "out of memory");
        return rc;
    }
    *ret = c;
    return 0;
}

bool kc__auth_invalidate(kc__auth *a, uint64_t gen)
{
    bool helps = false;
    pthread_mutex_lock(&a->mu);
    if (a->cfg->exec) {
        if (a->gen == gen && a->have_exec) {
            kc__exec_result_clear(&a->exec);
            a->have_exec = false;
        }
        helps = true; /* next get runs the plugin (or another thread already did) */
    } else if (a->cfg->token_file && !a->cfg->token) {
        a->file_checked_ns = 0;
        a->file_read_ns = 0;
        a->file_mtime.tv_sec = -1; /* force a re-read */
        helps = true;
    }
    pthread_mutex_unlock(&a->mu);
    return helps;
}
