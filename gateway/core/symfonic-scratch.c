/* symfonic-scratch.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-scratch-private.h"
#include "symfonic-string-private.h"

/* A stream's output grows its buffer by doubling, every stream anew and
 * again after each send that emptied it: each doubling past a kilobyte is
 * a large allocation and a copy, and makes malloc consolidate its small
 * free chunks. A thread keeps a few emptied buffers for its next frames:
 * 1 MiB at most. */
#define SPARE_BUFFERS 16

typedef struct
{
  guint    n;
  GString *buffers[SPARE_BUFFERS];
} SpareBuffers;

static void
spare_buffers_free (gpointer data)
{
  SpareBuffers *spares = data;

  for (guint i = 0; i < spares->n; i++)
    g_string_free (spares->buffers[i], TRUE);
  g_free (spares);
}

static GPrivate spare_buffers = G_PRIVATE_INIT (spare_buffers_free);

/* Takes a new buffer for @text, the thread-local pointer of @key, when
 * the thread has none yet or let its last one grow past the bound. */
GString *
symfonic_scratch_renew (GString  **text,
                        GPrivate  *key)
{
  GString *fresh = g_string_sized_new (256);

  /* frees the one it replaces, whose destructor then forgets it: the new
   * one is set after */
  g_private_replace (key, fresh);
  *text = fresh;

  return fresh;
}

static GString *
take_spare (void)
{
  SpareBuffers *spares = g_private_get (&spare_buffers);

  return spares != NULL && spares->n > 0 ? spares->buffers[--spares->n] : NULL;
}

/* An empty buffer: one of the thread's spare buffers, or a new one of
 * @size bytes. */
GString *
symfonic_spare_buffer_new (gsize size)
{
  GString *spare = take_spare ();

  return spare != NULL ? spare : g_string_sized_new (size);
}

/* Replaces the empty *@buffer by one of the thread's spare buffers, when
 * it has one. */
void
symfonic_spare_buffer_take (GString **buffer)
{
  GString *spare;

  g_assert ((*buffer)->len == 0);

  spare = take_spare ();
  if (spare == NULL)
    return;

  g_string_free (*buffer, TRUE);
  *buffer = spare;
}

/* Takes @buffer, which is kept for the thread's next stream if it is
 * neither small nor too large and there is room, and freed otherwise. */
void
symfonic_spare_buffer_give (GString *buffer)
{
  SpareBuffers *spares;

  if (!SYMFONIC_KEEPS_FREED || buffer->allocated_len < SYMFONIC_SPARE_BUFFER_MIN || buffer->allocated_len > SYMFONIC_SCRATCH_KEPT_BYTES)
    {
      g_string_free (buffer, TRUE);
      return;
    }

  spares = g_private_get (&spare_buffers);
  if (spares == NULL)
    {
      spares = g_new0 (SpareBuffers, 1);
      g_private_set (&spare_buffers, spares);
    }
  if (spares->n == SPARE_BUFFERS)
    {
      g_string_free (buffer, TRUE);
      return;
    }

  symfonic_string_clear (buffer);
  spares->buffers[spares->n++] = buffer;
}
