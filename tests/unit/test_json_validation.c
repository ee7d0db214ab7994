/*
 * test_json_validation — bad JSON is rejected with the offset of the byte at fault, never
 * rewritten, through every decoder: kc_obj_parse, kc_list_decode (the item inside a LIST body) and
 * the watch decoder (the item as the object of the second event of a stream). Covers the
 * minifier's refusal to join tokens ("1 0" is not "10"), offsets in pretty-printed and truncated
 * text, the default validation policy for skipped sub-trees, KC_DECODE_STRICT, and members that
 * the decoders read appearing twice.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../bench/genpod.h"

#include <kcache/decode.h>

#include "json/locate.h"
#include "json/sj.h" /* kc__sj_minify and its reference */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum dec { D_OBJ, D_LIST, D_WATCH };
static const char *const dec_name[] = {"kc_obj_parse", "kc_list_decode", "watch decoder"};

static const char LIST_HEAD[] = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":[";
static const char WATCH_HEAD[] = "{\"type\":\"ADDED\",\"object\":{}}\n{\"type\":\"MODIFIED\","
                                 "\"object\":";

struct result {
    int code;
    int64_t off;   /* error offset relative to the item; -1 when none */
    char *stored;  /* the item's stored text on success (malloc'd) */
    char msg[256]; /* error message */
};

static int keep_first(void *ud, kc_obj *o)
{
    char **s = ud;
    if (!*s)
        *s = strdup(kc_obj_json(o, NULL));
    kc_obj_unref(o);
    return 0;
}

static int keep_modified(void *ud, const kc_watch_event *ev)
{
    char **s = ud;
    if (ev->type == KC_WATCH_MODIFIED && ev->obj && !*s)
        *s = strdup(kc_obj_json(ev->obj, NULL));
    return 0;
}

/* Decodes item (one JSON object text) through decoder d with flags. */
static struct result decode_as(enum dec d, const char *item, unsigned flags)
{
    struct result res = {0, -1, NULL, ""};
    kc_decode_opts o = {.flags = flags, .max_object_size = 0};
    kc_error err = KC_ERROR_INIT;
    size_t il = strlen(item), head = 0;
    if (d == D_OBJ) {
        kc_obj *obj = NULL;
        res.code = kc_obj_parse(item, il, &o, &obj, &err);
        if (obj)
            res.stored = strdup(kc_obj_json(obj, NULL));
        kc_obj_unref(obj);
    } else {
        const char *h = d == D_LIST ? LIST_HEAD : WATCH_HEAD;
        const char *tail = d == D_LIST ? "]}" : "}\n";
        head = strlen(h);
        char *text = malloc(head + il + 3);
        sprintf(text, "%s%s%s", h, item, tail);
        if (d == D_LIST) {
            res.code = kc_list_decode(text, strlen(text), &o, NULL, keep_first, &res.stored, &err);
        } else {
            kc_watch_decoder *w = NULL;
            assert_int_equal(kc_watch_decoder_new(&o, &w, NULL), 0);
            res.code =
                kc_watch_decoder_feed(w, text, strlen(text), keep_modified, &res.stored, &err);
            if (!res.code)
                res.code = kc_watch_decoder_finish(w, keep_modified, &res.stored, &err);
            kc_watch_decoder_free(w);
        }
        free(text);
    }
    if (res.code) {
        res.off = err.offset >= 0 ? err.offset - (int64_t)head : -2;
        snprintf(res.msg, sizeof res.msg, "%s", err.message ? err.message : "(no message)");
    }
    kc_error_clear(&err);
    return res;
}

/* Offset of the first occurrence of needle in item. */
static int64_t at(const char *item, const char *needle)
{
    const char *p = strstr(item, needle);
    if (!p)
        fail_msg("test bug: \"%s\" not in %s", needle, item);
    return p - item;
}

/* item must fail with KC_EPARSE at the first byte of needle in every decoder, nothing stored. */
/* A watch event is one line: items with a newline go through the other decoders only. */
static int last_dec(const char *item)
{
    return strchr(item, '\n') ? D_LIST : D_WATCH;
}

static void expect_bad(const char *item, unsigned flags, const char *needle, const char *want)
{
    for (int d = D_OBJ; d <= last_dec(item); d++) {
        struct result r = decode_as((enum dec)d, item, flags);
        if (r.code != KC_EPARSE || r.off != at(item, needle))
            fail_msg("%s, %s: %s at %lld (%s), want KC_EPARSE at %lld", dec_name[d], item,
                     kc_errno_name(r.code), (long long)r.off, r.msg, (long long)at(item, needle));
        if (want && !strstr(r.msg, want))
            fail_msg("%s, %s: message \"%s\" lacks \"%s\"", dec_name[d], item, r.msg, want);
        assert_null(r.stored);
    }
}

/* item must decode in every decoder; returns what kc_obj_parse stored (caller frees). */
static char *expect_ok(const char *item, unsigned flags)
{
    char *obj_stored = NULL;
    for (int d = D_OBJ; d <= last_dec(item); d++) {
        struct result r = decode_as((enum dec)d, item, flags);
        if (r.code)
            fail_msg("%s, %s: %s at %lld (%s)", dec_name[d], item, kc_errno_name(r.code),
                     (long long)r.off, r.msg);
        assert_non_null(r.stored);
        if (d == D_OBJ)
            obj_stored = r.stored;
        else
            free(r.stored);
    }
    return obj_stored;
}

/* Issue 16 point 4: whitespace between two values is an error, not something to squeeze out. */
static void test_json_validation_joined_tokens_rejected(void **state)
{
    static const struct {
        const char *item, *needle, *strict_needle; /* NULL: the same */
    } cases[] = {
        {"{\"spec\":{\"replicas\": 1 0}}", "0}}", NULL},
        {"{\"metadata\":{\"generation\": 1 2}}", "2}}", NULL},
        {"{\"metadata\":{\"generation\":1 2}}", "2}}", NULL},
        /* strict mode finds "tr" malformed before it could be joined (the LIST is walked as is) */
        {"{\"spec\":{\"a\":tr ue}}", "ue}", "tr "},
        {"{\"spec\":{\"a\":[1\n0]}}", "0]", NULL},
        {"{\"spec\":{\"a\":[1\t\r\n 0]}}", "0]", NULL},
        {"{\"spec\":{\"a\":\"x\" \"y\"}}", "\"y\"", NULL},
        {"{\"spec\":{\"a\":[{} {}]}}", "{}]", NULL},
        {"{ \"spec\" : { \"a\" : 1 } \"status\" : {} }", "\"status\"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expect_bad(cases[i].item, 0, cases[i].needle, NULL);
        if (!cases[i].strict_needle)
            expect_bad(cases[i].item, KC_DECODE_STRICT, cases[i].needle, NULL);
    }
    struct result t = decode_as(D_LIST, cases[3].item, KC_DECODE_STRICT);
    assert_int_equal(t.code, KC_EPARSE);
    assert_int_equal(t.off, at(cases[3].item, cases[3].strict_needle));
    /* the message says what is wrong */
    struct result r = decode_as(D_OBJ, cases[0].item, 0);
    assert_non_null(strstr(r.msg, "only whitespace between"));
}

/* Whitespace next to ',' ':' and brackets is whitespace: pretty text still decodes, minified. */
static void test_json_validation_pretty_text_minified(void **state)
{
    char *s =
        expect_ok("{ \"spec\" : { \"a\" : [ 1 , 2 ] , \"b\" : \"x y\" } ,\n\t\"c\" : { } }", 0);
    assert_string_equal(s, "{\"spec\":{\"a\":[1,2],\"b\":\"x y\"},\"c\":{}}");
    free(s);
}

/* The vectorised minifier against the reference (simdjson::minify + the scalar join check), with
 * each pattern shifted across the 64-byte blocks it works in: escapes, strings and whitespace
 * runs that straddle a block boundary. */
static void test_json_validation_minifier_matches_reference(void **state)
{
    static const char *const patterns[] = {
        "1 0",           "[1, 2]",      "\"a\\\" b\" 1", "\"\\\\\" \"x\"", "{\"a\" :\t\"b\"}",
        "tr ue",         "} {",         "\\ \"",         "\"x\" \"y\"",    "[\"\\\\\\\"\" ,\n1]",
        "\"open string", "{\"a\":[ ]}", "1\r\n0",        "\" \" \" \"",
    };
    char text[400], a[480], b[480];
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        for (size_t shift = 0; shift < 140; shift++) {
            for (size_t gap = 1; gap < 80; gap += 39) {
                /* shift bytes of a string, the pattern, a whitespace run of gap, a value */
                size_t n = 0;
                text[n++] = '[';
                text[n++] = '"';
                for (size_t i = 0; i < shift; i++)
                    text[n++] = i % 7 ? 'x' : ' ';
                text[n++] = '"';
                text[n++] = ',';
                size_t pl = strlen(patterns[p]);
                memcpy(text + n, patterns[p], pl);
                n += pl;
                memset(text + n, ' ', gap);
                n += gap;
                text[n++] = '7';
                size_t na = 0, nb = 0;
                int64_t ja = -1, jb = -1;
                int ra = kc__sj_minify(text, n, a, &na, &ja);
                int rb = kc__sj_minify_reference(text, n, b, &nb, &jb);
                /* a string left open stops the reference; the minifier may see a join first */
                if (ra && jb < 0 && kc__json_unclosed_string(text, n) >= 0)
                    jb = ja;
                if (ra != rb || ja != jb || (!ra && (na != nb || memcmp(a, b, na))))
                    fail_msg("pattern %zu shift %zu gap %zu: %d/%d join %lld/%lld (%.*s)", p, shift,
                             gap, ra, rb, (long long)ja, (long long)jb, (int)n, text);
            }
        }
    }
}

/* Text compact but for spaces inside strings (a condition message) is its own minified form: it
 * is stored as received, and offsets need no mapping. */
static void test_json_validation_spaces_inside_strings(void **state)
{
    const char *item = "{\"metadata\":{\"name\":\"a b\"},\"status\":{\"message\":\"x  y \"}}";
    char *s = expect_ok(item, 0);
    assert_string_equal(s, item);
    free(s);
    expect_bad("{\"metadata\":{\"name\":\"a b\",\"uid\":5}}", 0, "5}", "metadata.uid");
    expect_bad("{\"metadata\":{\"name\":\"a b\",\"labels\":{\"k\":1}}}", 0, "1}", "labels value");
    /* the scan that decides it, against its scalar reference, across block boundaries */
    char text[300];
    for (size_t at = 0; at < 200; at++) {
        memset(text, 'x', sizeof text);
        text[0] = '"';
        text[at + 1] = ' '; /* inside the string */
        text[250] = '"';
        text[251] = at % 3 ? ',' : ' '; /* outside: whitespace every third case */
        text[252] = '1';
        size_t want = kc__json_ws_outside_strings(text, 253);
        assert_int_equal(kc__sj_ws_outside_strings(text, 253), want);
        assert_int_equal(want, at % 3 ? 253 : 251);
    }
}

/* Errors in pretty-printed text name the byte of the input (the decoders see a minified copy). */
static void test_json_validation_offsets_in_pretty_text(void **state)
{
    expect_bad("{ \"metadata\" : { \"name\" : 5 } }", 0, "5 }", "metadata.name");
    expect_bad("{\n  \"metadata\": {\n    \"labels\": [ ]\n  }\n}", 0, "[ ]", "metadata.labels");
    expect_bad("{ \"spec\" : \"\xff\" }", 0, "\xff", "UTF-8");
    expect_bad("{ \"spec\" : \"a\x01\" }", 0, "\x01", NULL);
    expect_bad("{ \"metadata\" : { \"name\" : \"a\" , \"name\" : \"b\" } }", 0, "\"name\" : \"b",
               "duplicate");
}

/* Errors simdjson's stage 1 reports without a position get one. */
static void test_json_validation_stage1_offsets(void **state)
{
    expect_bad("{\"spec\":{\"x\":\"ab\xc3(\"}}", 0, "\xc3", "UTF-8");
    expect_bad("{\"spec\":{\"x\":\"\xed\xa0\x80\"}}", 0, "\xed", "UTF-8");
    expect_bad("{\"spec\":\"a\tb\"}", 0, "\tb", NULL);
    /* a string left open runs to the end of the text: the error is at its opening quote */
    expect_bad("{\"spec\":\"abc}", 0, "\"abc", NULL);
}

/* Truncated input: KC_EPARSE at the end of the text (at the opening quote when it ends inside
 * a string), for every prefix of a Pod, a LIST body and a watch stream. */
static void check_prefix_offset(const char *text, size_t cut, int r, int64_t off, const char *what)
{
    if (r != KC_EPARSE)
        fail_msg("%s prefix %zu: %s", what, cut, kc_errno_name(r));
    if (off == (int64_t)cut)
        return;
    if (off < 0 || off > (int64_t)cut || text[off] != '"')
        fail_msg("%s prefix %zu: offset %lld", what, cut, (long long)off);
}

static void test_json_validation_truncated_offsets(void **state)
{
    char pod[KC_GENPOD_MAX];
    size_t n = kc_genpod_one(pod, sizeof pod, 5);
    for (size_t cut = 0; cut < n; cut++) {
        kc_error err = KC_ERROR_INIT;
        kc_obj *o = NULL;
        int r = kc_obj_parse(pod, cut, NULL, &o, &err);
        check_prefix_offset(pod, cut, r, err.offset, "Pod");
        kc_error_clear(&err);
    }
    size_t len;
    char *list = kc_genpod_list(2, &len);
    for (size_t cut = 0; cut < len; cut += 3) {
        kc_error err = KC_ERROR_INIT;
        int r = kc_list_decode(list, cut, NULL, NULL, NULL, NULL, &err);
        check_prefix_offset(list, cut, r, err.offset, "LIST");
        kc_error_clear(&err);
    }
    free(list);
    char *watch = kc_genpod_watch(1, "ADDED", &len);
    for (size_t cut = 1; cut < len - 1; cut += 3) {
        kc_error err = KC_ERROR_INIT;
        kc_watch_decoder *w = NULL;
        assert_int_equal(kc_watch_decoder_new(NULL, &w, NULL), 0);
        struct result sink = {0, -1, NULL, ""};
        int r = kc_watch_decoder_feed(w, watch, cut, keep_modified, &sink.stored, &err);
        if (!r)
            r = kc_watch_decoder_finish(w, keep_modified, &sink.stored, &err);
        check_prefix_offset(watch, cut, r, err.offset, "watch");
        kc_error_clear(&err);
        kc_watch_decoder_free(w);
    }
    free(watch);
    /* pretty text cut short: the offset is the input's end, not the minified copy's */
    const char *pretty = "{\n  \"spec\": {\n    \"a\": [1, 2\n";
    kc_error err = KC_ERROR_INIT;
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(pretty, strlen(pretty), NULL, &o, &err), KC_EPARSE);
    assert_int_equal(err.offset, (int64_t)strlen(pretty));
    assert_non_null(strstr(err.message, "truncated"));
    kc_error_clear(&err);
}

/* Trailing data after the document. */
static void test_json_validation_trailing_data(void **state)
{
    const char *cases[] = {"{\"a\":1}x", "{\"a\":1} x", "{\"a\":1}\n{\"b\":2}", "{\"a\":1}]"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kc_error err = KC_ERROR_INIT;
        kc_obj *o = NULL;
        assert_int_equal(kc_obj_parse(cases[i], strlen(cases[i]), NULL, &o, &err), KC_EPARSE);
        const char *p = strchr(cases[i], '}') + 1;
        while (*p == ' ' || *p == '\n')
            p++;
        if (err.offset != p - cases[i])
            fail_msg("%s: offset %lld (%s)", cases[i], (long long)err.offset, err.message);
        kc_error_clear(&err);
    }
}

/* The default policy for sub-trees the decoders do not read (docs/decoding.md, "Validation"):
 * brackets are counted, scalars and separators are not parsed; such text is stored exactly as
 * received — and KC_DECODE_STRICT rejects it at the offending token. */
static const struct {
    const char *item, *needle;
} unread_malformed[] = {
    {"{\"spec\":{\"a\":tru}}", "tru"},
    {"{\"spec\":{\"a\":[1}]}", "}]"},
    {"{\"spec\":{\"a\":\"x\"\"y\"}}", "\"y\""},
    {"{\"spec\":{\"a\\q\":1}}", "\"a\\q"},
    {"{\"spec\":[01]}", "01"},
    {"{\"spec\":[1,]}", "]}"},
    {"{\"spec\":[-]}", "-]"},
    {"{\"spec\":[1e400]}", "1e400"},
    {"{\"status\":{\"a\":nul}}", "nul"},
    {"{\"spec\":\"\\ud800\"}", "\"\\ud800"},
    {"{\"metadata\":{\"managedFields\":[{\"a\":tru}]}}", "tru"},
    {"{\"metadata\":{\"creationTimestamp\":tru}}", "tru"},
    {"{\"metadata\":{\"annotations\":{\"a\":\"\\z\"}}}", "\"\\z"},
    {"{\"metadata\":{\"finalizers\":[\"\\z\"]}}", "\"\\z"},
    {"{\"metadata\":{\"ownerReferences\":[{\"blockOwnerDeletion\":tru}]}}", "tru"},
};

static void test_json_validation_unread_subtrees_default(void **state)
{
    for (size_t i = 0; i < sizeof unread_malformed / sizeof unread_malformed[0]; i++) {
        char *s = expect_ok(unread_malformed[i].item, 0);
        if (!strstr(unread_malformed[i].item, "managedFields"))
            assert_string_equal(s, unread_malformed[i].item); /* stored as received */
        free(s);
    }
}

static void test_json_validation_strict_rejects(void **state)
{
    for (size_t i = 0; i < sizeof unread_malformed / sizeof unread_malformed[0]; i++)
        expect_bad(unread_malformed[i].item, KC_DECODE_STRICT, unread_malformed[i].needle, NULL);
}

/* Strict mode accepts valid JSON of every kind, and stores the same text as the default. */
static void test_json_validation_strict_accepts_valid(void **state)
{
    const char *item = "{\"metadata\":{\"name\":\"a\",\"annotations\":{\"x\":\"\\u00e9\\n\"},"
                       "\"creationTimestamp\":null,\"finalizers\":[\"f\"]},\"spec\":{\"a\":["
                       "123456789012345678901234567890,-0,1e-400,1E5,0.5,true,false,null,"
                       "\"\\ud83d\\ude00\",{},[],{\"k\":[{}]}]}}";
    char *a = expect_ok(item, 0), *b = expect_ok(item, KC_DECODE_STRICT);
    assert_string_equal(a, b);
    free(a);
    free(b);
    char pod[KC_GENPOD_MAX];
    kc_genpod_one(pod, sizeof pod, 3);
    a = expect_ok(pod, 0);
    b = expect_ok(pod, KC_DECODE_STRICT);
    assert_string_equal(a, b);
    free(a);
    free(b);
    /* nesting: 500 levels inside spec are fine, 600 are not */
    char deep[1400];
    for (size_t levels = 500; levels <= 600; levels += 100) {
        strcpy(deep, "{\"spec\":");
        memset(deep + 8, '[', levels);
        memset(deep + 8 + levels, ']', levels);
        strcpy(deep + 8 + 2 * levels, "}");
        for (int d = D_OBJ; d <= D_WATCH; d++) {
            struct result r = decode_as((enum dec)d, deep, KC_DECODE_STRICT);
            free(r.stored);
            assert_int_equal(r.code, levels == 500 ? 0 : KC_EPARSE);
            if (r.code && !strstr(r.msg, "deeper"))
                fail_msg("%s: %s", dec_name[d], r.msg);
        }
    }
}

/* Strict mode also covers the LIST and watch envelopes. */
static void test_json_validation_strict_envelopes(void **state)
{
    const char *list = "{\"kind\":\"PodList\",\"x\":[tru],\"items\":[]}";
    const char *list_meta = "{\"metadata\":{\"selfLink\":nul},\"items\":[]}";
    const char *const lists[] = {list, list_meta};
    for (size_t i = 0; i < 2; i++) {
        kc_decode_opts s = {.flags = KC_DECODE_STRICT, .max_object_size = 0};
        kc_error err = KC_ERROR_INIT;
        assert_int_equal(kc_list_decode(lists[i], strlen(lists[i]), NULL, NULL, NULL, NULL, NULL),
                         0);
        assert_int_equal(kc_list_decode(lists[i], strlen(lists[i]), &s, NULL, NULL, NULL, &err),
                         KC_EPARSE);
        assert_int_equal(err.offset, strstr(lists[i], "tru") ? strstr(lists[i], "tru") - lists[i]
                                                             : strstr(lists[i], "nul") - lists[i]);
        kc_error_clear(&err);
    }
    const char *const lines[] = {
        "{\"type\":\"ADDED\",\"x\":{\"a\":01},\"object\":{}}\n",
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"x\":tru}}\n",
    };
    for (size_t i = 0; i < 2; i++) {
        for (int strict = 0; strict < 2; strict++) {
            kc_decode_opts o = {.flags = strict ? KC_DECODE_STRICT : 0, .max_object_size = 0};
            kc_watch_decoder *w = NULL;
            assert_int_equal(kc_watch_decoder_new(&o, &w, NULL), 0);
            kc_error err = KC_ERROR_INIT;
            char *sink = NULL;
            int r =
                kc_watch_decoder_feed(w, lines[i], strlen(lines[i]), keep_modified, &sink, &err);
            assert_int_equal(r, strict ? KC_EPARSE : 0);
            if (strict)
                assert_int_equal(err.offset, strstr(lines[i], i ? "tru" : "01") - lines[i]);
            kc_error_clear(&err);
            kc_watch_decoder_free(w);
        }
    }
}

/* Issue 16 point 5 (fuzz_list's round-trip abort): a member the decoders read, given twice, made
 * the extracted metadata (from one copy) disagree with the stored text (carrying the other). */
static void test_json_validation_duplicate_members(void **state)
{
    static const struct {
        const char *item, *needle;
    } cases[] = {
        {"{\"metadata\":{\"name\":\"a\"},\"spec\":{},\"metadata\":{}}", "\"metadata\":{}"},
        {"{\"kind\":\"A\",\"kind\":\"B\"}", "\"kind\":\"B"},
        {"{\"apiVersion\":\"v1\",\"metadata\":{},\"apiVersion\":\"v2\"}", "\"apiVersion\":\"v2"},
        {"{\"metadata\":{\"name\":\"a\",\"name\":\"b\"}}", "\"name\":\"b"},
        {"{\"metadata\":{\"namespace\":\"a\",\"uid\":\"u\",\"namespace\":\"b\"}}",
         "\"namespace\":\"b"},
        {"{\"metadata\":{\"uid\":\"a\",\"uid\":\"b\"}}", "\"uid\":\"b"},
        {"{\"metadata\":{\"resourceVersion\":\"1\",\"resourceVersion\":\"2\"}}",
         "\"resourceVersion\":\"2"},
        {"{\"metadata\":{\"generation\":1,\"generation\":2}}", "\"generation\":2"},
        {"{\"metadata\":{\"labels\":{},\"labels\":{\"a\":\"b\"}}}", "\"labels\":{\"a"},
        {"{\"metadata\":{\"managedFields\":[],\"managedFields\":[1]}}", "\"managedFields\":[1"},
        {"{\"metadata\":{\"ownerReferences\":[{\"uid\":\"a\",\"uid\":\"b\"}]}}", "\"uid\":\"b"},
        {"{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\",\"a\":\"3\"}}}", "{\"metadata"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_bad(cases[i].item, 0, cases[i].needle, "duplicate");
    /* members the decoders do not read may repeat (JSON allows it; the text is kept as is) */
    free(expect_ok("{\"spec\":{},\"spec\":{},\"metadata\":{\"x\":1,\"x\":2}}", 0));
}

static void test_json_validation_duplicate_envelope_members(void **state)
{
    const char *const lists[] = {
        "{\"kind\":\"AList\",\"kind\":\"BList\",\"items\":[]}",
        "{\"metadata\":{\"resourceVersion\":\"1\",\"resourceVersion\":\"2\"},\"items\":[]}",
        "{\"kind\":\"PodList\",\"items\":[],\"items\":[{\"metadata\":{\"name\":\"x\"}}]}",
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        kc_error err = KC_ERROR_INIT;
        assert_int_equal(kc_list_decode(lists[i], strlen(lists[i]), NULL, NULL, NULL, NULL, &err),
                         KC_EPARSE);
        assert_non_null(strstr(err.message, "duplicate"));
        kc_error_clear(&err);
    }
    const char *const lines[] = {
        "{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{}}\n",
        "{\"type\":\"ADDED\",\"object\":{},\"object\":{\"metadata\":{\"name\":\"x\"}}}\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        kc_watch_decoder *w = NULL;
        assert_int_equal(kc_watch_decoder_new(NULL, &w, NULL), 0);
        kc_error err = KC_ERROR_INIT;
        char *sink = NULL;
        assert_int_equal(
            kc_watch_decoder_feed(w, lines[i], strlen(lines[i]), keep_modified, &sink, &err),
            KC_EPARSE);
        assert_non_null(strstr(err.message, "duplicate"));
        kc_error_clear(&err);
        kc_watch_decoder_free(w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_validation_joined_tokens_rejected),
        cmocka_unit_test(test_json_validation_pretty_text_minified),
        cmocka_unit_test(test_json_validation_minifier_matches_reference),
        cmocka_unit_test(test_json_validation_spaces_inside_strings),
        cmocka_unit_test(test_json_validation_offsets_in_pretty_text),
        cmocka_unit_test(test_json_validation_stage1_offsets),
        cmocka_unit_test(test_json_validation_truncated_offsets),
        cmocka_unit_test(test_json_validation_trailing_data),
        cmocka_unit_test(test_json_validation_unread_subtrees_default),
        cmocka_unit_test(test_json_validation_strict_rejects),
        cmocka_unit_test(test_json_validation_strict_accepts_valid),
        cmocka_unit_test(test_json_validation_strict_envelopes),
        cmocka_unit_test(test_json_validation_duplicate_members),
        cmocka_unit_test(test_json_validation_duplicate_envelope_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
