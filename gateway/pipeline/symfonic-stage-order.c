/* symfonic-stage-order.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "symfonic-enums.h"
#include "symfonic-error.h"
#include "symfonic-stage.h"
#include "symfonic-stage-order-private.h"
#include "symfonic-stage-order.h"

/* What a stage type declared; set once, when the type is registered, and
 * never freed, like the type itself. */
typedef struct
{
  GStrv  provides;
  GStrv  needs;
  GStrv  after;
  char  *why;
} Order;

static const char * const no_names[] = { NULL };

static GQuark
order_quark (void)
{
  return g_quark_from_static_string ("symfonic-stage-order");
}

static const Order *
get_order (GType type)
{
  /* declarations are per type, and a subclass keeps its parent's */
  for (; type != 0; type = g_type_parent (type))
    {
      const Order *order = g_type_get_qdata (type, order_quark ());

      if (order != NULL)
        return order;
    }

  return NULL;
}

/**
 * symfonic_stage_type_declare_order:
 * @type: a type implementing #SymfonicStage
 * @provides: (array zero-terminated=1) (nullable): what the stage gives the
 *   stages after it, such as `principal` (an authenticated identity) or
 *   `extraction` (memory blocks lifted out of the answer)
 * @needs: (array zero-terminated=1) (nullable): what the stage cannot work
 *   without: a route must run a stage that provides each before it
 * @after: (array zero-terminated=1) (nullable): what must not come after
 *   the stage when a route has it: a stage providing it must then run first
 * @why: (nullable): why the order matters, as a clause that completes
 *   “which …” about this stage, for the load error; %NULL to say nothing
 *
 * Declares how a stage type depends on the order of a route's stages, so
 * the pipeline loader refuses a wrong order, naming the file, the line, the
 * route and the stages involved, instead of serving it wrongly (a meter
 * counting every request as one anonymous principal, say).
 *
 * A stage runs before another if it is listed before it, or if it admits
 * requests on the request head (%SYMFONIC_ADMISSION_PHASE_HEAD) and the
 * other does not: the head phase runs first whatever the list says.
 *
 * Call it once per type, when registering it; from Python or JavaScript,
 * right after symfonic_register_stage_type(). A subclass shares its
 * parent's declaration unless it makes its own.
 */
void
symfonic_stage_type_declare_order (GType               type,
                                   const char * const *provides,
                                   const char * const *needs,
                                   const char * const *after,
                                   const char         *why)
{
  Order *order;

  g_return_if_fail (g_type_is_a (type, SYMFONIC_TYPE_STAGE));
  g_return_if_fail (g_type_get_qdata (type, order_quark ()) == NULL);

  order = g_new0 (Order, 1);
  order->provides = g_strdupv ((char **) (provides != NULL ? provides : no_names));
  order->needs = g_strdupv ((char **) (needs != NULL ? needs : no_names));
  order->after = g_strdupv ((char **) (after != NULL ? after : no_names));
  order->why = g_strdup (why);
  g_type_set_qdata (type, order_quark (), order);
}

/**
 * symfonic_stage_type_get_provides:
 * @type: a type implementing #SymfonicStage
 *
 * Gets what @type declared it provides to the stages after it.
 *
 * Returns: (transfer none) (array zero-terminated=1): the names; empty if
 *   @type declared nothing
 */
const char * const *
symfonic_stage_type_get_provides (GType type)
{
  const Order *order = get_order (type);

  return order != NULL ? (const char * const *) order->provides : no_names;
}

/**
 * symfonic_stage_type_get_needs:
 * @type: a type implementing #SymfonicStage
 *
 * Gets what @type declared it needs from a stage before it.
 *
 * Returns: (transfer none) (array zero-terminated=1): the names; empty if
 *   @type declared nothing
 */
const char * const *
symfonic_stage_type_get_needs (GType type)
{
  const Order *order = get_order (type);

  return order != NULL ? (const char * const *) order->needs : no_names;
}

/**
 * symfonic_stage_type_get_after:
 * @type: a type implementing #SymfonicStage
 *
 * Gets what @type declared must not come after it.
 *
 * Returns: (transfer none) (array zero-terminated=1): the names; empty if
 *   @type declared nothing
 */
const char * const *
symfonic_stage_type_get_after (GType type)
{
  const Order *order = get_order (type);

  return order != NULL ? (const char * const *) order->after : no_names;
}

/**
 * symfonic_route_kind_get_needs:
 * @kind: a route kind
 *
 * Gets what a route of @kind needs one of its stages to provide: a
 * `chunks` route needs `projection`, since only the projection stage knows
 * the chunk shapes of the stream's release line.
 *
 * Returns: (transfer none) (array zero-terminated=1): the names
 */
const char * const *
symfonic_route_kind_get_needs (SymfonicRouteKind kind)
{
  static const char * const chunks[] = { "projection", NULL };

  return kind == SYMFONIC_ROUTE_KIND_CHUNKS ? chunks : no_names;
}

static gboolean
provides (SymfonicStage *stage,
          const char    *name)
{
  return g_strv_contains (symfonic_stage_type_get_provides (G_OBJECT_TYPE (stage)), name);
}

/* Whether stage @a of @route runs before stage @b, indices in route order. */
static gboolean
runs_before (SymfonicRoute *route,
             guint          a,
             guint          b)
{
  SymfonicAdmissionPhase phase_a = symfonic_stage_get_admission_phase (symfonic_route_get_stage (route, a));
  SymfonicAdmissionPhase phase_b = symfonic_stage_get_admission_phase (symfonic_route_get_stage (route, b));

  if (phase_a != phase_b)
    return phase_a == SYMFONIC_ADMISSION_PHASE_HEAD;

  return a < b;
}

/* The first stage of @route other than @self that provides @name and runs
 * before @self (@before) or not; -1 if none. */
static int
find_provider (SymfonicRoute *route,
               guint          self,
               const char    *name,
               gboolean       before)
{
  for (guint i = 0; i < symfonic_route_get_n_stages (route); i++)
    {
      if (i != self && provides (symfonic_route_get_stage (route, i), name) &&
          runs_before (route, i, self) == before)
        return (int) i;
    }

  return -1;
}

static char *
which (const Order *order)
{
  /* TRANSLATORS: %s completes “which …” about a stage, such as “keeps a
   * budget per authenticated tenant”; the message this goes into has no
   * comma of its own after it. */
  return order != NULL && order->why != NULL ? g_strdup_printf (_(", which %s"), order->why) : g_strdup ("");
}

/*
 * symfonic_stage_order_check:
 * @route: a route with its stages added
 * @names: the stages' names in the pipeline file, in route order
 * @type_names: their registered type names, in route order
 * @error: return location for a #GError
 *
 * Checks @route against what its kind and its stages' types declared. The
 * message names the stages involved; the caller adds where the route is.
 *
 * Returns: %TRUE if the order is right
 */
gboolean
symfonic_stage_order_check (SymfonicRoute       *route,
                            const char * const  *names,
                            const char * const  *type_names,
                            GError             **error)
{
  const char * const *kind_needs = symfonic_route_kind_get_needs (symfonic_route_get_kind (route));
  guint n = symfonic_route_get_n_stages (route);

  for (guint k = 0; kind_needs[k] != NULL; k++)
    {
      guint i;

      for (i = 0; i < n && !provides (symfonic_route_get_stage (route, i), kind_needs[k]); i++)
        ;
      if (i == n)
        {
          g_autoptr(GEnumClass) kinds = g_type_class_ref (SYMFONIC_TYPE_ROUTE_KIND);

          g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                       _("expected a stage that provides “%s” on a “%s” route, found none among its stages"),
                       kind_needs[k], g_enum_get_value (kinds, symfonic_route_get_kind (route))->value_nick);
          return FALSE;
        }
    }

  for (guint i = 0; i < n; i++)
    {
      GType type = G_OBJECT_TYPE (symfonic_route_get_stage (route, i));
      const Order *order = get_order (type);
      g_autofree char *why = which (order);

      if (order == NULL)
        continue;

      for (guint k = 0; order->needs[k] != NULL; k++)
        {
          int later;

          if (find_provider (route, i, order->needs[k], TRUE) >= 0)
            continue;

          later = find_provider (route, i, order->needs[k], FALSE);
          if (later >= 0)
            g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                         _("expected stage “%s” (%s) before stage “%s” (%s)%s, found it after"),
                         names[later], type_names[later], names[i], type_names[i], why);
          else if (order->why != NULL)
            g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                         _("expected a stage that provides “%s” before stage “%s” (%s), which %s, "
                           "found none on the route"),
                         order->needs[k], names[i], type_names[i], order->why);
          else
            g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                         _("expected a stage that provides “%s” before stage “%s” (%s), found none on the route"),
                         order->needs[k], names[i], type_names[i]);
          return FALSE;
        }

      for (guint k = 0; order->after[k] != NULL; k++)
        {
          int later = find_provider (route, i, order->after[k], FALSE);

          if (later >= 0)
            {
              g_set_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG,
                           _("expected stage “%s” (%s) before stage “%s” (%s)%s, found it after"),
                           names[later], type_names[later], names[i], type_names[i], why);
              return FALSE;
            }
        }
    }

  return TRUE;
}
