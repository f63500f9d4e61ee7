/* symfonic-init-once.h: the first answer of a GInitable's init, kept
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SYMFONIC_INSIDE) && !defined(SYMFONIC_COMPILATION)
# error "Only <symfonic.h> can be included directly."
#endif

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * SymfonicInitOnce: (skip)
 *
 * Whether a #GInitable was initialised, and the error it failed with,
 * kept in the instance (zeroed, as GObject zeroes instances) for
 * symfonic_init_once(). Its fields are private.
 */
typedef struct
{
  /*< private >*/
  gboolean  done;
  GError   *error;
} SymfonicInitOnce;

/**
 * SymfonicInitFunc: (skip)
 * @initable: the object to initialise
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * An initialisation that runs once, as #GInitableIface.init would.
 *
 * Returns: %TRUE if @initable is ready
 */
typedef gboolean (*SymfonicInitFunc) (GInitable     *initable,
                                      GCancellable  *cancellable,
                                      GError       **error);

gboolean symfonic_init_once         (SymfonicInitOnce        *once,
                                     SymfonicInitFunc         init,
                                     GInitable               *initable,
                                     GCancellable            *cancellable,
                                     GError                 **error);
gboolean symfonic_init_once_is_done (const SymfonicInitOnce  *once);
void     symfonic_init_once_clear   (SymfonicInitOnce        *once);

G_END_DECLS
