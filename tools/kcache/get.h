/* get.h — the printers behind `kcache get` (cmd_get.c): documents (get_print.c, YAML in
 * get_yaml.c) and the server's Table (get_table.c). Internal to the CLI. */
#ifndef KC_CLI_GET_H
#define KC_CLI_GET_H

#include "kcache/client.h"

#include <jansson.h>
#include <stdio.h>

typedef enum get_fmt { GET_TABLE, GET_WIDE, GET_NAME, GET_JSON, GET_YAML } get_fmt;

/* ---- documents: -o json | yaml | name (get_print.c) ------------------------------------------ */

typedef struct get_doc get_doc;

/* New printer writing to out. single: the one object is printed alone; otherwise every object
 * goes into one List document (kubectl's {"apiVersion":"v1","items":[…],"kind":"List",
 * "metadata":{"resourceVersion":""}}), printed even when empty. NULL on out of memory. */
get_doc *get_doc_new(FILE *out, get_fmt fmt, bool single);
/* Print obj of resource ri. 0, or -1 when obj cannot be converted (the reason is on stderr,
 * naming the object; the output stays well-formed). */
int get_doc_add(get_doc *d, const kc_obj *obj, const kc_resource_info *ri);
/* Close the document and free d. -1 when writing failed. Accepts NULL. */
int get_doc_finish(get_doc *d);

/* "kind.group/name" as kubectl -o name prints it ("pod/x", "deployment.apps/x") into buf. */
void get_kind_name(char *buf, size_t size, const kc_resource_info *ri, const char *name);

/* Go's encoding/json text of a double (shortest round trip; exponent below 1e-6 and from 1e21),
 * into buf (at least 32 bytes). */
void get_format_real(char *buf, size_t size, double v);

/* The keys of obj sorted bytewise (as Go sorts map keys): new malloc'd array of borrowed keys
 * (caller frees the array), *n their count; NULL when obj is empty or out of memory. */
const char **get_sorted_keys(json_t *obj, size_t *n);

/* ---- YAML through libyaml (get_yaml.c) ------------------------------------------------------- */

typedef struct get_yaml get_yaml;

/* New emitter writing to out; the stream is started. NULL on out of memory. */
get_yaml *get_yaml_new(FILE *out);
/* Events: a document, a block mapping or sequence (start or end), a string scalar, or a whole
 * JSON value. 0, or -1 once the emitter failed (later calls fail too). */
int get_yaml_doc(get_yaml *y, bool start);
int get_yaml_map(get_yaml *y, bool start);
int get_yaml_seq(get_yaml *y, bool start);
int get_yaml_str(get_yaml *y, const char *s);
int get_yaml_value(get_yaml *y, json_t *v);
/* End the stream (unless failed) and free y. -1 when anything failed. Accepts NULL. */
int get_yaml_free(get_yaml *y);

/* ---- the server's Table (get_table.c) ------------------------------------------------------- */

typedef struct get_table get_table;

/* New table for resource ri: wide shows priority > 0 columns; show_ns adds NAMESPACE first.
 * NULL on out of memory. */
get_table *get_table_new(const kc_resource_info *ri, bool wide, bool show_ns);
/* Append the rows of one object (name) or of the whole collection (name NULL; every page of
 * opts->limit). Errors as kc_client_get_table, or KC_EPARSE for a body that is neither a Table
 * nor an object or list. */
int get_table_fetch(get_table *t, kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                    const kc_list_opts *opts, kc_error *err);
size_t get_table_rows(const get_table *t);
/* Print header and rows aligned as kubectl's tabwriter does (3 spaces of padding, minimum width
 * 6, the last column unpadded); with_kind prefixes names with "kind.group/". */
void get_table_print(const get_table *t, FILE *out, bool with_kind);
/* Accepts NULL. */
void get_table_free(get_table *t);

#endif
