/* trawl — what several commands read from their arguments the same way
 * (options.h). */
#include <stdio.h>
#include <string.h>

#include "options.h"

bool
cli_dialect_from_name(const char *name, TrawlDialect *out)
{
  static const struct {
    const char *name;
    TrawlDialect dialect;
  } table[] = {
    {"trawl", TRAWL_DIALECT_TRAWL},
    {"git", TRAWL_DIALECT_GIT},
    {"cmake", TRAWL_DIALECT_CMAKE},
    {"bazel", TRAWL_DIALECT_BAZEL},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
    if (strcmp(name, table[i].name) == 0) {
      *out = table[i].dialect;
      return true;
    }
  }
  return false;
}

bool
cli_parse_dialect(const char *name, TrawlDialect *out)
{
  if (cli_dialect_from_name(name, out))
    return true;
  fprintf(stderr, "trawl: unknown dialect '%s' (expected trawl, git, cmake or bazel)\n",
          name);
  return false;
}

unsigned
cli_entry_type(const char *name, size_t len)
{
  static const struct {
    const char *name;
    unsigned type;
  } table[] = {
    {"f", TRAWL_ENTRY_FILE},    {"file", TRAWL_ENTRY_FILE},
    {"d", TRAWL_ENTRY_DIR},     {"dir", TRAWL_ENTRY_DIR},
    {"directory", TRAWL_ENTRY_DIR},
    {"l", TRAWL_ENTRY_SYMLINK}, {"symlink", TRAWL_ENTRY_SYMLINK},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(table); i++)
    if (strlen(table[i].name) == len && memcmp(name, table[i].name, len) == 0)
      return table[i].type;
  return 0;
}

char **
cli_split_attached(int *argc, char **argv, const char *short_with_value,
                   const char *const *long_with_value, GPtrArray *owned)
{
  GPtrArray *out = g_ptr_array_new();
  int i = 0;
  if (*argc > 0)
    g_ptr_array_add(out, argv[i++]);
  while (i < *argc) {
    char *arg = argv[i++];
    g_ptr_array_add(out, arg);
    if (strcmp(arg, "--") == 0)
      break;
    if (arg[0] != '-' || arg[1] == '\0')
      continue;
    if (arg[1] == '-') {
      for (const char *const *l = long_with_value; l && *l; l++)
        if (strcmp(arg, *l) == 0 && i < *argc)
          g_ptr_array_add(out, argv[i++]);
      continue;
    }
    for (char *c = arg + 1; *c; c++) {
      if (strchr(short_with_value, *c) == NULL)
        continue;
      if (c[1] == '\0') {
        if (i < *argc)
          g_ptr_array_add(out, argv[i++]);
      } else {
        /* "-jN": the option part, then the value. */
        char *option = g_strndup(arg, (gsize)(c + 1 - arg));
        g_ptr_array_add(owned, option);
        g_ptr_array_index(out, out->len - 1) = option;
        g_ptr_array_add(out, c + 1);
      }
      break;
    }
  }
  while (i < *argc)
    g_ptr_array_add(out, argv[i++]);
  *argc = (int)out->len;
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
}
