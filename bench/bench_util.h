/* trawl — what the benchmarks share: the clock, the calibration of a timed
 * loop, the median of the rounds, the deterministic generator, and the
 * parsing and printing of numbers. Static inline functions: each benchmark
 * is one translation unit and links nothing for them.
 *
 * The timing scheme they follow: an arm's loop over its inputs is
 * calibrated (bench_calibrate) to run at least a minimum time, the arms then
 * take turns for some rounds so that a burst of host noise lands on all of
 * them, and a cell is the median of its rounds (bench_median).
 */
#ifndef TRAWL_BENCH_UTIL_H
#define TRAWL_BENCH_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The timed loops are kept out of line so that callgrind attributes them. */
#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* The generator's usual starting state. */
#define BENCH_RNG_SEED UINT64_C(0x9e3779b97f4a7c15)

/* Advance the generator at *STATE (a 64-bit LCG); returns its top 31 bits. */
static inline uint32_t
bench_rng(uint64_t *state)
{
  *state = *state * 6364136223846793005u + 1442695040888963407u;
  return (uint32_t)(*state >> 33);
}

/* Nanoseconds on the monotonic clock. */
static inline double
bench_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* qsort comparator for doubles, ascending. */
static inline int
bench_compare_double(const void *x, const void *y)
{
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Sort the N (> 0) samples at V ascending, in place, and return the median,
 * V[N / 2]; V[0] and V[N - 1] are then the extremes. */
static inline double
bench_median(double *v, size_t n)
{
  qsort(v, n, sizeof(double), bench_compare_double);
  return v[n / 2];
}

/* One timed loop: PASSES passes over the inputs CTX describes. */
typedef void (*bench_run_fn)(const void *ctx, uint64_t passes);

/* Passes of RUN that take at least MIN_NS: 1, 4, 16, … passes are timed
 * until a run takes a quarter of MIN_NS (or reaches MAX_PASSES), and its
 * rate is scaled up. Never fewer passes than the last run made. */
static inline uint64_t
bench_calibrate(bench_run_fn run, const void *ctx, double min_ns, uint64_t max_passes)
{
  uint64_t passes = 1;
  for (;;) {
    double t0 = bench_now_ns();
    run(ctx, passes);
    double dt = bench_now_ns() - t0;
    if (dt >= min_ns / 4 || passes >= max_passes) {
      double per = dt / (double)passes;
      uint64_t want = (uint64_t)(min_ns / (per > 0 ? per : 1)) + 1;
      return want > passes ? want : passes;
    }
    passes *= 4;
  }
}

/* S as a decimal count. A bad one prints "PROG: bad WHAT "S"" and USAGE to
 * stderr and exits with status 2. */
static inline uint64_t
bench_parse_count(const char *prog, const char *s, const char *what, void (*usage)(FILE *))
{
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || end == s) {
    fprintf(stderr, "%s: bad %s \"%s\"\n", prog, what, s);
    usage(stderr);
    exit(2);
  }
  return v;
}

/* NS into BUF (N bytes) as a table cell: "1.2 ms"; whole microseconds from
 * WHOLE_US_FROM ns ("123 µs"), two decimals below ("1.23 µs"); then "123"
 * and "12.3" ns. */
static inline void
bench_format_ns(char *buf, size_t n, double ns, double whole_us_from)
{
  if (ns >= 1e6)
    snprintf(buf, n, "%.1f ms", ns / 1e6);
  else if (ns >= whole_us_from)
    snprintf(buf, n, "%.0f µs", ns / 1000);
  else if (ns >= 1000)
    snprintf(buf, n, "%.2f µs", ns / 1000);
  else if (ns >= 100)
    snprintf(buf, n, "%.0f", ns);
  else
    snprintf(buf, n, "%.1f", ns);
}

#endif /* TRAWL_BENCH_UTIL_H */
