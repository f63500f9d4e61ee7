/* test-duplicate-plugin.c: a valid plugin whose source type name is taken
 * by the replay plugin
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <symfonic.h>

#define TEST_TYPE_DUPLICATE_SOURCE (test_duplicate_source_get_type ())

G_DECLARE_FINAL_TYPE (TestDuplicateSource, test_duplicate_source, TEST, DUPLICATE_SOURCE, GObject)

struct _TestDuplicateSource
{
  GObject parent_instance;
};

static void test_duplicate_source_source_init (SymfonicSourceInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (TestDuplicateSource, test_duplicate_source, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SYMFONIC_TYPE_SOURCE, test_duplicate_source_source_init))

static void
test_duplicate_source_start (SymfonicSource *source,
                             SymfonicStream *stream,
                             GCancellable   *cancellable)
{
  symfonic_stream_push_end (stream, NULL);
}

static void
test_duplicate_source_source_init (SymfonicSourceInterface *iface)
{
  iface->start = test_duplicate_source_start;
}

static void
test_duplicate_source_class_init (TestDuplicateSourceClass *klass)
{
}

static void
test_duplicate_source_init (TestDuplicateSource *self)
{
}

static gboolean
test_duplicate_plugin_init (SymfonicPlugin  *plugin,
                            GError         **error)
{
  return symfonic_plugin_register_type (plugin, TEST_TYPE_DUPLICATE_SOURCE, "replay", error);
}

SYMFONIC_PLUGIN_DEFINE ("test-duplicate", "1.0", "LGPL-2.1-or-later", "Registers a source under a name already taken", test_duplicate_plugin_init);
