/* test-scratch.c: the text buffers a thread keeps for each use
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "symfonic-scratch-private.h"

SYMFONIC_SCRATCH_DEFINE (scratch);

/* The same buffer comes back, emptied. */
static void
test_scratch_taken_empty (void)
{
  GString *first = symfonic_scratch_get (scratch);
  GString *again;

  g_assert_nonnull (first);
  g_assert_cmpuint (first->len, ==, 0);
  g_string_append (first, "delta");

  again = symfonic_scratch_get (scratch);
  g_assert_true (again == first);
  g_assert_cmpuint (again->len, ==, 0);
  g_assert_cmpstr (again->str, ==, "");
}

/* A buffer that grew past the bound is let go, and the next take, and the
 * ones after it, get a new small one. */
static void
test_scratch_large_let_go (void)
{
  GString *large = symfonic_scratch_get (scratch);
  GString *fresh;

  g_string_set_size (large, 100 * 1024);
  g_assert_cmpuint (large->allocated_len, >, SYMFONIC_SCRATCH_KEPT_BYTES);

  fresh = symfonic_scratch_get (scratch);
  g_assert_nonnull (fresh);
  g_assert_cmpuint (fresh->len, ==, 0);
  g_assert_cmpuint (fresh->allocated_len, <=, SYMFONIC_SCRATCH_KEPT_BYTES);
  g_string_append (fresh, "terminal");

  g_assert_true (symfonic_scratch_get (scratch) == fresh);
  g_assert_cmpuint (fresh->len, ==, 0);
}

/* Runs at the thread's end, maybe after the scratch's own destructor. */
static void
take_at_exit (gpointer data)
{
  GString *text = symfonic_scratch_get (scratch);

  g_string_append (text, "after");
}

static GPrivate taker = G_PRIVATE_INIT (take_at_exit);

static gpointer
use_and_exit (gpointer data)
{
  GString *text = symfonic_scratch_get (scratch);

  g_string_append (text, "thread");
  g_private_set (&taker, GINT_TO_POINTER (1));

  return text;
}

/* Each thread has its own buffer, freed when it ends, also when a
 * destructor that runs after the buffer's takes it again (AddressSanitizer
 * tells a use after free or a leak). */
static void
test_scratch_per_thread (void)
{
  GString *mine = symfonic_scratch_get (scratch);
  GThread *thread = g_thread_new ("scratch", use_and_exit, NULL);
  gpointer theirs = g_thread_join (thread);

  g_assert_true (theirs != mine);
  g_assert_true (symfonic_scratch_get (scratch) == mine);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/scratch/taken-empty", test_scratch_taken_empty);
  g_test_add_func ("/scratch/large-let-go", test_scratch_large_let_go);
  g_test_add_func ("/scratch/per-thread", test_scratch_per_thread);

  return g_test_run ();
}
