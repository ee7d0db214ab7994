/*
 * kubeconfig_out.c — write a kubeconfig for a running embedded server.
 *
 * Design: the document is produced with libyaml's emitter (so the URL and token are quoted and
 * escaped correctly whatever they contain) into a bounded memory buffer, then written to a temp
 * file created with mkstemp (mode 0600) in the target's directory, fsync'd, and renamed over the
 * target — readers see the old file or the whole new one, never a partial one. Shape:
 *
 *   apiVersion: v1
 *   kind: Config
 *   clusters: [{name: kcache, cluster: {server: URL, certificate-authority-data: B64}}]
 *             (plain http:// URLs get insecure-skip-tls-verify: true instead: client-node
 *             refuses http:// without it)
 *   users:    [{name: kcache, user: {token: T}}]
 *   contexts: [{name: kcache, context: {cluster: kcache, user: kcache, namespace: default}}]
 *   current-context: kcache
 *
 * Thread-safe: no shared state. The token goes only into the file, never into a log or error.
 */
#include "server/http/kubeconfig_out.h"

#include "core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define KCFG_MAX   ((size_t)1 << 20) /* the document: a CA and a token fit many times over */
#define PATH_LIMIT 4096

typedef struct emit {
    yaml_emitter_t em;
    bool ok;
} emit;

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
    return kc__buf_append(data, buffer, size) == 0;
}

static void ev_scalar(emit *e, const char *s, bool quoted)
{
    yaml_event_t ev;
    if (!e->ok)
        return;
    e->ok = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                         quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                                : YAML_ANY_SCALAR_STYLE) &&
            yaml_emitter_emit(&e->em, &ev);
}

static void ev_kv(emit *e, const char *k, const char *v, bool quoted)
{
    ev_scalar(e, k, false);
    ev_scalar(e, v, quoted);
}

static void ev_map(emit *e, bool start)
{
    yaml_event_t ev;
    if (!e->ok)
        return;
    e->ok =
        (start ? yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE)
               : yaml_mapping_end_event_initialize(&ev)) &&
        yaml_emitter_emit(&e->em, &ev);
}

static void ev_seq(emit *e, bool start)
{
    yaml_event_t ev;
    if (!e->ok)
        return;
    e->ok =
        (start ? yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE)
               : yaml_sequence_end_event_initialize(&ev)) &&
        yaml_emitter_emit(&e->em, &ev);
}

/* One "- name: kcache\n  <section>: {...}" list entry; body emits the inner mapping's pairs. */
static void named_entry_start(emit *e, const char *list, const char *section)
{
    ev_scalar(e, list, false);
    ev_seq(e, true);
    ev_map(e, true);
    ev_kv(e, "name", "kcache", false);
    ev_scalar(e, section, false);
    ev_map(e, true);
}

static void named_entry_end(emit *e)
{
    ev_map(e, false);
    ev_map(e, false);
    ev_seq(e, false);
}

static char *base64(const char *s)
{
    size_t n = strlen(s), out;
    if (n > KCFG_MAX || !kc__size_mul((n + 2) / 3, 4, &out))
        return NULL;
    char *b = malloc(out + 1);
    if (b)
        EVP_EncodeBlock((unsigned char *)b, (const unsigned char *)s, (int)n);
    return b;
}

static int render(const char *url, const char *ca_pem, const char *token, kc__buf *out)
{
    char *ca64 = ca_pem ? base64(ca_pem) : NULL;
    if (ca_pem && !ca64)
        return KC_ENOMEM;
    emit e = {.ok = true};
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&e.em)) {
        free(ca64);
        return KC_ENOMEM;
    }
    yaml_emitter_set_output(&e.em, write_handler, out);
    yaml_emitter_set_unicode(&e.em, 1);
    yaml_emitter_set_width(&e.em, -1); /* never fold the long base64 line */
    e.ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
           yaml_emitter_emit(&e.em, &ev) &&
           yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
           yaml_emitter_emit(&e.em, &ev);
    ev_map(&e, true);
    ev_kv(&e, "apiVersion", "v1", false);
    ev_kv(&e, "kind", "Config", false);
    named_entry_start(&e, "clusters", "cluster");
    ev_kv(&e, "server", url, true);
    /* client-node ≥ 1.0 refuses plain http:// unless skipTLSVerify is set; nothing is verified
     * over plain HTTP anyway, and kubectl and python ignore it there. */
    if (!strncmp(url, "http://", 7))
        ev_kv(&e, "insecure-skip-tls-verify", "true", false);
    if (ca64)
        ev_kv(&e, "certificate-authority-data", ca64, false);
    named_entry_end(&e);
    named_entry_start(&e, "users", "user");
    if (token)
        ev_kv(&e, "token", token, true);
    named_entry_end(&e);
    named_entry_start(&e, "contexts", "context");
    ev_kv(&e, "cluster", "kcache", false);
    ev_kv(&e, "user", "kcache", false);
    ev_kv(&e, "namespace", "default", false);
    named_entry_end(&e);
    ev_kv(&e, "current-context", "kcache", false);
    ev_map(&e, false);
    if (e.ok)
        e.ok = yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e.em, &ev) &&
               yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e.em, &ev) &&
               yaml_emitter_flush(&e.em);
    yaml_emitter_delete(&e.em);
    free(ca64);
    return e.ok ? 0 : KC_ENOMEM;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int kc__kubeconfig_write(const char *path, const char *url, const char *ca_pem, const char *token,
                         kc_error *err)
{
    if (!path || !*path || !url || strlen(path) >= PATH_LIMIT)
        return kc_error_set(err, KC_EINVAL, "kubeconfig: missing or too long path or URL");
    kc__buf doc = KC__BUF_INIT(KCFG_MAX);
    int rc = render(url, ca_pem, token, &doc);
    if (rc) {
        kc__buf_free(&doc);
        return kc_error_set(err, rc, "kubeconfig: cannot render the document");
    }
    char tmp[PATH_LIMIT + 16];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp); /* mode 0600 */
    if (fd < 0) {
        int e = errno;
        kc__buf_free(&doc);
        return kc_error_set(err, KC_EIO, "kubeconfig: cannot create %s: %s", tmp, strerror(e));
    }
    if (fchmod(fd, 0600) || write_all(fd, doc.data, doc.len) || fsync(fd)) {
        int e = errno;
        close(fd);
        unlink(tmp);
        kc__buf_free(&doc);
        return kc_error_set(err, KC_EIO, "kubeconfig: cannot write %s: %s", tmp, strerror(e));
    }
    kc__buf_free(&doc);
    if (close(fd) || rename(tmp, path)) {
        int e = errno;
        unlink(tmp);
        return kc_error_set(err, KC_EIO, "kubeconfig: cannot write %s: %s", path, strerror(e));
    }
    return 0;
}
