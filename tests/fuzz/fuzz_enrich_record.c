/*
 * fuzz_enrich_record.c — libFuzzer target for `kcache enrich`'s record side
 * (tools/kcache/enrich_record.c, enrich_format.c, enrich_mmx.c): what rsyslog or a log file
 * hands it is untrusted.
 *
 * The input is used three ways: as one mmexternal input line (kc__enrich_reply, both formats,
 * a fake view that knows every pod), as a file name, and split at its first NUL into journald's
 * CONTAINER_NAME and CONTAINER_ID_FULL. Checked: the reply is exactly one line (no LF) holding a
 * JSON object, either {} or {"$!":{…}} with a kubernetes object whose pod_name is the parsed
 * pod; every parsed key field is non-empty and NUL-free, and a file-name match lies within the
 * input; the same line asked again (the answer cache, enrich_reuse.c) gets the same reply.
 */
#include "enrich.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcache/error.h"

static int fake_lookup(void *ud, const kc__enrich_key *key, kc__enrich_meta *ret)
{
    (void)ud;
    memset(ret, 0, sizeof *ret);
    if (key->pod[0] == 'x')
        return KC_ENOTFOUND;
    ret->pod =
        json_pack("{s:{s:s,s:{s:s,s:s},s:{s:s}},s:{s:[{s:s,s:s,s:s,s:s}]}}", "metadata", "uid", "u",
                  "labels", "a.b/c", "v", "x", "y", "annotations", "k8s.io/x", "z", "status",
                  "containerStatuses", "name", key->container ? key->container : "", "containerID",
                  "containerd://abc", "imageID", "docker-pullable://i@sha256:1", "image", "i");
    ret->ns = json_pack("{s:{s:s,s:s}}", "metadata", "uid", "n", "creationTimestamp", "t");
    return 0;
}

static void check_key(const kc__enrich_key *k)
{
    const char *f[] = {k->ns, k->pod, k->container, k->container_id, k->container_hash, k->uid};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (f[i] && (!*f[i] || f[i] < k->buf || f[i] >= k->buf + sizeof k->buf))
            abort();
    if (!k->ns || !k->pod)
        abort();
}

static void check_reply(const char *r)
{
    if (!r || strchr(r, '\n'))
        abort();
    json_t *j = json_loads(r, 0, NULL);
    if (!json_is_object(j))
        abort();
    json_t *v = json_object_get(j, "$!");
    if (json_object_size(j) > 1 || (json_object_size(j) == 1 && !json_is_object(v)))
        abort();
    json_t *k = json_object_get(v, "kubernetes");
    if (v && (!json_is_object(k) || !json_is_string(json_object_get(k, "pod_name"))))
        abort();
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const kc__enrich_fields fields = {.filename = "$!metadata!filename",
                                             .container_name = "$!CONTAINER_NAME",
                                             .container_id_full = "$!CONTAINER_ID_FULL",
                                             .pods_dir = true};
    static kc__enrich_out out[2];
    static bool init;
    if (!init) {
        char msg[128];
        for (int i = 0; i < 2; i++) {
            out[i] = (kc__enrich_out){.fmt = i,
                                      .labels = true,
                                      .annotations = true,
                                      .ns_meta = true,
                                      .de_dot = i == 0,
                                      .owner_refs = true,
                                      .ns_labels = true,
                                      .orphans_keep = true};
            strcpy(out[i].de_dot_sep, "_");
            if (kc__enrich_filter_add(&out[i].annotation_match, "^k8s", msg, sizeof msg))
                abort();
        }
        init = true;
    }
    if (size > 65536)
        return 0;
    char *s = malloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    for (int fmt = 0; fmt < 2; fmt++) {
        static _Atomic uint64_t gen; /* never moves: the second reply comes from the cache */
        kc__enrich_loop l = {.mmexternal = true,
                             .max_line = 65536,
                             .fmt = fmt,
                             .fields = &fields,
                             .out = &out[fmt],
                             .view = {.lookup = fake_lookup, .generation = &gen}};
        char *r = kc__enrich_reply(&l, s, size), *again = kc__enrich_reply(&l, s, size);
        check_reply(r);
        if (strcmp(r, again)) /* a reused answer is the answer */
            abort();
        kc__enrich_loop_release(&l);
        free(again);
        free(r);
        kc__enrich_key k;
        if (!kc__enrich_parse_filename(fmt, s, true, &k))
            check_key(&k);
        const char *id = memchr(s, '\0', size) ? s + strlen(s) + 1 : NULL;
        if (!kc__enrich_parse_journald(fmt, s, id && id <= s + size ? id : NULL, &k))
            check_key(&k);
    }
    free(s);
    return 0;
}
