/*
 * For t_safety_names_wraplog.sh: leave N orphans behind, the way a service account can.
 * Each batch is a child that starts a session, forks up to 100 processes that wait for a
 * signal, and exits: they are orphans (their group's leader is gone), adopted by the nearest
 * subreaper. A pause between batches keeps a few hundred alive at a time. Then DONE is
 * created and this process waits to be stopped.
 *   orphans N DONE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define BATCH 100

static void batch(int n)
{
	pid_t p = fork();
	if (p == -1) {
		perror("fork");
		exit(1);
	}
	if (p == 0) {
		setsid();
		for (int i = 0; i < n; i++)
			if (fork() == 0) {
				pause();
				_exit(0);
			}
		_exit(0);
	}
	waitpid(p, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int n = atoi(argv[1]);
	for (int made = 0; made < n; made += BATCH) {
		batch(n - made < BATCH ? n - made : BATCH);
		usleep(300 * 1000);
	}
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd == -1 || close(fd) == -1)
		return 1;
	for (;;)
		pause();
}
