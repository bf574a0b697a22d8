#!/usr/bin/env python3
"""timeone.py OUT CMD...: run CMD once, its stdout and stderr into OUT; print "WALL_MS CPU_MS"
(wall clock, and user plus system time of CMD and the children it waited for, from wait4:
microseconds, where time(1) prints hundredths of a second) and exit with CMD's status."""
import os
import sys
import time

out, argv = sys.argv[1], sys.argv[2:]
fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = (time.monotonic() - t0) * 1000
print("%.1f %.1f" % (wall, (ru.ru_utime + ru.ru_stime) * 1000))
sys.exit(os.waitstatus_to_exitcode(status))
