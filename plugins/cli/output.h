/* trawl — how the walk command prints paths: lines, NUL-terminated or JSON.
 *
 * An output owns a buffer of OUTPUT_BUFFER_SIZE bytes and writes it to a file
 * descriptor with write(2) when it fills, so a million paths cost a few
 * hundred system calls. Every format is unambiguous for any file name
 * (docs/cli.md states the rules; the code below implements exactly those):
 *
 *   lines  one path per line; a path holding a control byte (< 0x20, 0x7f),
 *          '"' or '\' is written as a C string in double quotes, as git
 *          quotes paths (core.quotePath=false): \a \b \t \n \v \f \r \" \\
 *          and \ooo (three octal digits) for the other control bytes.
 *          Bytes >= 0x80 are written as they are.
 *   nul    each path as it is, followed by a NUL byte.
 *   json   one document {"root": "...", "paths": ["...", ...]}, one path per
 *          line. Strings are escaped per RFC 8259; a byte that does not
 *          belong to a valid UTF-8 sequence is written as the lone surrogate
 *          \udcXX (XX the byte), as Python's surrogateescape decodes it.
 *
 * Threads: output_path() is not thread-safe; output_path_locked() takes the
 * output's mutex around it, for callbacks from the walker's threads.
 */
#ifndef TRAWL_CLI_OUTPUT_H
#define TRAWL_CLI_OUTPUT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <glib.h>

/* Bytes buffered before a write(2); 16 pages, so start-up touches little. */
#define OUTPUT_BUFFER_SIZE (64 * 1024)

typedef enum {
  OUTPUT_LINES,
  OUTPUT_NUL,
  OUTPUT_JSON,
} OutputFormat;

typedef struct {
  int fd;
  OutputFormat format;
  char *buf;            /* OUTPUT_BUFFER_SIZE bytes */
  size_t len;           /* bytes waiting in buf */
  GString *prefix;      /* written before every path, escaped for the format */
  GString *raw_prefix;  /* the same bytes unescaped (lines: when no quoting) */
  bool prefix_special;  /* lines: the prefix alone needs quoting */
  bool flush_each;      /* write(2) after every path (--unsorted on a terminal) */
  size_t count;         /* paths written */
  int error;            /* errno of the first failed write; 0 if none */
  /* For output_path_locked(). A pthread mutex, not a GMutex: GMutex is a
   * bare futex on Linux, which ThreadSanitizer cannot see. */
  pthread_mutex_t lock;
} output;

/* Prepare OUT to write FORMAT to FD; every path is preceded by the PREFIX_LEN
 * bytes of PREFIX (may be 0, PREFIX then NULL; e.g. "/abs/root/" for --absolute). Release with
 * output_release(). */
void output_init(output *out, int fd, OutputFormat format, const char *prefix,
                 size_t prefix_len);

/* Start the output: json writes its opening with ROOT (ROOT_LEN bytes);
 * the other formats write nothing. */
void output_begin(output *out, const char *root, size_t root_len);

/* Write one path of LEN bytes (relative to the root; the prefix is added). */
void output_path(output *out, const char *path, size_t len);

/* Write the N BYTES as they are, through the buffer: for a caller that
 * formats its own records (trawl batch). */
void output_raw(output *out, const char *bytes, size_t n);

/* output_path() under the output's mutex; returns false once a write has
 * failed (the caller should stop producing). */
bool output_path_locked(output *out, const char *path, size_t len);

/* Finish the document (json) and flush. Returns false if any write failed;
 * out->error then holds its errno. */
bool output_end(output *out);

/* Drop what is buffered and write nothing more: the walk failed, and a
 * complete-looking document would claim it found nothing. */
void output_abort(output *out);

/* Free the buffer and prefixes (does not close FD). */
void output_release(output *out);

/* memcpy() for short paths and names, inline: two overlapping moves for 4
 * to 16 bytes (the library's buf.h has the same for the walker; the CLI
 * sees only the public headers; docs/adr/0005-no-calls-per-entry.md). */
static inline void
output_copy(void *dst, const void *src, size_t n)
{
  char *d = (char *)dst;
  const char *s = (const char *)src;
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + n - 8, 8);
    memcpy(d, &a, 8);
    memcpy(d + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    memcpy(d, &a, 4);
    memcpy(d + n - 4, &b, 4);
  } else if (n < 4) {
    for (size_t i = 0; i < n; i++)
      d[i] = s[i];
  } else {
    memcpy(d, s, n);
  }
}

/* Does S (LEN bytes) hold a byte a JSON string escapes (or checks: >= 0x80)?
 * When not, its JSON form is the bytes themselves between quotes. */
bool output_json_needs_escaping(const char *s, size_t len);

/* Write S (LEN bytes, any bytes) to OUT as a JSON string with its quotes,
 * as output_json_string() encodes it, after a ',' unless FIRST: an item of
 * an array (trawl batch's paths). */
void output_json_item(output *out, bool first, const char *s, size_t len);

/* Append S (LEN bytes, any bytes) to OUT as a JSON string with its quotes,
 * in the json format's escaping. */
void output_json_string(GString *out, const char *s, size_t len);

/* Append S to OUT as the lines format prints a path: as it is, or quoted
 * like git when it holds a control byte, '"' or '\\'. */
void output_lines_string(GString *out, const char *s, size_t len);

#endif /* TRAWL_CLI_OUTPUT_H */
