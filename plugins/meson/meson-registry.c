/* trawl meson — the registry: which caches the current configure run used
 * (meson-plugin.h). `trawl meson` adds each cache it uses; the postconf
 * step reads them to wire the re-check. Its path, its header and the id of
 * a configure run are made here alone.
 *
 * BUILD_ROOT/meson-private/trawl/caches: the line MESON_TRAWL_REGISTRY_HEADER
 * and the run's id, then one absolute cache path a line. A registry of
 * another run is the past: the first `trawl meson` of a run starts it
 * afresh, and the postconf step of a run that found nothing sees none.
 */
#define _GNU_SOURCE /* getppid */
#include <string.h>
#include <unistd.h>

#include "../cli/files.h"
#include "meson-plugin.h"

#define MESON_TRAWL_REGISTRY MESON_TRAWL_DIR "/caches"

/* The first line of a registry, before the configure run's id. */
#define MESON_TRAWL_REGISTRY_HEADER "trawl meson caches of configure run "

char *
meson_configure_id(void)
{
  const long parent = (long)getppid();
  char *path = g_strdup_printf("/proc/%ld/stat", parent);
  char *text = NULL;
  char *start = NULL;
  if (g_file_get_contents(path, &text, NULL, NULL)) {
    /* Field 22, the start time; counting resumes after the name's ')'
     * (field 2, which may hold spaces) with field 3. */
    const char *c = strrchr(text, ')');
    for (int field = 2; c && field < 22; field++)
      c = strchr(c + 1, ' ');
    if (c)
      start = g_strndup(c + 1, strcspn(c + 1, " "));
  }
  char *id = g_strdup_printf("%ld-%s", parent, start ? start : "0");
  g_free(start);
  g_free(text);
  g_free(path);
  return id;
}

bool
meson_registry_add(const char *build_root, const char *base, const char *cache, GError **error)
{
  char *path = g_build_filename(build_root, MESON_TRAWL_REGISTRY, NULL);
  char *id = meson_configure_id();
  char *header = g_strconcat(MESON_TRAWL_REGISTRY_HEADER, id, "\n", NULL);
  char *absolute = g_path_is_absolute(cache) ? g_strdup(cache)
                                             : g_build_filename(base, cache, NULL);
  char *old = NULL;
  GString *text = g_string_new(header);
  if (g_file_get_contents(path, &old, NULL, NULL) && g_str_has_prefix(old, header))
    g_string_assign(text, old);
  char *line = g_strconcat("\n", absolute, "\n", NULL);
  bool ok = true;
  /* Once per cache: the same call twice in one meson.build shares it. */
  if (strstr(text->str + strlen(header) - 1, line) == NULL) {
    g_string_append(text, absolute);
    g_string_append_c(text, '\n');
    ok = file_write(path, text->str, text->len, error);
  }
  g_free(line);
  g_string_free(text, TRUE);
  g_free(old);
  g_free(absolute);
  g_free(header);
  g_free(id);
  g_free(path);
  return ok;
}

GPtrArray *
meson_registry_read(const char *build_root)
{
  char *path = g_build_filename(build_root, MESON_TRAWL_REGISTRY, NULL);
  char *id = meson_configure_id();
  char *header = g_strconcat(MESON_TRAWL_REGISTRY_HEADER, id, NULL);
  char *text = NULL;
  GPtrArray *caches = NULL;
  if (g_file_get_contents(path, &text, NULL, NULL)) {
    char **lines = g_strsplit(text, "\n", -1);
    if (lines[0] && strcmp(lines[0], header) == 0) {
      caches = g_ptr_array_new_with_free_func(g_free);
      size_t n = strlen(build_root);
      for (char **l = lines + 1; *l; l++) {
        if (**l == '\0')
          continue;
        bool below = strncmp(*l, build_root, n) == 0 && (*l)[n] == '/';
        g_ptr_array_add(caches, g_strdup(below ? *l + n + 1 : *l));
      }
    }
    g_strfreev(lines);
  }
  g_free(text);
  g_free(header);
  g_free(id);
  g_free(path);
  return caches;
}
