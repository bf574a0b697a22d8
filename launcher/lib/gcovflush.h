/*
 * gcovflush: in a coverage build (GITLAB_CTL_COVERAGE), a process that
 * replaces itself with execve loses the counters it gathered since fork.
 * A forked child calls gcov_child() first (its counters are the parent's,
 * which the parent writes itself) and gcov_before_exec() right before execve.
 * Both are empty in every other build.
 */
#ifndef GITLAB_CTL_GCOVFLUSH_H
#define GITLAB_CTL_GCOVFLUSH_H

#ifdef GITLAB_CTL_COVERAGE
void __gcov_dump(void);
void __gcov_reset(void);
static inline void gcov_child(void)
{
	__gcov_reset();
}
static inline void gcov_before_exec(void)
{
	__gcov_dump();
	__gcov_reset(); /* if execve fails, exit writes only what came after */
}
#else
static inline void gcov_child(void)
{
}
static inline void gcov_before_exec(void)
{
}
#endif

#endif
