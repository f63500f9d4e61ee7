#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The library acts on nothing that belongs to its whole process.

Python and gjs programs load the library too: their heap, environment,
limits, image and log writer are theirs. Calls that change those for the whole process
belong to the gateway's own binary, which the library tells what it needs
to know (SymfonicServer::burst-closed, say). This lists the functions the
shared library takes from others and fails on any such call.
"""
import subprocess
import sys

NM, LIBRARY = sys.argv[1:3]

# what acts on the whole process: its heap, environment, limits, image
PROCESS_WIDE = {
    'malloc_trim', 'mallopt', 'malloc_stats',
    'setenv', 'unsetenv', 'putenv', 'clearenv', 'g_setenv', 'g_unsetenv',
    'setrlimit', 'setrlimit64', 'prlimit', 'prlimit64',
    'execv', 'execve', 'execvp', 'execvpe', 'execl', 'execle', 'execlp', 'fexecve',
    # where the process's log lines go, and which are fatal: the library
    # logs, its host writes
    'g_log_set_writer_func', 'g_log_set_default_handler', 'g_log_set_handler', 'g_log_set_handler_full',
    'g_log_set_always_fatal', 'g_log_set_fatal_mask', 'g_log_set_debug_enabled',
    'g_set_print_handler', 'g_set_printerr_handler',
}


def main():
    listed = subprocess.run([NM, '--dynamic', '--undefined-only', LIBRARY],
                            check=True, capture_output=True, text=True).stdout
    used = {line.split()[-1].split('@')[0] for line in listed.splitlines() if line.strip()}
    found = sorted(used & PROCESS_WIDE)
    for name in found:
        print(f'{LIBRARY} calls {name}(), which acts on its whole host process')
    return 1 if found else 0


sys.exit(main())
