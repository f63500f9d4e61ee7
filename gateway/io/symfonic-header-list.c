/* symfonic-header-list.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "symfonic-header-list-private.h"

GPtrArray *
symfonic_header_list_new (void)
{
  return g_ptr_array_new_with_free_func (g_free);
}

/* Replaces a header of the same name, in any case. */
void
symfonic_header_list_set (GPtrArray  *list,
                          const char *name,
                          const char *value)
{
  for (guint i = 0; i < list->len; i += 2)
    {
      if (g_ascii_strcasecmp (g_ptr_array_index (list, i), name) == 0)
        {
          g_free (g_ptr_array_index (list, i + 1));
          g_ptr_array_index (list, i + 1) = g_strdup (value);
          return;
        }
    }

  g_ptr_array_add (list, g_strdup (name));
  g_ptr_array_add (list, g_strdup (value));
}

const char *
symfonic_header_list_get (GPtrArray  *list,
                          const char *name)
{
  for (guint i = 0; i < list->len; i += 2)
    {
      if (g_ascii_strcasecmp (g_ptr_array_index (list, i), name) == 0)
        return g_ptr_array_index (list, i + 1);
    }

  return NULL;
}

char **
symfonic_header_list_names (GPtrArray *list)
{
  GStrvBuilder *builder = g_strv_builder_new ();
  char **names;

  for (guint i = 0; i < list->len; i += 2)
    g_strv_builder_add (builder, g_ptr_array_index (list, i));
  names = g_strv_builder_end (builder);
  g_strv_builder_unref (builder);

  return names;
}
