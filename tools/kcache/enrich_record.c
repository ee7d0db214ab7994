/*
 * enrich_record.c — which pod, namespace and container a log record names (spec FN rules).
 *
 * Design: each source has its own parser, and each parser accepts exactly what the selected
 * anchor's default rules accept (FN12), so a name one tool enriches the other does too:
 *   - mmkubernetes file names (FN7): the liblognorm rule
 *     "/var/log/containers/%pod_name:char-to:_%_%namespace_name:char-to:_%_%container_name_and_id:char-to:.%.log",
 *     the last field split at its last '-' (a '-' first or last is a non-match; the id is not
 *     checked), hand-matched since the rule is a plain sequence of "up to the next c" fields;
 *   - Fluent Bit file names (FN3): its regex, unanchored, applied to the base name (in_tail's
 *     tag minus "kube.var.log.containers."), via POSIX ERE (regcomp; the named groups become
 *     numbered ones, the non-capturing ones capturing);
 *   - journald CONTAINER_NAME (FN8 for mmk, both containerrules, id = CONTAINER_ID_FULL verbatim;
 *     FN6 for flb, its regex, the id left to the API);
 *   - /var/log/pods/<ns>_<pod>_<uid>/<container>/<n>.log (FN2), only with fields->pods_dir: the
 *     anchors reject it, and FN12 wants the same names accepted by default;
 *   - explicit fields, when their paths are configured (none by default).
 * A /var/log/containers name that is a symlink is resolved (fields->resolve_link) for the pod UID
 * of its /var/log/pods target (FN13), so a recreated pod of the same name is told apart (CA6),
 * and a name cut by the kubelet's 255-byte limit (FN1), which the rules reject, is read from the
 * target. fields->containers_dir replaces /var/log/containers/ (other layouts, tests).
 * Strings land in key->buf; a name longer than the buffer is a non-match (the kubelet's names
 * are at most 255 bytes, FN1).
 */
#include "enrich.h"

#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define FLB_FILE_RE                                                                                \
    "([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)_([^_]+)_(.+)-([a-z0-9]{"   \
    "64})"                                                                                         \
    "\\.log$"
#define FLB_JOURNAL_RE "^([^_]+)_([^._]+)(\\.([^_]+))?_([^_]+)_([^_]+)_[^_]+_[^_]+$"

static regex_t flb_file_re, flb_journal_re;
static bool re_ok;
static pthread_once_t re_once = PTHREAD_ONCE_INIT;

static void re_init(void)
{
    re_ok = !regcomp(&flb_file_re, FLB_FILE_RE, REG_EXTENDED) &&
            !regcomp(&flb_journal_re, FLB_JOURNAL_RE, REG_EXTENDED);
}

/* Copy s[0..n) into the key's buffer; NULL when it does not fit (then for every later call). */
static const char *put(kc__enrich_key *key, size_t *used, const char *s, size_t n)
{
    if (*used + n + 1 > sizeof key->buf) {
        *used = sizeof key->buf + 1; /* sticky: every later field fails too, so the last is NULL */
        return NULL;
    }
    char *d = key->buf + *used;
    memcpy(d, s, n);
    d[n] = '\0';
    *used += n + 1;
    return d;
}

static void key_reset(kc__enrich_key *key)
{
    key->ns = key->pod = key->container = key->container_id = NULL;
    key->container_hash = key->uid = key->have_version = NULL;
}

/* The non-empty field of s up to c (liblognorm char-to): its length, or 0 when c does not follow
 * a non-empty run. */
static size_t char_to(const char *s, char c)
{
    const char *e = strchr(s, c);
    return e && e > s ? (size_t)(e - s) : 0;
}

#define CONTAINERS_DIR "/var/log/containers/"

static const char *dir_of(const char *dir)
{
    return dir && *dir ? dir : CONTAINERS_DIR;
}

static int mmk_filename(const char *dir, const char *path, kc__enrich_key *key)
{
    if (strncmp(path, dir, strlen(dir)))
        return -1;
    const char *p = path + strlen(dir);
    size_t pod_n = char_to(p, '_');
    if (!pod_n)
        return -1;
    const char *ns = p + pod_n + 1;
    size_t ns_n = char_to(ns, '_');
    if (!ns_n)
        return -1;
    const char *cid = ns + ns_n + 1;
    size_t cid_n = char_to(cid, '.');
    if (!cid_n || strcmp(cid + cid_n, ".log"))
        return -1;
    const char *dash = NULL;
    for (const char *q = cid; q < cid + cid_n; q++)
        if (*q == '-')
            dash = q;
    if (!dash || dash == cid || dash == cid + cid_n - 1)
        return -1;
    size_t used = 0;
    key->pod = put(key, &used, p, pod_n);
    key->ns = put(key, &used, ns, ns_n);
    key->container = put(key, &used, cid, (size_t)(dash - cid));
    key->container_id = put(key, &used, dash + 1, (size_t)(cid + cid_n - dash - 1));
    return key->container_id ? 0 : -1;
}

/* FN3's regex on base (a name without the directory, or the tag without its prefix). */
static int flb_match(const char *base, kc__enrich_key *key)
{
    pthread_once(&re_once, re_init);
    regmatch_t m[8];
    if (!re_ok)
        return -1;
    if (regexec(&flb_file_re, base, 8, m, 0))
        return -1;
    size_t used = 0;
    key->pod = put(key, &used, base + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
    key->ns = put(key, &used, base + m[5].rm_so, (size_t)(m[5].rm_eo - m[5].rm_so));
    key->container = put(key, &used, base + m[6].rm_so, (size_t)(m[6].rm_eo - m[6].rm_so));
    key->container_id = put(key, &used, base + m[7].rm_so, (size_t)(m[7].rm_eo - m[7].rm_so));
    return key->container_id ? 0 : -1;
}

static int flb_filename(const char *dir, const char *path, kc__enrich_key *key)
{
    return strncmp(path, dir, strlen(dir)) ? -1 : flb_match(path + strlen(dir), key);
}

int kc__enrich_parse_tag(const char *tag, const char *prefix, kc__enrich_key *key)
{
    key_reset(key);
    size_t skip = strlen(prefix ? prefix : "kube.var.log.containers.");
    /* FN4: the prefix is skipped by its length without a check; a tag not longer than the
     * prefix + 1 is left alone */
    int rc = tag && strlen(tag) > skip + 1 ? flb_match(tag + skip, key) : -1;
    if (rc)
        key_reset(key);
    return rc;
}

/* /var/log/pods/<ns>_<pod>_<uid>/<container>/<n>.log (FN2); ns and pod names hold no '_'. */
static int pods_dir_name(const char *path, kc__enrich_key *key, size_t *used)
{
    static const char prefix[] = "/var/log/pods/";
    if (strncmp(path, prefix, sizeof prefix - 1))
        return -1;
    /* each field is checked before the next one is located: a missing separator must not step
     * past the terminating NUL */
    const char *ns = path + sizeof prefix - 1;
    size_t ns_n = char_to(ns, '_');
    if (!ns_n)
        return -1;
    const char *pod = ns + ns_n + 1;
    size_t pod_n = char_to(pod, '_');
    if (!pod_n)
        return -1;
    const char *uid = pod + pod_n + 1;
    size_t uid_n = char_to(uid, '/');
    if (!uid_n || memchr(uid, '_', uid_n))
        return -1;
    const char *c = uid + uid_n + 1;
    size_t c_n = char_to(c, '/');
    if (!c_n)
        return -1;
    const char *file = c + c_n + 1;
    size_t digits = strspn(file, "0123456789");
    if (!digits || strcmp(file + digits, ".log"))
        return -1;
    key->ns = put(key, used, ns, ns_n);
    key->pod = put(key, used, pod, pod_n);
    key->uid = put(key, used, uid, uid_n);
    key->container = put(key, used, c, c_n);
    return key->container ? 0 : -1;
}

/*
 * FN13: the /var/log/pods target of a link in the containers directory. A name that parsed gains
 * the pod UID (when the target names the same pod); one that did not — cut at 255 bytes (FN1), so
 * its id or more is missing — is read from the target instead (namespace, pod, UID, container).
 * 0 when key holds a pod afterwards.
 */
static int resolve_link(const char *path, kc__enrich_key *key, int parsed)
{
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return parsed;
    target[n] = '\0';
    kc__enrich_key k;
    key_reset(&k);
    size_t used = 0;
    if (pods_dir_name(target, &k, &used))
        return parsed;
    if (parsed) {                              /* a name the rules reject: the target says it all */
        memcpy(key->buf, k.buf, sizeof k.buf); /* the strings, at the same offsets */
        key->ns = key->buf + (k.ns - k.buf);
        key->pod = key->buf + (k.pod - k.buf);
        key->uid = key->buf + (k.uid - k.buf);
        key->container = key->buf + (k.container - k.buf);
        return 0;
    }
    if (strcmp(k.ns, key->ns) || strcmp(k.pod, key->pod))
        return 0;
    /* the file-name parsers put container_id last: the UID goes after it */
    size_t at = (size_t)(key->container_id - key->buf) + strlen(key->container_id) + 1;
    key->uid = put(key, &at, k.uid, strlen(k.uid));
    return 0;
}

static int parse_filename_in(kc__enrich_fmt fmt, const char *dir, const char *path, bool pods_dir,
                             kc__enrich_key *key)
{
    key_reset(key);
    if (!path)
        return -1;
    if (pods_dir && !strncmp(path, "/var/log/pods/", 14)) {
        size_t used = 0;
        if (!pods_dir_name(path, key, &used))
            return 0;
        key_reset(key);
        return -1;
    }
    int rc = fmt == KC_ENRICH_FMT_FLB ? flb_filename(dir, path, key) : mmk_filename(dir, path, key);
    if (rc)
        key_reset(key);
    return rc;
}

int kc__enrich_parse_filename(kc__enrich_fmt fmt, const char *path, bool pods_dir,
                              kc__enrich_key *key)
{
    return parse_filename_in(fmt, CONTAINERS_DIR, path, pods_dir, key);
}

/* FN8: k8s_<container>.<hash>_<pod>_<ns>_<x>_<rest>, or without ".<hash>" (container up to '_'). */
static int mmk_journald(const char *name, kc__enrich_key *key, size_t *used)
{
    size_t pre = char_to(name, '_');
    if (!pre)
        return -1;
    const char *c = name + pre + 1;
    for (int with_hash = 1; with_hash >= 0; with_hash--) {
        size_t c_n = char_to(c, with_hash ? '.' : '_'), h_n = 0;
        const char *h = c + c_n + 1;
        if (!c_n || (with_hash && !(h_n = char_to(h, '_'))))
            continue;
        const char *pod = with_hash ? h + h_n + 1 : h;
        size_t pod_n = char_to(pod, '_');
        const char *ns = pod + pod_n + 1;
        size_t ns_n = pod_n ? char_to(ns, '_') : 0;
        if (!ns_n || !char_to(ns + ns_n + 1, '_'))
            continue;
        key->container = put(key, used, c, c_n);
        key->container_hash = with_hash ? put(key, used, h, h_n) : NULL;
        key->pod = put(key, used, pod, pod_n);
        key->ns = put(key, used, ns, ns_n);
        return key->ns ? 0 : -1;
    }
    return -1;
}

static int flb_journald(const char *name, kc__enrich_key *key, size_t *used)
{
    pthread_once(&re_once, re_init);
    regmatch_t m[7];
    if (!re_ok || regexec(&flb_journal_re, name, 7, m, 0))
        return -1;
    key->container = put(key, used, name + m[2].rm_so, (size_t)(m[2].rm_eo - m[2].rm_so));
    if (m[4].rm_so >= 0)
        key->container_hash = put(key, used, name + m[4].rm_so, (size_t)(m[4].rm_eo - m[4].rm_so));
    key->pod = put(key, used, name + m[5].rm_so, (size_t)(m[5].rm_eo - m[5].rm_so));
    key->ns = put(key, used, name + m[6].rm_so, (size_t)(m[6].rm_eo - m[6].rm_so));
    return key->ns ? 0 : -1;
}

int kc__enrich_parse_journald(kc__enrich_fmt fmt, const char *name, const char *id_full,
                              kc__enrich_key *key)
{
    key_reset(key);
    size_t used = 0;
    int rc = -1;
    if (fmt == KC_ENRICH_FMT_MMK) {
        if (name && *name && id_full && *id_full && !(rc = mmk_journald(name, key, &used)))
            rc = (key->container_id = put(key, &used, id_full, strlen(id_full))) ? 0 : -1;
    } else if (name && *name) {
        rc = flb_journald(name, key, &used);
    }
    if (rc)
        key_reset(key);
    return rc;
}

const char *kc__enrich_path_get(json_t *rec, const char *path)
{
    if (!path || !*path || !json_is_object(rec))
        return NULL;
    json_t *v = rec;
    const char *p = path;
    if (!strncmp(p, "$!", 2)) { /* rsyslog's message variables: the "$!" member of fulljson */
        v = json_object_get(v, "$!");
        p += p[2] == '!' ? 3 : 2;
    }
    while (v && *p) {
        size_t n = strcspn(p, "!");
        v = json_is_object(v) ? json_object_getn(v, p, n) : NULL;
        p += n + (p[n] == '!');
    }
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int explicit_key(const kc__enrich_fields *f, json_t *rec, kc__enrich_key *key)
{
    const char *ns = kc__enrich_path_get(rec, f->ns), *pod = kc__enrich_path_get(rec, f->pod);
    if (!ns || !*ns || !pod || !*pod)
        return -1;
    const char *c = kc__enrich_path_get(rec, f->container);
    const char *id = kc__enrich_path_get(rec, f->container_id);
    size_t used = 0;
    key->ns = put(key, &used, ns, strlen(ns));
    key->pod = put(key, &used, pod, strlen(pod));
    if (c && *c)
        key->container = put(key, &used, c, strlen(c));
    if (id && *id)
        key->container_id = put(key, &used, id, strlen(id));
    return used <= sizeof key->buf ? 0 : -1;
}

int kc__enrich_record_key(kc__enrich_fmt fmt, const kc__enrich_fields *f, json_t *rec,
                          kc__enrich_key *key)
{
    key_reset(key);
    if (!json_is_object(rec))
        return -1;
    if ((f->ns || f->pod) && !explicit_key(f, rec, key))
        return 0;
    key_reset(key);
    const char *cname = kc__enrich_path_get(rec, f->container_name);
    const char *cid = kc__enrich_path_get(rec, f->container_id_full);
    if (cname && !kc__enrich_parse_journald(fmt, cname, cid, key))
        return 0;
    const char *file = kc__enrich_path_get(rec, f->filename);
    if (!file && f->tag)
        return kc__enrich_parse_tag(kc__enrich_path_get(rec, f->tag), f->tag_prefix, key);
    const char *dir = dir_of(f->containers_dir);
    int rc = parse_filename_in(fmt, dir, file, f->pods_dir, key);
    if (f->resolve_link && file && !strncmp(file, dir, strlen(dir)) && (rc || !key->uid))
        rc = resolve_link(file, key, rc);
    return rc;
}
