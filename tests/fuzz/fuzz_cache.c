/* trawl — libFuzzer target over the result cache's file (libcore/src/cache/).
 *
 * A cache file is trusted only when its checksums hold, so bytes that are
 * merely corrupt never reach the parser. This target makes them hold — the
 * sums of each block of directory entries and of records written into the
 * index in its mark (cache_test_seal, as a writer does), then a header with
 * the magic, format version, lengths and XXH3 of the index — around
 * the fuzzed body, so that every byte of the index, the directory entries
 * and the records is parsed as a writer's bug would have it, and then reads
 * all of it as runs do (cache_read_all: each entry by its number and found
 * again by its path through the marks, a block at a time from the file, as
 * the re-check with watchman finds them; the walks' directory entries read
 * whole, the records into a memo, the pass a run of an unchanged tree
 * makes).
 *
 * An input is two little-endian u16, the index's length and the directory
 * entries' (each cut to what follows), then the body: the index, the
 * directory entries and then the records. The seeds in corpus-cache/ are
 * files `trawl --cache` wrote, in that form (tests/fuzz/cache_seeds.py
 * writes them).
 *
 * Invariants, each checked with abort() so that libFuzzer reports it (the
 * sanitizers check the rest: no read outside the file's data, no leak):
 *  - a file whose header holds is trusted or refused with a reason; a
 *    refusal names one;
 *  - reading the same file twice gives the same answer;
 *  - no block of directory entries fails its sum (the harness sealed
 *    them: the writer's blocks and the reader's are the same bytes);
 *  - the results handed over are fewer than 64 per record byte.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cache/cache-testing.h"
#include "cache/cachefile.h"
#include "fuzz_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *file_path;

static void
violation(const char *what, const uint8_t *data, size_t size)
{
  fprintf(stderr, "fuzz_cache: invariant violated: %s\n", what);
  print_bytes("input", (const char *)data, size);
  abort();
}

static void
put_le(uint8_t *p, uint64_t v, int n)
{
  for (int i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 4)
    return 0;
  if (file_path == NULL) {
    const char *dir = g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir();
    file_path = g_strdup_printf("%s/trawl-fuzz-cache-%d", dir, (int)getpid());
  }
  const size_t body_len = size - 4;
  size_t index_len = (size_t)data[0] | (size_t)data[1] << 8;
  size_t dirs_len = (size_t)data[2] | (size_t)data[3] << 8;
  if (index_len > body_len)
    index_len = body_len;
  if (dirs_len > body_len - index_len)
    dirs_len = body_len - index_len;
  if (index_len == 0)
    return 0; /* an empty index is refused before anything is parsed */
  uint8_t *body = g_memdup2(data + 4, body_len);
  const size_t recs_at = index_len + dirs_len;
  cache_test_seal(body, index_len, body + index_len, dirs_len, body + recs_at, body_len - recs_at);

  uint8_t h[HEADER_SIZE] = {0};
  memcpy(h, CACHE_MAGIC, 8);
  put_le(h + 8, CACHE_FORMAT, 4);
  put_le(h + 16, body_len, 8);
  put_le(h + 24, XXH3_64bits(body, index_len), 8);
  put_le(h + 40, index_len, 8);
  put_le(h + 48, dirs_len, 8);
  FILE *f = fopen(file_path, "wb");
  if (f == NULL || fwrite(h, 1, sizeof h, f) != sizeof h ||
      fwrite(body, 1, body_len, f) != body_len || fclose(f) != 0) {
    perror(file_path);
    abort();
  }

  char *why = NULL;
  const long got = cache_read_all(file_path, &why);
  if (got == -1 && why == NULL)
    violation("a refused file without a reason", data, size);
  if (got == -4)
    violation("a sealed block of directory entries did not check out", data, size);
  g_free(why);
  why = NULL;
  if (cache_read_all(file_path, &why) != got)
    violation("the same file read twice gave two answers", data, size);
  g_free(why);
  if (got >= 0 && (size_t)got > 64 * (body_len - recs_at))
    violation("more results than the records can hold", data, size);
  unlink(file_path);
  g_free(body);
  return 0;
}
