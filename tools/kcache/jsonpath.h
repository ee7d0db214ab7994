/* jsonpath.h — kubectl's JSONPath templates for `kcache get -o jsonpath=…`, `-o custom-columns=…`
 * and `--sort-by` (parser in jsonpath.c, evaluation in jsonpath_eval.c, the syntax tree in
 * jsonpath_ast.h). Documents are jansson trees (how the CLI already holds objects, get_print.c).
 * Internal to the CLI; also linked by tests/fuzz/fuzz_jsonpath.c. */
#ifndef KC_CLI_JSONPATH_H
#define KC_CLI_JSONPATH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Bounds of a template: its length in bytes, and the nesting of {range}, filters and brackets;
 * and of an evaluation: the values one step may yield (..*..*.. multiplies them). */
#define JP_MAX_LEN     4096
#define JP_MAX_DEPTH   16
#define JP_MAX_RESULTS (1u << 20)

typedef struct jp_tmpl jp_tmpl;

/*
 * Parse src. A template (relaxed false) is text with {actions}: {.a.b}, {.items[*].x},
 * {range .items[*]}…{end}, {"\n"}, {'\t'}, indexes and slices [0] [-1] [1:3] [::2], wildcards
 * [*] and .*, recursive ..name, filters [?(@.a=="x")] (==, !=, <, >, <=, >=, or @.a alone:
 * exists), bracketed names ['a.b']. A relaxed expression (custom-columns, --sort-by) is one path
 * with or without its braces and leading dot, as kubectl's RelaxedJSONPathExpression accepts:
 * ".metadata.name", "metadata.name", "{.metadata.name}". 0 and *ret (jp_free), or -1 with
 * "jsonpath: WHAT at offset N" in err.
 */
int jp_parse(const char *src, bool relaxed, jp_tmpl **ret, char *err, size_t errsz);
/* Accepts NULL. */
void jp_free(jp_tmpl *t);

/*
 * Print the template against root as kubectl does: text as is, each action's results separated
 * by one space, strings and numbers as Go's fmt prints them, objects and arrays as compact JSON
 * (keys sorted); a missing field prints nothing. list: root is a List kubectl built, whose
 * integral reals it prints as integers (1000000.0 → 1000000; alone it prints 1e+06). 0, or -1
 * (out of memory, an index out of bounds, too many values) with the reason in err.
 */
int jp_print(const jp_tmpl *t, json_t *root, bool list, FILE *out, char *err, size_t errsz);

/* The values of a relaxed expression in root: a new array of borrowed values (caller frees the
 * array; NULL when there are none) and their count in *n. -1 on out of memory. */
int jp_find(const jp_tmpl *t, json_t *root, json_t ***vals, size_t *n);

/* v as Go's fmt.Sprint prints a value decoded from JSON (custom-columns cells): strings as is,
 * integers, floats (%v: 0.25, 1e+06), true, <nil>, map[k:v …] with sorted keys, [a b]; list as
 * jp_print's. New malloc'd; NULL on out of memory. */
char *jp_sprint(json_t *v, bool list);

#endif
