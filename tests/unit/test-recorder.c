/* test-recorder.c: the recording format, the recorder's masking of
 * secrets, and a recorder whose queue is full
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Linked with the library's objects: the recorder is internal to it.
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include "symfonic-error.h"
#include "symfonic-recorder-private.h"
#include "symfonic-recording-private.h"

/* --- the format -------------------------------------------------------------- */

#define HEADER(chunks, bytes) \
  "{\"symfonic_recording\":1,\"source\":\"openai\",\"wire\":\"openai-chat-completions\",\"model\":\"m\"," \
  "\"run_id\":\"r1\",\"request\":{\"method\":\"POST\",\"target\":\"/v1/chat/completions\"," \
  "\"headers\":[[\"Authorization\",\"[redacted]\"]],\"body\":\"{}\"},\"response\":{\"status\":200,\"head_us\":5," \
  "\"headers\":[[\"Content-Type\",\"text/event-stream\"]]},\"end\":\"complete\",\"transport\":\"eof\"," \
  "\"error_code\":null,\"truncated\":false,\"redactions\":1,\"chunks\":" #chunks ",\"bytes\":" #bytes "," \
  "\"duration_us\":90}\n"

static const char valid[] =
  HEADER (3, 10)
  "{\"offset_us\":10,\"text\":\"data\"}\n"
  /* "é" cut between two reads: base64 */
  "{\"offset_us\":20,\"base64\":\"OsM=\"}\n"
  "{\"offset_us\":20,\"text\":\"\xC2\xA9\\n\\n\"}\n";

static void
test_format_read (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicRecording) recording = symfonic_recording_new_from_data (valid, strlen (valid), &error);
  g_autoptr(GBytes) second = NULL;
  gint64 offset;
  gsize length;
  const char *body;

  g_assert_no_error (error);
  g_assert_true (symfonic_recording_data_is_recording (valid, strlen (valid)));
  g_assert_cmpstr (symfonic_recording_get_source_type (recording), ==, "openai");
  g_assert_cmpstr (symfonic_recording_get_wire_format (recording), ==, "openai-chat-completions");
  g_assert_cmpstr (symfonic_recording_get_run_id (recording), ==, "r1");
  g_assert_cmpuint (symfonic_recording_get_status (recording), ==, 200);
  g_assert_cmpstr (symfonic_recording_get_response_header (recording, "content-type"), ==, "text/event-stream");
  g_assert_cmpint (symfonic_recording_get_end (recording), ==, SYMFONIC_RECORDING_END_COMPLETE);
  g_assert_cmpint (symfonic_recording_get_transport (recording), ==, SYMFONIC_RECORDING_TRANSPORT_EOF);
  g_assert_cmpuint (symfonic_recording_get_n_chunks (recording), ==, 3);
  g_assert_cmpint (symfonic_recording_get_duration_us (recording), ==, 90);
  second = symfonic_recording_get_chunk (recording, 1, &offset);
  g_assert_cmpint (offset, ==, 20);
  g_assert_cmpmem (g_bytes_get_data (second, NULL), g_bytes_get_size (second), ":\xC3", 2);
  body = g_bytes_get_data (symfonic_recording_get_body (recording), &length);
  g_assert_cmpmem (body, length, "data:\xC3\xC2\xA9\n\n", 10);
}

/* Written and read back, a recording is the same, read by read. */
static void
test_format_round_trip (void)
{
  g_autoptr(SymfonicRecording) recording = symfonic_recording_new_from_data (valid, strlen (valid), NULL);
  g_autofree char *written = NULL;
  g_autoptr(SymfonicRecording) again = NULL;
  g_autofree char *rewritten = NULL;
  gsize length;

  written = symfonic_recording_to_data (recording, &length);
  again = symfonic_recording_new_from_data (written, length, NULL);
  g_assert_nonnull (again);
  rewritten = symfonic_recording_to_data (again, NULL);
  g_assert_cmpstr (written, ==, rewritten);
  g_assert_true (g_bytes_equal (symfonic_recording_get_body (recording), symfonic_recording_get_body (again)));
  for (guint i = 0; i < 3; i++)
    {
      gint64 a, b;
      g_autoptr(GBytes) x = symfonic_recording_get_chunk (recording, i, &a);
      g_autoptr(GBytes) y = symfonic_recording_get_chunk (again, i, &b);

      g_assert_true (g_bytes_equal (x, y));
      g_assert_cmpint (a, ==, b);
    }
  /* the cut character and the NUL-free text as they should be */
  g_assert_nonnull (strstr (written, "\"base64\":\"OsM=\""));
  g_assert_nonnull (strstr (written, "\"text\":\"data\""));
}

static gpointer
take_and_drop (gpointer data)
{
  for (guint i = 0; i < 1000000; i++)
    symfonic_recording_unref (symfonic_recording_ref (data));

  return NULL;
}

/* Every worker plays the same recording: references taken and dropped on
 * many threads at once leave its count as it was. */
static void
test_format_shared (void)
{
  g_autoptr(SymfonicRecording) recording = symfonic_recording_new_from_data (valid, strlen (valid), NULL);
  GThread *threads[4];

  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("refs", take_and_drop, recording);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  g_assert_true (g_atomic_ref_count_compare (&recording->ref_count, 1));
}

/* Other cuts of the same bytes: the body stays, each read arrives with
 * the last of its bytes. */
static void
test_format_rechunk (void)
{
  g_autoptr(SymfonicRecording) recording = symfonic_recording_new_from_data (valid, strlen (valid), NULL);
  gsize cut = 2;
  g_autoptr(SymfonicRecording) split = symfonic_recording_rechunk_at (recording, &cut, 1);
  g_autoptr(SymfonicRecording) whole = symfonic_recording_rechunk_at (recording, NULL, 0);
  g_autoptr(SymfonicRecording) random1 = symfonic_recording_rechunk (recording, 7, 2);
  g_autoptr(SymfonicRecording) random2 = symfonic_recording_rechunk (recording, 7, 2);
  g_autoptr(SymfonicRecording) bytes = symfonic_recording_rechunk (recording, 1, 1);
  g_autoptr(GBytes) first = NULL;
  g_autoptr(GBytes) last = NULL;
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;
  gint64 offset;

  g_assert_cmpuint (symfonic_recording_get_n_chunks (split), ==, 2);
  first = symfonic_recording_get_chunk (split, 0, &offset);
  g_assert_cmpmem (g_bytes_get_data (first, NULL), g_bytes_get_size (first), "da", 2);
  g_assert_cmpint (offset, ==, 10);
  last = symfonic_recording_get_chunk (split, 1, &offset);
  g_assert_cmpint (offset, ==, 20);
  g_assert_cmpuint (symfonic_recording_get_n_chunks (whole), ==, 1);
  g_assert_cmpuint (symfonic_recording_get_n_chunks (bytes), ==, 10);
  g_assert_true (g_bytes_equal (symfonic_recording_get_body (random1), symfonic_recording_get_body (recording)));
  /* the same seed, the same cuts */
  a = symfonic_recording_to_data (random1, NULL);
  b = symfonic_recording_to_data (random2, NULL);
  g_assert_cmpstr (a, ==, b);
}

typedef struct
{
  const char *name;
  const char *data;
  const char *error;
} Invalid;

static const Invalid invalid[] = {
  { "empty", "", "not a recording" },
  { "typed-transcript", "{\"event\":\"TextDeltaEvent\",\"data\":{\"text\":\"x\"}}\n", "not a recording" },
  { "newer", "{\"symfonic_recording\":2,\"source\":\"openai\",\"end\":\"complete\",\"chunks\":0,\"bytes\":0,"
             "\"duration_us\":0}\n", "newer" },
  { "no-source", "{\"symfonic_recording\":1,\"end\":\"complete\",\"chunks\":0,\"bytes\":0,\"duration_us\":0}\n",
    "source" },
  { "bad-end", "{\"symfonic_recording\":1,\"source\":\"openai\",\"end\":\"fine\",\"chunks\":0,\"bytes\":0,"
               "\"duration_us\":0}\n", "end" },
  { "bad-transport", "{\"symfonic_recording\":1,\"source\":\"openai\",\"end\":\"cut\",\"transport\":\"lost\","
                     "\"chunks\":0,\"bytes\":0,\"duration_us\":0}\n", "transport" },
  { "no-counts", "{\"symfonic_recording\":1,\"source\":\"openai\",\"end\":\"cut\",\"duration_us\":0}\n", "chunks" },
  { "cut-short", HEADER (3, 10) "{\"offset_us\":10,\"text\":\"data\"}\n", "cut short" },
  { "more-bytes", HEADER (1, 1) "{\"offset_us\":10,\"text\":\"data\"}\n", "cut short" },
  { "offsets-back", HEADER (2, 8) "{\"offset_us\":10,\"text\":\"data\"}\n{\"offset_us\":9,\"text\":\"data\"}\n",
    "offset_us" },
  { "both-encodings", HEADER (1, 4) "{\"offset_us\":10,\"text\":\"data\",\"base64\":\"ZGF0YQ==\"}\n", "either" },
  { "bad-base64", HEADER (1, 4) "{\"offset_us\":10,\"base64\":\"ZG!0YQ==\"}\n", "base64" },
  { "not-json", HEADER (1, 4) "{offset_us:10}\n", "line 2" },
  { "late-duration", "{\"symfonic_recording\":1,\"source\":\"openai\",\"end\":\"cut\",\"chunks\":1,\"bytes\":1,"
                     "\"duration_us\":5}\n{\"offset_us\":10,\"text\":\"x\"}\n", "duration_us" },
  { "bad-status", "{\"symfonic_recording\":1,\"source\":\"openai\",\"response\":{\"status\":1000},\"end\":\"cut\","
                  "\"chunks\":0,\"bytes\":0,\"duration_us\":0}\n", "status" },
  { "bad-headers", "{\"symfonic_recording\":1,\"source\":\"openai\",\"request\":{\"headers\":[[\"A\"]]},"
                   "\"end\":\"cut\",\"chunks\":0,\"bytes\":0,\"duration_us\":0}\n", "request" },
};

static void
test_format_invalid (gconstpointer data)
{
  const Invalid *row = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SymfonicRecording) recording = symfonic_recording_new_from_data (row->data, strlen (row->data), &error);

  g_assert_null (recording);
  g_assert_error (error, SYMFONIC_ERROR, SYMFONIC_ERROR_CONFIG);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, row->error));
}

/* --- masking ----------------------------------------------------------------- */

typedef struct
{
  const char *name;
  const char *text;
  const char *secret;
} Shape;

static const Shape shapes[] = {
  { "openai-key", "key sk-proj-AbCdEfGhIjKlMnOpQrSt1234 end", "sk-proj-AbCdEfGhIjKlMnOpQrSt1234" },
  { "anthropic-key", "{\"k\":\"sk-ant-api03-AbCdEfGhIjKlMnOpQr\"}", "sk-ant-api03-AbCdEfGhIjKlMnOpQr" },
  { "bearer", "Authorization: Bearer abc.DEF-ghi_123~xyz", "abc.DEF-ghi_123~xyz" },
  { "bearer-lower", "curl -H 'authorization: bearer Zm9vYmFyYmF6cXV4'", "Zm9vYmFyYmF6cXV4" },
  { "basic", "Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==" },
  { "jwt", "token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXN0dWZm!",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXN0dWZm" },
  { "aws", "id AKIAIOSFODNN7EXAMPLE.", "AKIAIOSFODNN7EXAMPLE" },
  { "google", "key=AIzaSyA-1234567890abcdefghijklmnopqrs", "AIzaSyA-1234567890abcdefghijklmnopqrs" },
  { "github", "ghp_0123456789abcdefghijABCDEFGHIJ", "ghp_0123456789abcdefghijABCDEFGHIJ" },
  { "slack", "xoxb-123456789012-abcdefghij", "xoxb-123456789012-abcdefghij" },
};

/* Prose that looks a little like a key stays as it was. */
static const char * const prose[] = {
  "a task-list of sk-ills",
  "the Bearer of bad news",
  "basic facts",
  "eyJ is how base64 of {\" starts",
  "AKIA alone",
  "the ghp_ prefix",
  "xoxb-short",
  "disk-0123456789abcdefghij is no key",
};

static SymfonicRecorder *
recorder_new (const char * const *patterns)
{
  g_autoptr(GFile) folder = g_file_new_for_path (g_get_tmp_dir ());
  g_autoptr(GError) error = NULL;
  SymfonicRecorder *recorder = symfonic_recorder_new (folder, 1.0, 4096, patterns, "openai", "wire", NULL, &error);

  g_assert_no_error (error);

  return recorder;
}

static void
test_mask_shapes (void)
{
  SymfonicRecorder *recorder = recorder_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    {
      g_autofree char *text = g_strdup (shapes[i].text);
      guint found = symfonic_recorder_redact (recorder, text, strlen (text));

      g_test_message ("%s: %s", shapes[i].name, text);
      g_assert_cmpuint (found, ==, 1);
      g_assert_null (strstr (text, shapes[i].secret));
      /* masked in place: every byte keeps its offset */
      g_assert_cmpuint (strlen (text), ==, strlen (shapes[i].text));
    }
  for (guint i = 0; i < G_N_ELEMENTS (prose); i++)
    {
      g_autofree char *text = g_strdup (prose[i]);

      g_assert_cmpuint (symfonic_recorder_redact (recorder, text, strlen (text)), ==, 0);
      g_assert_cmpstr (text, ==, prose[i]);
    }
  symfonic_recorder_unref (recorder);
}

static void
test_mask_literals_and_patterns (void)
{
  const char * const patterns[] = { "ACME-[0-9]{6}", NULL };
  SymfonicRecorder *recorder = recorder_new (patterns);
  g_autofree char *text = g_strdup ("k=opaque/Token+99 then opaque\\/Token+99, ACME-123456 and cookie-jar-4 "
                                    "and ACME-12 and my-session-value");

  symfonic_recorder_add_header_secrets (recorder, "Host: h\r\nX-Api-Key: opaque/Token+99\r\n"
                                        "Cookie: my-session-value\r\nAccept: text/event-stream\r\n");
  symfonic_recorder_add_secret (recorder, "tiny");
  g_assert_cmpuint (symfonic_recorder_redact (recorder, text, strlen (text)), ==, 4);
  g_test_message ("%s", text);
  g_assert_null (strstr (text, "opaque"));
  g_assert_null (strstr (text, "ACME-123456"));
  g_assert_null (strstr (text, "my-session-value"));
  /* what is not a secret stays, a too short one too */
  g_assert_nonnull (strstr (text, "ACME-12 "));
  g_assert_nonnull (strstr (text, "cookie-jar-4"));
  symfonic_recorder_unref (recorder);
}

/* --- a run's reads ------------------------------------------------------------- */

/* The stream hands its reads over in blocks: a recording still has each
 * read as it came, with its bytes and in its order, across full blocks,
 * and with a read larger than a block. */
static void
test_reads (void)
{
  g_autofree char *path = g_dir_make_tmp ("recorder-XXXXXX", NULL);
  g_autoptr(GFile) folder = g_file_new_for_path (path);
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  SymfonicRecorder *recorder = symfonic_recorder_new (folder, 1.0, G_MAXUINT32, NULL, "runtime", "wire", NULL,
                                                      &error);
  g_autoptr(GBytes) request = g_bytes_new_static ("POST / HTTP/1.1\r\n\r\n{}", 21);
  g_autoptr(SymfonicRecording) recording = NULL;
  g_autoptr(GByteArray) sent = g_byte_array_new ();
  g_autofree guint8 *large = g_malloc (40000);
  g_autofree char *name = NULL;
  SymfonicCapture *capture;
  gint64 previous = 0;
  gsize at = 0;
  const guint n_reads = 1001;

  g_assert_no_error (error);
  memset (large, 'L', 40000);
  capture = symfonic_recorder_start (recorder, "reads", request);
  for (guint i = 0; i < n_reads; i++)
    {
      guint8 read[97];
      gsize length = i == 700 ? 40000 : 1 + i % 97;
      const guint8 *data = i == 700 ? large : read;

      for (gsize j = 0; j < MIN (length, sizeof read); j++)
        read[j] = 'a' + (i + j) % 26;
      g_byte_array_append (sent, data, length);
      symfonic_capture_chunk (capture, data, length);
    }
  symfonic_capture_finish (capture, NULL);
  g_assert_true (symfonic_recorder_flush (10 * G_USEC_PER_SEC));

  name = g_build_filename (path, "reads.jsonl", NULL);
  file = g_file_new_for_path (name);
  recording = symfonic_recording_new_from_file (file, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (symfonic_recording_get_n_chunks (recording), ==, n_reads);
  for (guint i = 0; i < n_reads; i++)
    {
      gint64 offset;
      g_autoptr(GBytes) chunk = symfonic_recording_get_chunk (recording, i, &offset);
      gsize length = i == 700 ? 40000 : 1 + i % 97;

      g_assert_cmpmem (g_bytes_get_data (chunk, NULL), g_bytes_get_size (chunk), sent->data + at, length);
      g_assert_cmpint (offset, >=, previous);
      previous = offset;
      at += length;
    }
  g_assert_cmpuint (at, ==, sent->len);
  g_unlink (name);
  g_rmdir (path);
  symfonic_recorder_unref (recorder);
}

/* --- a full queue -------------------------------------------------------------- */

/* A run that finds the queue full is dropped, counted, and its stream
 * never waits; the runs after it record again once there is room. */
static void
test_full_queue (void)
{
  g_autofree char *path = g_dir_make_tmp ("recorder-XXXXXX", NULL);
  g_autoptr(GFile) folder = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  SymfonicRecorder *recorder = symfonic_recorder_new (folder, 1.0, G_MAXUINT32, NULL, "runtime", "wire", NULL,
                                                      &error);
  g_autoptr(GBytes) request = g_bytes_new_static ("POST / HTTP/1.1\r\n\r\n{}", 21);
  guint64 dropped = symfonic_recorder_count_dropped ();
  guint64 written = symfonic_recorder_count_written ();
  SymfonicCapture *capture;
  g_autofree char *name = NULL;
  guint8 read[4096];
  gint64 start;

  g_assert_no_error (error);
  memset (read, 'x', sizeof read);
  symfonic_recorder_hold_writer (TRUE);
  capture = symfonic_recorder_start (recorder, "full", request);
  start = g_get_monotonic_time ();
  /* 80 MiB while the writer takes nothing: more than the queue holds */
  for (guint i = 0; i < 20000; i++)
    symfonic_capture_chunk (capture, read, sizeof read);
  /* never a wait: twenty thousand reads in well under a second */
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
  symfonic_capture_finish (capture, NULL);
  g_assert_cmpuint (symfonic_recorder_count_dropped (), ==, dropped + 1);
  symfonic_recorder_hold_writer (FALSE);
  /* the queue empties; the next run has room */
  g_assert_true (symfonic_recorder_flush (10 * G_USEC_PER_SEC));

  capture = symfonic_recorder_start (recorder, "after", request);
  symfonic_capture_chunk (capture, (const guint8 *) "data: x\n\n", 9);
  symfonic_capture_finish (capture, NULL);
  g_assert_true (symfonic_recorder_flush (10 * G_USEC_PER_SEC));
  g_assert_cmpuint (symfonic_recorder_count_written (), ==, written + 1);
  name = g_build_filename (path, "full.jsonl", NULL);
  g_assert_false (g_file_test (name, G_FILE_TEST_EXISTS));
  g_free (name);
  name = g_build_filename (path, "after.jsonl", NULL);
  g_assert_true (g_file_test (name, G_FILE_TEST_EXISTS));
  g_unlink (name);
  g_rmdir (path);
  symfonic_recorder_unref (recorder);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/recorder/format/read", test_format_read);
  g_test_add_func ("/recorder/format/round-trip", test_format_round_trip);
  g_test_add_func ("/recorder/format/rechunk", test_format_rechunk);
  g_test_add_func ("/recorder/format/shared", test_format_shared);
  for (guint i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      g_autofree char *path = g_strdup_printf ("/recorder/format/invalid/%s", invalid[i].name);

      g_test_add_data_func (path, &invalid[i], test_format_invalid);
    }
  g_test_add_func ("/recorder/mask/shapes", test_mask_shapes);
  g_test_add_func ("/recorder/mask/literals-and-patterns", test_mask_literals_and_patterns);
  g_test_add_func ("/recorder/reads", test_reads);
  g_test_add_func ("/recorder/full-queue", test_full_queue);

  return g_test_run ();
}
