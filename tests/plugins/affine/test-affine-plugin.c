/* test-affine-plugin.c: a stage bound to a thread of its own, an inline
 * stage that counts what reaches it, and a source that pushes as fast as
 * it may, for the affinity tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "test-affine-stage.h"
#include "test-burst-source.h"
#include "test-count-stage.h"

static gpointer
run_context (gpointer data)
{
  GMainContext *context = data;
  g_autoptr(GMainLoop) loop = g_main_loop_new (context, FALSE);

  g_main_context_push_thread_default (context);
  g_main_loop_run (loop);

  return NULL;
}

/* Like an interpreter's thread: one context, iterated for the life of the
 * process. */
static gboolean
test_affine_plugin_init (SymfonicPlugin  *plugin,
                         GError         **error)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  GThread *thread = g_thread_new ("test-affine", run_context, g_main_context_ref (context));

  test_affine_stage_set_thread (thread);
  g_thread_unref (thread);
  symfonic_stage_type_set_main_context (TEST_TYPE_AFFINE_STAGE, context);

  return symfonic_plugin_register_type (plugin, TEST_TYPE_AFFINE_STAGE, "test-affine", error) &&
         symfonic_plugin_register_type (plugin, TEST_TYPE_COUNT_STAGE, "test-count", error) &&
         symfonic_plugin_register_type (plugin, TEST_TYPE_BURST_SOURCE, "test-burst", error);
}

SYMFONIC_PLUGIN_DEFINE ("test-affine", "1.0", "LGPL-2.1-or-later", "A stage that runs on a thread of its own", test_affine_plugin_init);
