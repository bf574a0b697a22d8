#!/usr/bin/env python3
"""stracecount.py PREFIX TOP [EXCLUDE]: system calls and spawned children of the process tree
under pid TOP, from `strace -f -ff -o PREFIX` (one PREFIX.PID file per process), leaving out
the subtree of pid EXCLUDE (the runsvdir wrapper a first reconfigure starts: runit's and the
services' own calls are not reconfigure's). Prints "SYSCALLS CHILDREN", children being the
processes that made a successful execve (TOP's own exec not counted)."""
import glob
import re
import sys

prefix, top = sys.argv[1], int(sys.argv[2])
exclude = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else -1
call = re.compile(r"^([a-z_0-9]+)\(")
fork = re.compile(r"^(clone3?|fork|vfork)\(.*= (\d+)$")
kids, calls, execs = {}, {}, {}
for path in glob.glob(prefix + ".*"):
    pid = int(path.rsplit(".", 1)[1])
    n, ex = 0, 0
    with open(path, errors="replace") as f:
        for line in f:
            m = call.match(line)
            if m is None:
                continue  # signals, exits, detaches
            n += 1
            if m.group(1) == "execve" and not re.search(r"= -1 ", line):
                ex += 1
            fm = fork.match(line.rstrip())
            if fm:
                kids.setdefault(pid, []).append(int(fm.group(2)))
    calls[pid], execs[pid] = n, ex
total, children, todo = 0, 0, [top]
while todo:
    pid = todo.pop()
    if pid == exclude:
        continue
    total += calls.get(pid, 0)
    if pid != top and execs.get(pid, 0) > 0:
        children += 1
    todo.extend(kids.get(pid, []))
print(total, children)
