/*
 * test_json_watch — the resumable watch stream decoder: chunking at every split point, byte at a
 * time, CRLF, blank lines, size limit and reset, ERROR (410) and BOOKMARK events.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../bench/genpod.h"

#include <kcache/decode.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct seen {
    int n;
    kc_watch_type types[16];
    char names[16][64];
    bool iee[16];
    int err_code[16], err_http[16];
    char err_reason[16][32];
    int stop_at; /* return KC_ECANCELED on this event number (1-based); 0 = never */
};

static int on_event(void *ud, const kc_watch_event *ev)
{
    struct seen *s = ud;
    if (s->n == 16)
        return KC_ENOMEM;
    int i = s->n++;
    s->types[i] = ev->type;
    s->iee[i] = ev->initial_events_end;
    s->names[i][0] = '\0';
    s->err_code[i] = s->err_http[i] = 0;
    s->err_reason[i][0] = '\0';
    if (ev->obj)
        snprintf(s->names[i], sizeof s->names[i], "%s", kc_obj_name(ev->obj));
    if (ev->error) {
        s->err_code[i] = ev->error->code;
        s->err_http[i] = ev->error->http_status;
        snprintf(s->err_reason[i], sizeof s->err_reason[i], "%s",
                 ev->error->reason ? ev->error->reason : "");
    }
    if (s->stop_at && s->n == s->stop_at)
        return KC_ECANCELED;
    return 0;
}

static const char STREAM[] =
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\","
    "\"managedFields\":[{\"m\":1}]}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"b c\"}}}\n"
    "{\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"d\"}},\"type\":\"DELETED\"}\n";

static void check_stream(const struct seen *s)
{
    assert_int_equal(s->n, 3);
    assert_int_equal(s->types[0], KC_WATCH_ADDED);
    assert_int_equal(s->types[1], KC_WATCH_MODIFIED);
    assert_int_equal(s->types[2], KC_WATCH_DELETED);
    assert_string_equal(s->names[0], "a");
    assert_string_equal(s->names[1], "b c");
    assert_string_equal(s->names[2], "d");
}

static void test_json_watch_every_split_point(void **state)
{
    size_t len = sizeof STREAM - 1;
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
    assert_non_null(d);
    for (size_t cut = 0; cut <= len; cut++) {
        struct seen s = {0};
        kc_error err = KC_ERROR_INIT;
        assert_int_equal(kc_watch_decoder_feed(d, STREAM, cut, on_event, &s, &err), 0);
        assert_int_equal(kc_watch_decoder_feed(d, STREAM + cut, len - cut, on_event, &s, &err), 0);
        assert_int_equal(kc_watch_decoder_finish(d, on_event, &s, &err), 0);
        check_stream(&s);
        kc_watch_decoder_reset(d);
    }
    kc_watch_decoder_free(d);
}

static void test_json_watch_byte_at_a_time(void **state)
{
    size_t len = sizeof STREAM - 1;
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
    struct seen s = {0};
    for (size_t i = 0; i < len; i++)
        assert_int_equal(kc_watch_decoder_feed(d, STREAM + i, 1, on_event, &s, NULL), 0);
    assert_int_equal(kc_watch_decoder_finish(d, on_event, &s, NULL), 0);
    check_stream(&s);
    kc_watch_decoder_free(d);
}

static void test_json_watch_genpod_stream_chunks(void **state)
{
    size_t len;
    char *w = kc_genpod_watch(12, "ADDED", &len);
    static const size_t chunks[] = {1, 7, 64, 100, 4096, 6100, 65536};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        kc_watch_decoder *d = NULL;
        assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
        struct seen s = {0};
        for (size_t off = 0; off < len; off += chunks[c]) {
            size_t k = len - off < chunks[c] ? len - off : chunks[c];
            assert_int_equal(kc_watch_decoder_feed(d, w + off, k, on_event, &s, NULL), 0);
        }
        assert_int_equal(kc_watch_decoder_finish(d, on_event, &s, NULL), 0);
        assert_int_equal(s.n, 12);
        assert_string_equal(s.names[11], "web-7d9f8c6b5-00011");
        kc_watch_decoder_free(d);
    }
    free(w);
}

static void test_json_watch_crlf_and_blank_lines(void **state)
{
    const char *in =
        "\r\n\n  \n{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"}}}\r\n"
        "\r\n\n{\"type\": \"DELETED\", \"object\": {\"metadata\": {\"name\": \"y\"}}}\r\n"
        "\n";
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
    for (size_t cut = 0; cut <= strlen(in); cut++) {
        struct seen s = {0};
        assert_int_equal(kc_watch_decoder_feed(d, in, cut, on_event, &s, NULL), 0);
        assert_int_equal(kc_watch_decoder_feed(d, in + cut, strlen(in) - cut, on_event, &s, NULL),
                         0);
        assert_int_equal(kc_watch_decoder_finish(d, on_event, &s, NULL), 0);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.names[0], "x");
        assert_string_equal(s.names[1], "y");
        kc_watch_decoder_reset(d);
    }
    kc_watch_decoder_free(d);
}

static void test_json_watch_finish_without_newline(void **state)
{
    const char *in = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"last\"}}}";
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
    struct seen s = {0};
    assert_int_equal(kc_watch_decoder_feed(d, in, strlen(in), on_event, &s, NULL), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(kc_watch_decoder_finish(d, on_event, &s, NULL), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.names[0], "last");
    /* a partial event at the end is an error */
    kc_watch_decoder_reset(d);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_watch_decoder_feed(d, in, 20, on_event, &s, &err), 0);
    assert_int_equal(kc_watch_decoder_finish(d, on_event, &s, &err), KC_EPARSE);
    kc_error_clear(&err);
    kc_watch_decoder_free(d);
}

static void test_json_watch_oversize_then_reset(void **state)
{
    kc_decode_opts o = {.flags = 0, .max_object_size = 100};
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(&o, &d, NULL), 0);
    char big[400];
    int n = snprintf(big, sizeof big,
                     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"%0200d\"}}}\n", 1);
    struct seen s = {0};
    kc_error err = KC_ERROR_INIT;
    /* whole line in one chunk */
    assert_int_equal(kc_watch_decoder_feed(d, big, (size_t)n, on_event, &s, &err), KC_ETOOLARGE);
    assert_int_equal(err.code, KC_ETOOLARGE);
    /* sticky until reset */
    assert_int_equal(kc_watch_decoder_feed(d, "\n", 1, on_event, &s, &err), KC_ETOOLARGE);
    kc_watch_decoder_reset(d);
    const char *small = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"ok\"}}}\n";
    assert_int_equal(kc_watch_decoder_feed(d, small, strlen(small), on_event, &s, &err), 0);
    assert_int_equal(s.n, 1);
    /* line growing across small chunks */
    kc_watch_decoder_reset(d);
    int r = 0;
    for (int i = 0; i < n && r == 0; i += 10)
        r = kc_watch_decoder_feed(d, big + i, (size_t)(n - i < 10 ? n - i : 10), on_event, &s,
                                  &err);
    assert_int_equal(r, KC_ETOOLARGE);
    kc_watch_decoder_reset(d);
    assert_int_equal(kc_watch_decoder_feed(d, small, strlen(small), on_event, &s, &err), 0);
    assert_int_equal(s.n, 2);
    kc_error_clear(&err);
    kc_watch_decoder_free(d);
}

static void test_json_watch_error_410(void **state)
{
    const char *in =
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
        "\"status\":\"Failure\",\"message\":\"too old resource version: 1 "
        "(2)\",\"reason\":\"Expired\","
        "\"code\":410}}\n";
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
    struct seen s = {0};
    assert_int_equal(kc_watch_decoder_feed(d, in, strlen(in), on_event, &s, NULL), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.types[0], KC_WATCH_ERROR);
    assert_int_equal(s.err_code[0], KC_EGONE);
    assert_int_equal(s.err_http[0], 410);
    assert_string_equal(s.err_reason[0], "Expired");
    assert_string_equal(s.names[0], ""); /* no object for ERROR */
    kc_watch_decoder_free(d);
}

static void test_json_watch_bookmark_initial_events_end(void **state)
{
    const char *in =
        "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{"
        "\"resourceVersion\":\"123\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}\n"
        "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":"
        "\"124\"}}}\n"
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"annotations\":{\"k8s.io/"
        "initial-events-end\":"
        "\"true\"}}}}\n";
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
    struct seen s = {0};
    assert_int_equal(kc_watch_decoder_feed(d, in, strlen(in), on_event, &s, NULL), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.types[0], KC_WATCH_BOOKMARK);
    assert_true(s.iee[0]);
    assert_int_equal(s.types[1], KC_WATCH_BOOKMARK);
    assert_false(s.iee[1]);
    assert_false(s.iee[2]); /* only BOOKMARK events carry it */
    kc_watch_decoder_free(d);
}

static void test_json_watch_malformed_events(void **state)
{
    static const char *bad[] = {
        "{\"type\":\"EXPLODED\",\"object\":{}}\n",
        "{\"type\":\"ADDED\"}\n",
        "{\"object\":{}}\n",
        "{\"type\":\"ADDED\",\"object\":[]}\n",
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":1}}}\n",
        "[1]\n",
        "{\"type\":\"ADDED\",\"object\":{}\n",
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Pod\"}}\n",
        "{\"type\":\"ADDED\",\"object\":{\"a\":\"\xff\"}}\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kc_watch_decoder *d = NULL;
        assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
        struct seen s = {0};
        kc_error err = KC_ERROR_INIT;
        int r = kc_watch_decoder_feed(d, bad[i], strlen(bad[i]), on_event, &s, &err);
        if (r != KC_EPARSE)
            fail_msg("case %zu: %s", i, kc_errno_name(r));
        assert_int_equal(s.n, 0);
        assert_non_null(err.message);
        /* sticky */
        assert_int_equal(kc_watch_decoder_feed(d, "\n", 1, on_event, &s, NULL), KC_EPARSE);
        kc_watch_decoder_reset(d);
        assert_int_equal(kc_watch_decoder_feed(d, STREAM, sizeof STREAM - 1, on_event, &s, NULL),
                         0);
        assert_int_equal(s.n, 3);
        kc_error_clear(&err);
        kc_watch_decoder_free(d);
    }
}

static void test_json_watch_error_offset(void **state)
{
    const char *in =
        "{\"type\":\"ADDED\",\"object\":{}}\n{\"type\":\"ADDED\",\"object\":{\"metadata\":5}}\n";
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
    struct seen s = {0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_watch_decoder_feed(d, in, 10, on_event, &s, &err), 0);
    assert_int_equal(kc_watch_decoder_feed(d, in + 10, strlen(in) - 10, on_event, &s, &err),
                     KC_EPARSE);
    assert_int_equal(err.offset, (int64_t)(strchr(in, '5') - in));
    kc_error_clear(&err);
    kc_watch_decoder_free(d);
}

static void test_json_watch_callback_stop_resumes(void **state)
{
    size_t len = sizeof STREAM - 1;
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
    struct seen s = {0};
    s.stop_at = 1;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_watch_decoder_feed(d, STREAM, len, on_event, &s, &err), KC_ECANCELED);
    assert_int_equal(s.n, 1);
    kc_error_clear(&err);
    s.stop_at = 0;
    /* the rest of the chunk was kept: feeding nothing more delivers it */
    assert_int_equal(kc_watch_decoder_feed(d, "", 0, on_event, &s, NULL), 0);
    assert_int_equal(kc_watch_decoder_finish(d, on_event, &s, NULL), 0);
    check_stream(&s);
    kc_watch_decoder_free(d);
}

/* Issue 16 point 10: a chunk of zero bytes, buf NULL or not, adds nothing. With a partial line
 * buffered it used to reach memchr/memcpy with a NULL source (undefined; UBSan stops there). */
static void test_json_watch_feed_empty_chunk(void **state)
{
    size_t len = sizeof STREAM - 1, half = 20;
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
    struct seen s = {0};
    assert_int_equal(kc_watch_decoder_feed(d, NULL, 0, on_event, &s, NULL), 0);
    assert_int_equal(kc_watch_decoder_feed(d, STREAM, half, on_event, &s, NULL), 0);
    assert_int_equal(kc_watch_decoder_feed(d, NULL, 0, on_event, &s, NULL), 0);
    assert_int_equal(kc_watch_decoder_feed(d, "", 0, on_event, &s, NULL), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(kc_watch_decoder_feed(d, STREAM + half, len - half, on_event, &s, NULL), 0);
    check_stream(&s);

    /* After a callback stop, an empty chunk delivers the held-back lines (as any feed does). */
    kc_watch_decoder_reset(d);
    struct seen t = {0};
    t.stop_at = 1;
    assert_int_equal(kc_watch_decoder_feed(d, STREAM, len, on_event, &t, NULL), KC_ECANCELED);
    t.stop_at = 0;
    assert_int_equal(kc_watch_decoder_feed(d, NULL, 0, on_event, &t, NULL), 0);
    check_stream(&t);

    /* Stream offsets do not move: an error after empty chunks names the right byte. */
    kc_watch_decoder_reset(d);
    const char *bad = "{\"type\":\"ADDED\",\"object\":{\"metadata\":5}}\n";
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_watch_decoder_feed(d, bad, 10, on_event, &t, &err), 0);
    assert_int_equal(kc_watch_decoder_feed(d, NULL, 0, on_event, &t, &err), 0);
    assert_int_equal(kc_watch_decoder_feed(d, bad + 10, strlen(bad) - 10, on_event, &t, &err),
                     KC_EPARSE);
    assert_int_equal(err.offset, (int64_t)(strchr(bad, '5') - bad));
    /* a failed decoder stays failed, empty chunk or not */
    assert_int_equal(kc_watch_decoder_feed(d, NULL, 0, on_event, &t, NULL), KC_EPARSE);
    kc_error_clear(&err);
    kc_watch_decoder_free(d);
}

static void test_json_watch_type_names(void **state)
{
    assert_string_equal(kc_watch_type_name(KC_WATCH_ADDED), "ADDED");
    assert_string_equal(kc_watch_type_name(KC_WATCH_MODIFIED), "MODIFIED");
    assert_string_equal(kc_watch_type_name(KC_WATCH_DELETED), "DELETED");
    assert_string_equal(kc_watch_type_name(KC_WATCH_BOOKMARK), "BOOKMARK");
    assert_string_equal(kc_watch_type_name(KC_WATCH_ERROR), "ERROR");
    assert_string_equal(kc_watch_type_name((kc_watch_type)99), "UNKNOWN");
}

static void test_json_watch_null_arguments(void **state)
{
    kc_watch_decoder *d = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &d, NULL), 0);
    assert_int_equal(kc_watch_decoder_feed(NULL, "x", 1, on_event, NULL, NULL), KC_EINVAL);
    assert_int_equal(kc_watch_decoder_feed(d, NULL, 1, on_event, NULL, NULL), KC_EINVAL);
    assert_int_equal(kc_watch_decoder_feed(d, "x", 1, NULL, NULL, NULL), KC_EINVAL);
    assert_int_equal(kc_watch_decoder_finish(d, NULL, NULL, NULL), KC_EINVAL);
    kc_watch_decoder_free(d);
    kc_watch_decoder_free(NULL);
    kc_watch_decoder_reset(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_watch_every_split_point),
        cmocka_unit_test(test_json_watch_byte_at_a_time),
        cmocka_unit_test(test_json_watch_genpod_stream_chunks),
        cmocka_unit_test(test_json_watch_crlf_and_blank_lines),
        cmocka_unit_test(test_json_watch_finish_without_newline),
        cmocka_unit_test(test_json_watch_oversize_then_reset),
        cmocka_unit_test(test_json_watch_error_410),
        cmocka_unit_test(test_json_watch_bookmark_initial_events_end),
        cmocka_unit_test(test_json_watch_malformed_events),
        cmocka_unit_test(test_json_watch_error_offset),
        cmocka_unit_test(test_json_watch_callback_stop_resumes),
        cmocka_unit_test(test_json_watch_feed_empty_chunk),
        cmocka_unit_test(test_json_watch_type_names),
        cmocka_unit_test(test_json_watch_null_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
