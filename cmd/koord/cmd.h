/* Subcommands of the koord binary: flags and wiring only; the logic lives in src/. */
#ifndef KOORD_CMD_H
#define KOORD_CMD_H

int cmd_validate(int argc, char **argv);
int cmd_slo(int argc, char **argv);
int cmd_crds(int argc, char **argv);
int cmd_apiserver(int argc, char **argv);
int cmd_manager(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Shared by the subcommands: reads FILE ("-" = stdin) as a YAML/JSON stream. 0, or prints
 * "koord: <path>[:line:col]: <why>" and returns a negative errno. */
struct cJSON;
int cmd_read_docs(const char *path, struct cJSON ***ret_docs, size_t *ret_n);

/* Prints one document as YAML ("yaml") or indented JSON ("json") to stdout. */
int cmd_print_doc(const struct cJSON *doc, const char *format);

#endif
