/*
 * child.h: run one step of a unit test in a forked child, for code that ends
 * the process (lib/alloc's exit 111) or changes what the process is (its
 * credentials, its mount namespace, its limits). Include after <cmocka.h>.
 */
#ifndef GITLAB_CTL_TEST_CHILD_H
#define GITLAB_CTL_TEST_CHILD_H

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * fn(arg) in a child whose stderr is captured; its return value is the
 * child's exit status (exit(), not _exit(), so a coverage build writes its
 * counters). Returns the status of a child that exited (one killed by a
 * signal fails the test); what it wrote on stderr is in err, NUL-terminated
 * and cut to len - 1 bytes, when err is not NULL.
 */
static int in_child(int (*fn)(void *), void *arg, char *err, size_t len)
{
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		dup2(pfd[1], STDERR_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		exit(fn(arg));
	}
	close(pfd[1]);
	size_t got = 0;
	char chunk[512];
	ssize_t n;
	/* Read to EOF, keeping what fits: a child blocked on a full pipe never exits. */
	while ((n = read(pfd[0], chunk, sizeof chunk)) > 0)
		for (ssize_t i = 0; i < n && err != NULL && got + 1 < len; i++)
			err[got++] = chunk[i];
	if (err != NULL && len > 0)
		err[got] = '\0';
	close(pfd[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

#endif
