#!/usr/bin/env python3
"""CPU ticks used so far by every process of PID's session and of the sessions its direct children lead (a web
widget's page runs in a session of its own, with WebKit's processes under it). Prints one number: ticks."""
import os, sys

pid = int(sys.argv[1])
stats = {}
for e in os.listdir("/proc"):
    if not e.isdigit():
        continue
    try:
        s = open(f"/proc/{e}/stat").read()
    except OSError:
        continue
    f = s[s.rindex(")") + 2:].split()
    # After "pid (comm) ": state ppid pgrp session ... utime(14) stime(15) cutime cstime (fields 3.. of the line).
    stats[int(e)] = (int(f[1]), int(f[3]), int(f[11]) + int(f[12]))
sessions = {pid} | {p for p, (ppid, sid, _) in stats.items() if ppid == pid and sid == p}
print(sum(t for p, (_, sid, t) in stats.items() if sid in sessions))
