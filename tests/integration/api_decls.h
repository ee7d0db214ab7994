/*
 * api_decls.h — the names of the public functions, read from the headers: every function declared
 * KC_API in every include/kcache/ header (the identifier before its '(', or the parenthesised name
 * of a function behind a same-named macro, docs/abi.md). For test_api_null, which checks each has a
 * NULL check. Header-only (static functions; cmocka included before it).
 */
#ifndef KC_TEST_API_DECLS_H
#define KC_TEST_API_DECLS_H

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names of the functions declared KC_API in text: the identifier before the first '(' after
 * each "KC_API", or for a function declared with a parenthesised name ("KC_API int (kc_x)(…)",
 * the real function behind a same-named macro; docs/abi.md) the identifier inside those
 * parentheses. Appends to *names (space-separated, with a leading space). */
static void declared(const char *text, char **names, size_t *len)
{
    for (const char *p = strstr(text, "KC_API "); p; p = strstr(p + 1, "KC_API ")) {
        const char *bol = p;
        while (bol > text && bol[-1] != '\n')
            bol--;
        if (*bol == '#') /* "#define KC_API …" */
            continue;
        const char *paren = strchr(p, '(');
        if (!paren)
            break;
        const char *id = paren + 1, *close = id;
        while (isalnum((unsigned char)*close) || *close == '_')
            close++;
        if (close > id && close[0] == ')' && close[1] == '(')
            paren = close; /* "(kc_x)(": the name ends at the ')' */
        const char *end = paren;
        while (end > p && end[-1] == ' ')
            end--;
        const char *start = end;
        while (start > p && (isalnum((unsigned char)start[-1]) || start[-1] == '_'))
            start--;
        size_t n = (size_t)(end - start);
        *names = realloc(*names, *len + n + 2);
        (*names)[(*len)++] = ' ';
        memcpy(*names + *len, start, n);
        *len += n;
        (*names)[*len] = '\0';
    }
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return buf;
}

static char *all_declared(void)
{
    const char *dir = KC_SOURCE_DIR "/include/kcache";
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names = NULL;
    size_t len = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 3 || strcmp(de->d_name + n - 2, ".h") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        char *text = read_file(path);
        declared(text, &names, &len);
        free(text);
    }
    closedir(d);
    assert_non_null(names);
    names = realloc(names, len + 2);
    memcpy(names + len, " ", 2);
    return names;
}

#endif
