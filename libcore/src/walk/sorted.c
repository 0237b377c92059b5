/* trawl — sorted output without sorting paths.
 *
 * Each directory read becomes a node holding its results and the
 * subdirectories it entered, sorted by name with a '/' after a
 * subdirectory's name — the order their paths take in a bytewise sort of
 * whole paths ("a" < "a.b" < "a/x") — by a merge sort whose comparison
 * reads the first eight bytes as one integer. The subdirectories are queued
 * so that the first in order is read next; so directories are read in the
 * order their results are printed in. The calling thread prints a node's
 * results as soon as the node and the subtrees before them are read, and
 * frees it: a serial walk holds only the nodes of the directories above the
 * one being read; a parallel one, what the helpers read ahead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "walk-run.h"

struct node no_node;

/* Merge sort with insertion-sorted runs: O(n log n) whatever the names,
 * and the comparison inlined (qsort's indirect calls and memcmp were half
 * the cost of sorting a 50-entry directory). TMP holds N records. */
static void
sort_recs(struct rec *v, size_t n, struct rec *tmp)
{
  if (n <= 16) {
    for (size_t i = 1; i < n; i++) {
      struct rec r = v[i];
      size_t j = i;
      for (; j > 0 && compare_recs(&r, &v[j - 1]) < 0; j--)
        v[j] = v[j - 1];
      v[j] = r;
    }
    return;
  }
  size_t half = n / 2;
  sort_recs(v, half, tmp);
  sort_recs(v + half, n - half, tmp);
  if (compare_recs(&v[half - 1], &v[half]) <= 0)
    return;
  memcpy(tmp, v, half * sizeof *v);
  size_t i = 0, j = half, k = 0;
  while (i < half && j < n)
    v[k++] = compare_recs(&v[j], &tmp[i]) < 0 ? v[j++] : tmp[i++];
  while (i < half)
    v[k++] = tmp[i++];
}

/* The node of WK's records, sorted: the records of the directory just read
 * or replayed, their names copied into the node's block. */
struct node *
node_make(struct worker *wk)
{
  const guint n = (guint)wk->n_recs;
  struct rec *recs = wk->recs;
  size_t names = 0;
  for (guint i = 0; i < n; i++)
    names += recs[i].len;
  struct node *node = g_malloc(sizeof *node + n * sizeof(struct rec) + names);
  node->n = n;
  char *at = (char *)&node->recs[n];
  for (guint i = 0; i < n; i++) {
    node->recs[i] = recs[i];
    copy_short(at, recs[i].name, recs[i].len);
    node->recs[i].name = at;
    at += recs[i].len;
  }
  if (n > 16 && wk->sort_cap < n / 2 + 1) {
    wk->sort_cap = n;
    wk->sort_tmp = g_renew(struct rec, wk->sort_tmp, n);
  }
  sort_recs(node->recs, n, wk->sort_tmp);
  wk->n_recs = 0;
  return node;
}

/* Publish NODE, directory IT's, at its slot, and queue its subdirectories,
 * the first in order on top. */
void
node_publish(struct worker *wk, struct item *it, struct node *node)
{
  struct node **slot = it->slot;
  /* Slots are empty before the node is seen by the printing thread. */
  for (guint i = node->n; i-- > 0;) {
    struct rec *r = &node->recs[i];
    if (r->kind != REC_SUBTREE)
      continue;
    struct item *child = r->child.item;
    r->child.node = NULL;
    child->slot = &r->child.node;
    g_ptr_array_add(wk->kids, child);
  }
  g_atomic_pointer_set(slot, node);
  /* Once published, the slot (in the parent's node) belongs to the
   * printing thread, which may free it at any moment. */
  it->slot = NULL;
  for (guint i = 0; i < wk->kids->len; i++)
    sched_push(wk, wk->kids->pdata[i]);
  g_ptr_array_set_size(wk->kids, 0);
}

/* Print, on the calling thread, every result of a sorted run that no
 * unread directory comes before, freeing each node once printed. At the end
 * of the walk (DONE), a directory never processed (an early stop) counts as
 * empty. */
void
nodes_emit(struct run *run, bool done)
{
  GArray *frames = run->frames;
  struct buf *path = &run->out_path;
  for (;;) {
    if (frames->len == 0) {
      if (run->next_top == run->tops->len)
        return;
      struct top *top = run->tops->pdata[run->next_top];
      struct node *node = g_atomic_pointer_get(&top->node);
      if (node == NULL && !done)
        return;
      run->next_top++;
      if (node != NULL && node != &no_node) {
        buf_cut(path, 0);
        buf_add(path, top->key, strlen(top->key));
        struct frame f = {node, 0, path->len};
        g_array_append_val(frames, f);
      }
      continue;
    }
    struct frame *f = &g_array_index(frames, struct frame, frames->len - 1);
    if (f->next == f->node->n) {
      g_free(f->node);
      g_array_set_size(frames, frames->len - 1);
      continue;
    }
    struct rec *r = &f->node->recs[f->next];
    if (r->kind == REC_SUBTREE) {
      struct node *child = g_atomic_pointer_get(&r->child.node);
      if (child == NULL && !done)
        return;
      f->next++;
      if (child == NULL || child == &no_node)
        continue;
      buf_cut(path, f->base);
      buf_add(path, r->name, r->len);
      buf_addc(path, '/');
      struct frame down = {child, 0, path->len};
      g_array_append_val(frames, down); /* f is stale from here */
      continue;
    }
    f->next++;
    if (g_atomic_int_get(&run->stop))
      continue;
    buf_cut(path, f->base);
    buf_add(path, r->name, r->len);
    unsigned root = ((struct top *)run->tops->pdata[run->next_top - 1])->root;
    TrawlEntry e = {path->data, path->len, (TrawlEntryType)r->type, root, r->child.queries};
    if (!run->fn(&e, run->data))
      g_atomic_int_set(&run->stop, 1);
  }
}
