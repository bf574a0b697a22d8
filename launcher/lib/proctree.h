/*
 * proctree: processes by parentage and process group, read from
 * /proc/PID/stat, never by name. Used to find what is left of a service
 * tree (orphans adopted by the runsvdir wrapper, a service's process group),
 * what a service's tree holds (inspect's memory budget), and to make sure a
 * group id still means the group that was seen.
 */
#ifndef GITLAB_CTL_PROCTREE_H
#define GITLAB_CTL_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct pstat {
	pid_t pid, ppid, pgrp, sid;
	char state;               /* R, S, D, Z (zombie), X (dead), ... */
	unsigned long long start; /* clock ticks after boot: with pid, names a process */
	char comm[32];
};

/* Fields of /proc/PID/stat. 0, or -1 with errno (ENOENT/ESRCH when gone). */
int proc_stat(pid_t pid, struct pstat *ps);

/* Parse the text of a stat file (exposed for tests). 0, or -1 (EBADMSG). */
int proc_stat_parse(const char *text, struct pstat *ps);

/*
 * Is pgrp still the process group whose leader started at leader_start?
 * True when the leader still runs with that start time, or when no process
 * has pid pgrp (a group id is only reused by a new process with that pid
 * becoming a leader, which would show up here). 1, 0.
 */
int proc_group_is(pid_t pgrp, unsigned long long leader_start);

/* Direct children of pid (from /proc/PID/task/PID/children). Count, or -1. */
int proc_children(pid_t pid, pid_t *out, size_t cap);

/*
 * The processes below `root`, as a malloc'd list in *out (*n): root's children other than
 * skip[0..nskip) and every descendant of those, never root or us. With PROC_GROUPS (what is
 * left of a service tree to stop): also every other member of their process groups, never
 * our own group. With PROC_ORPHANS, only children that are orphans adopted by root as
 * subreaper: a child whose process group leader is gone or is itself such a child (a
 * daemon's double-forked child of a live service is not one). 0, or -1 with errno.
 */
enum { PROC_GROUPS = 1, PROC_ORPHANS = 2 };
int proc_descendants(pid_t root, const pid_t *skip, size_t nskip, int how, struct pstat **out,
                     size_t *n);

#endif
