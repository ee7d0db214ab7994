/*
 * base64.c — kc_base64_encode / kc_base64_decode (RFC 4648, standard alphabet, padded): the form
 * of a Secret's data values.
 *
 * The conversion is OpenSSL's (EVP_EncodeBlock / EVP_DecodeBlock, in chunks because they take int
 * lengths). EVP_DecodeBlock is lenient — it skips surrounding whitespace and does not treat
 * padding — so the text is validated first, strictly, in one pass: a length that is a multiple of
 * 4, only alphabet characters, '=' only as the last one or two characters; any fault names its
 * byte offset. Like Go's base64.StdEncoding (what the API server uses), non-zero bits under the
 * padding are accepted. The last quartet is decoded from a copy with its padding replaced by 'A'
 * (zero bits), and the output cut by the padding count.
 */
#include "core/internal.h"
#include "kcache/doc.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

/* Chunk sizes for OpenSSL's int-length calls: whole groups (3 bytes in, 4 characters out). */
#define ENC_CHUNK ((size_t)3 << 22)
#define DEC_CHUNK ((size_t)4 << 22)

int kc_base64_encode(const void *data, size_t len, char **ret, size_t *ret_len, kc_error *err)
{
    if (!ret || (!data && len > 0))
        return kc_error_set(err, KC_EINVAL, "kc_base64_encode: NULL argument");
    if (len > SIZE_MAX / 4 * 3 - 3)
        return kc_error_set(err, KC_ETOOLARGE, "kc_base64_encode: %zu bytes is too long", len);
    size_t out_len = (len + 2) / 3 * 4;
    char *out = malloc(out_len + 1);
    if (!out)
        return kc_error_set(err, KC_ENOMEM, "kc_base64_encode: out of memory (%zu bytes)", out_len);
    const unsigned char *in = data;
    size_t w = 0;
    for (size_t r = 0; r < len; r += ENC_CHUNK) {
        size_t n = len - r < ENC_CHUNK ? len - r : ENC_CHUNK;
        w += (size_t)EVP_EncodeBlock((unsigned char *)out + w, in + r, (int)n);
    }
    out[w] = '\0';
    *ret = out;
    if (ret_len)
        *ret_len = w;
    return 0;
}

static bool in_alphabet(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

/* 0..2 padding characters, or an error naming the first bad byte (characters are checked before
 * the length, so a stray newline is reported where it is). */
static int validate(const char *text, size_t len, size_t *ret_pad, kc_error *err)
{
    size_t pad = 0;
    while (pad < len && pad < 2 && text[len - 1 - pad] == '=')
        pad++;
    for (size_t i = 0; i < len - pad; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '=')
            return kc_error_set(err, KC_EINVAL,
                                "kc_base64_decode: padding '=' at byte offset %zu "
                                "before the end",
                                i);
        if (!in_alphabet(c))
            return kc_error_set(err, KC_EINVAL,
                                "kc_base64_decode: byte 0x%02x at byte offset %zu "
                                "is not in the base64 alphabet",
                                c, i);
    }
    if (len % 4 != 0)
        return kc_error_set(err, KC_EINVAL,
                            "kc_base64_decode: length %zu is not a multiple of 4 "
                            "(text ends early at byte offset %zu)",
                            len, len);
    *ret_pad = pad;
    return 0;
}

int kc_base64_decode(const char *text, size_t len, unsigned char **ret, size_t *ret_len,
                     kc_error *err)
{
    if (!ret || !ret_len || (!text && len > 0))
        return kc_error_set(err, KC_EINVAL, "kc_base64_decode: NULL argument");
    size_t pad = 0;
    int rc = validate(text, len, &pad, err);
    if (rc)
        return rc;
    size_t out_len = len / 4 * 3 - pad;
    unsigned char *out = malloc(len / 4 * 3 + 1);
    if (!out)
        return kc_error_set(err, KC_ENOMEM, "kc_base64_decode: out of memory (%zu bytes)", out_len);
    size_t body = len >= 4 ? len - 4 : 0; /* all quartets but the last */
    size_t w = 0;
    for (size_t r = 0; r < body; r += DEC_CHUNK) {
        size_t n = body - r < DEC_CHUNK ? body - r : DEC_CHUNK;
        int k = EVP_DecodeBlock(out + w, (const unsigned char *)text + r, (int)n);
        if (k < 0) { /* validated above: cannot happen */
            free(out);
            return kc_error_set(err, KC_EINVAL, "kc_base64_decode: invalid text near byte %zu", r);
        }
        w += (size_t)k;
    }
    if (len >= 4) {
        unsigned char last[4], tmp[4];
        memcpy(last, text + body, 4);
        for (size_t i = 4 - pad; i < 4; i++)
            last[i] = 'A';
        if (EVP_DecodeBlock(tmp, last, 4) != 3) {
            free(out);
            return kc_error_set(err, KC_EINVAL, "kc_base64_decode: invalid text at byte %zu", body);
        }
        memcpy(out + w, tmp, 3 - pad);
    }
    out[out_len] = '\0';
    *ret = out;
    *ret_len = out_len;
    return 0;
}
