/* trawl — `--bump STAMP`: see stamp.h. */
#include "stamp.h"
#include "files.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

bool
stamp_bump(const char *path, const char *digest)
{
  char *text = g_strconcat(digest, "\n", NULL);
  char *was = NULL;
  size_t was_len = 0;
  bool ok = g_file_get_contents(path, &was, &was_len, NULL) && was_len == strlen(text) &&
            memcmp(was, text, was_len) == 0;
  g_free(was);
  GError *error = NULL;
  if (!ok && !(ok = file_write(path, text, strlen(text), &error))) {
    fprintf(stderr, "trawl: --bump %s\n", error->message);
    g_error_free(error);
    if (unlink(path) != 0 && errno != ENOENT)
      fprintf(stderr, "trawl: --bump: removing %s: %s\n", path, g_strerror(errno));
  }
  g_free(text);
  return ok;
}
