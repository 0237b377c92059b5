/* trawl — output formats of the walk command (see output.h for the rules).
 *
 * The common case is a path that needs no escaping: one scan for a byte
 * outside the format's plain set, then a memcpy into the buffer. Only paths
 * that hold such a byte take the escaping route, which copies the plain runs
 * between escapes in one piece and emits each escape through the same sink,
 * so the prefix (escaped once, up front) and the paths share one encoder.
 */
#define _POSIX_C_SOURCE 200809L /* write */
#include "output.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* Where an encoder sends its bytes: the output's buffer or a GString. */
typedef void (*emit_fn)(void *target, const char *bytes, size_t n);

/* ---- Writing ---- */

static void
write_all(output *out, const char *bytes, size_t n)
{
  while (n > 0 && out->error == 0) {
    ssize_t done = write(out->fd, bytes, n);
    if (done < 0) {
      if (errno != EINTR)
        out->error = errno;
      continue;
    }
    bytes += done;
    n -= (size_t)done;
  }
}

static void
flush(output *out)
{
  write_all(out, out->buf, out->len);
  out->len = 0;
}

static inline void
put(output *out, const char *bytes, size_t n)
{
  if (n > OUTPUT_BUFFER_SIZE - out->len) {
    flush(out);
    if (n >= OUTPUT_BUFFER_SIZE) {
      write_all(out, bytes, n);
      return;
    }
  }
  memcpy(out->buf + out->len, bytes, n);
  out->len += n;
}

static void
emit_output(void *target, const char *bytes, size_t n)
{
  put(target, bytes, n);
}

static void
emit_gstring(void *target, const char *bytes, size_t n)
{
  g_string_append_len(target, bytes, (gssize)n);
}

/* ---- lines: git's C-style quoting ---- */

/* Does byte C force a path to be quoted (git's cq_must_quote with
 * core.quotePath=false)? */
static inline bool
lines_special(unsigned char c)
{
  return c < 0x20 || c == '"' || c == '\\' || c == 0x7f;
}

/* lines_special() as a table, for the per-path scan. */
static const bool lines_special_table[256] = {
  [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
  [0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
  [0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
  [0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
  [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x7f] = 1,
};

static bool
lines_needs_quoting(const char *path, size_t len)
{
  const unsigned char *p = (const unsigned char *)path;
  bool special = false;
  for (size_t i = 0; i < len; i++)
    special |= lines_special_table[p[i]];
  return special;
}

/* The inside of a quoted path: plain bytes as they are, the rest escaped. */
static void
lines_quote_body(emit_fn emit, void *target, const char *path, size_t len)
{
  static const char letters[0x20] = {
    [0x07] = 'a', [0x08] = 'b', [0x09] = 't', [0x0a] = 'n',
    [0x0b] = 'v', [0x0c] = 'f', [0x0d] = 'r',
  };
  size_t start = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)path[i];
    if (!lines_special(c))
      continue;
    emit(target, path + start, i - start);
    char esc[4] = {'\\', (char)c, 0, 0};
    size_t n = 2;
    if (c < 0x20 && letters[c]) {
      esc[1] = letters[c];
    } else if (c < 0x20 || c == 0x7f) {
      esc[1] = (char)('0' + (c >> 6));
      esc[2] = (char)('0' + ((c >> 3) & 7));
      esc[3] = (char)('0' + (c & 7));
      n = 4;
    }
    emit(target, esc, n);
    start = i + 1;
  }
  emit(target, path + start, len - start);
}

static void
lines_path(output *out, const char *path, size_t len)
{
  if (!out->prefix_special && !lines_needs_quoting(path, len)) {
    const size_t plen = out->raw_prefix->len;
    if (plen + len + 1 <= OUTPUT_BUFFER_SIZE - out->len) {
      /* The common case: one copy into room already there. */
      char *at = out->buf + out->len;
      memcpy(at, out->raw_prefix->str, plen);
      memcpy(at + plen, path, len);
      at[plen + len] = '\n';
      out->len += plen + len + 1;
      return;
    }
    put(out, out->raw_prefix->str, plen);
    put(out, path, len);
    put(out, "\n", 1);
    return;
  }
  put(out, "\"", 1);
  put(out, out->prefix->str, out->prefix->len);
  lines_quote_body(emit_output, out, path, len);
  put(out, "\"\n", 2);
}

/* ---- json: RFC 8259 strings, surrogateescape for bytes that are not UTF-8 ---- */

/* Length of the valid UTF-8 sequence at S (N bytes available) that starts
 * with a byte >= 0x80, or 0 if none starts there (Unicode table 3-7: no
 * overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t
utf8_sequence(const unsigned char *s, size_t n)
{
  unsigned char c = s[0];
  size_t need;
  unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
  if (c >= 0xc2 && c <= 0xdf) {
    need = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    need = 3;
    if (c == 0xe0)
      lo = 0xa0;
    else if (c == 0xed)
      hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    need = 4;
    if (c == 0xf0)
      lo = 0x90;
    else if (c == 0xf4)
      hi = 0x8f;
  } else {
    return 0;
  }
  if (n < need || s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < need; i++)
    if (s[i] < 0x80 || s[i] > 0xbf)
      return 0;
  return need;
}

/* Is byte C copied as it is when it is ASCII? */
static inline bool
json_plain_ascii(unsigned char c)
{
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* The inside of a JSON string for the LEN bytes at S. */
static void
json_string_body(emit_fn emit, void *target, const char *s, size_t len)
{
  static const char hex[] = "0123456789abcdef";
  const unsigned char *u = (const unsigned char *)s;
  size_t start = 0, i = 0;
  while (i < len) {
    unsigned char c = u[i];
    if (json_plain_ascii(c)) {
      i++;
      continue;
    }
    if (c >= 0x80) {
      size_t seq = utf8_sequence(u + i, len - i);
      if (seq > 0) {
        i += seq;
        continue;
      }
    }
    emit(target, s + start, i - start);
    char esc[6] = {'\\', (char)c};
    size_t n = 2;
    switch (c) {
    case '"': case '\\': break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    default:
      /* A control byte is \u00XX; a stray byte >= 0x80 is \udcXX. */
      memcpy(esc + 1, c < 0x80 ? "u00" : "udc", 3);
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      n = 6;
      break;
    }
    emit(target, esc, n);
    i++;
    start = i;
  }
  emit(target, s + start, len - start);
}

/* The ASCII bytes json_string_body() does not copy as they are: controls,
 * '"' and '\\'. Bytes >= 0x80 take the slow route too, which checks UTF-8. */
static const bool json_special_table[128] = {
  [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
  [0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
  [0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
  [0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
  [0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, ['"'] = 1, ['\\'] = 1,
};

#define BYTES_OF(c) (0x0101010101010101ull * (c))

/* Does the word W hold a byte json_special_table[] names or one >= 0x80?
 * Eight bytes at a time: a byte < 0x20 borrows from its high bit when 0x20 is
 * taken from it, and so does a zero byte when 1 is; exact once no byte has
 * its high bit set, and a word with one is special anyway. */
static inline bool
json_word_special(uint64_t w)
{
  const uint64_t quote = w ^ BYTES_OF('"'), backslash = w ^ BYTES_OF('\\');
  const uint64_t hits = w | ((w - BYTES_OF(0x20)) & ~w) | ((quote - BYTES_OF(1)) & ~quote) |
                        ((backslash - BYTES_OF(1)) & ~backslash);
  return (hits & BYTES_OF(0x80)) != 0;
}

static inline bool
json_needs_escaping(const char *s, size_t len)
{
  const unsigned char *p = (const unsigned char *)s;
  if (len < 8) {
    bool special = false;
    for (size_t i = 0; i < len; i++)
      special |= (p[i] >> 7) | json_special_table[p[i] & 0x7f];
    return special;
  }
  uint64_t w;
  for (size_t i = 0; i + 8 < len; i += 8) {
    memcpy(&w, p + i, 8);
    if (json_word_special(w))
      return true;
  }
  /* The last eight bytes, overlapping the words before when LEN is not a
   * multiple of eight: no byte loop for the tail. */
  memcpy(&w, p + len - 8, 8);
  return json_word_special(w);
}

bool
output_json_needs_escaping(const char *s, size_t len)
{
  return json_needs_escaping(s, len);
}

static void
json_path(output *out, const char *path, size_t len)
{
  put(out, out->count ? ",\n\"" : "\n\"", out->count ? 3 : 2);
  put(out, out->prefix->str, out->prefix->len);
  json_string_body(emit_output, out, path, len);
  put(out, "\"", 1);
}

/* ---- The output ---- */

void
output_init(output *out, int fd, OutputFormat format, const char *prefix,
            size_t prefix_len)
{
  if (prefix == NULL) /* no prefix (PREFIX_LEN 0): no pointer arithmetic on NULL */
    prefix = "";
  memset(out, 0, sizeof *out);
  out->fd = fd;
  out->format = format;
  out->buf = g_malloc(OUTPUT_BUFFER_SIZE);
  out->raw_prefix = g_string_new_len(prefix, (gssize)prefix_len);
  out->prefix = g_string_new(NULL);
  switch (format) {
  case OUTPUT_LINES:
    out->prefix_special = lines_needs_quoting(prefix, prefix_len);
    lines_quote_body(emit_gstring, out->prefix, prefix, prefix_len);
    break;
  case OUTPUT_JSON:
    json_string_body(emit_gstring, out->prefix, prefix, prefix_len);
    break;
  case OUTPUT_NUL:
    g_string_append_len(out->prefix, prefix, (gssize)prefix_len);
    break;
  }
  pthread_mutex_init(&out->lock, NULL);
}

void
output_begin(output *out, const char *root, size_t root_len)
{
  if (out->format != OUTPUT_JSON)
    return;
  put(out, "{\"root\": \"", 10);
  json_string_body(emit_output, out, root, root_len);
  put(out, "\", \"paths\": [", 13);
}

void
output_path(output *out, const char *path, size_t len)
{
  switch (out->format) {
  case OUTPUT_LINES:
    lines_path(out, path, len);
    break;
  case OUTPUT_NUL:
    put(out, out->prefix->str, out->prefix->len);
    put(out, path, len);
    put(out, "", 1);
    break;
  case OUTPUT_JSON:
    json_path(out, path, len);
    break;
  }
  out->count++;
}

void
output_raw(output *out, const char *bytes, size_t n)
{
  put(out, bytes, n);
}

bool
output_path_locked(output *out, const char *path, size_t len)
{
  pthread_mutex_lock(&out->lock);
  output_path(out, path, len);
  if (out->flush_each)
    flush(out);
  bool ok = out->error == 0;
  pthread_mutex_unlock(&out->lock);
  return ok;
}

bool
output_end(output *out)
{
  if (out->format == OUTPUT_JSON)
    put(out, "\n]}\n", 4);
  flush(out);
  return out->error == 0;
}

void
output_abort(output *out)
{
  out->len = 0;
}

void
output_release(output *out)
{
  g_free(out->buf);
  g_string_free(out->prefix, TRUE);
  g_string_free(out->raw_prefix, TRUE);
  pthread_mutex_destroy(&out->lock);
}

void
output_json_item(output *out, bool first, const char *s, size_t len)
{
  if (!json_needs_escaping(s, len) && len + 3 <= OUTPUT_BUFFER_SIZE - out->len) {
    /* The common case: one copy into room already there. */
    char *at = out->buf + out->len;
    if (!first)
      *at++ = ',';
    at[0] = '"';
    output_copy(at + 1, s, len);
    at[len + 1] = '"';
    out->len += len + 2 + !first;
    return;
  }
  put(out, first ? "\"" : ",\"", first ? 1 : 2);
  json_string_body(emit_output, out, s, len);
  put(out, "\"", 1);
}

void
output_json_string(GString *out, const char *s, size_t len)
{
  g_string_append_c(out, '"');
  if (json_needs_escaping(s, len))
    json_string_body(emit_gstring, out, s, len);
  else
    g_string_append_len(out, s, (gssize)len);
  g_string_append_c(out, '"');
}

void
output_lines_string(GString *out, const char *s, size_t len)
{
  if (!lines_needs_quoting(s, len)) {
    g_string_append_len(out, s, (gssize)len);
    return;
  }
  g_string_append_c(out, '"');
  lines_quote_body(emit_gstring, out, s, len);
  g_string_append_c(out, '"');
}
