#!/usr/bin/env python3
"""CPU ticks and resident memory of a process and of the sessions its direct children lead (a web widget's page
runs in a session of its own, with WebKit's processes under it). Run as a script it prints one number: the CPU
ticks used so far by every process of PID's session and of those sessions."""
import os, sys


def processes():
    """pid -> (ppid, session, CPU ticks, resident KiB) for every process /proc shows."""
    out = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            s = open(f"/proc/{e}/stat").read()
            rss = next((int(l.split()[1]) for l in open(f"/proc/{e}/status") if l.startswith("VmRSS:")), 0)
        except OSError:
            continue
        f = s[s.rindex(")") + 2:].split()
        # After "pid (comm) ": state ppid pgrp session ... utime(14) stime(15) (fields 3.. of the line).
        out[int(e)] = (int(f[1]), int(f[3]), int(f[11]) + int(f[12]), rss)
    return out


def name(pid):
    """A process's command name (WPEWebProcess, pipcompose, …), or "" once it is gone."""
    try:
        return open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return ""


def child_sessions(pid, table):
    """The sessions PID's direct children lead."""
    return {p for p, (ppid, sid, _, _) in table.items() if ppid == pid and sid == p}


if __name__ == "__main__":
    pid = int(sys.argv[1])
    table = processes()
    sessions = {pid} | child_sessions(pid, table)
    print(sum(t for _, sid, t, _ in table.values() if sid in sessions))
