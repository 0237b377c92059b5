/* trawl — the files the command writes beside a build (files.h). */
#include "files.h"

bool
file_write(const char *path, const char *text, size_t len, GError **error)
{
  /* g_file_set_contents() would create it 0666 less the umask: writable
   * by anyone under umask 0. */
  return g_file_set_contents_full(path, text, (gssize)len,
                                  G_FILE_SET_CONTENTS_CONSISTENT |
                                      G_FILE_SET_CONTENTS_ONLY_EXISTING,
                                  FILE_MODE, error);
}
