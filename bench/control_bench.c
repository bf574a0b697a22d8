/*
 * control_bench: time two commands against each other, interleaved (A B A B
 * ...), so that a machine whose load drifts during the run (shared CI
 * runners) slows both alike. For each run: wall time from fork to reaped
 * exit, the child's CPU time (user + system) and page faults (minor + major),
 * from wait4. Prints median, mean and p90 of the wall time, the means of CPU
 * time and faults, and the ratios A/B. Built and run by bench/control.
 *
 *   control_bench N NAME-A NAME-B ARGV-A... -- ARGV-B...
 *
 * stdout and stderr of the commands go to /dev/null.
 */
#define _GNU_SOURCE
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct sample {
	double wall, cpu; /* milliseconds */
	double faults;
};

static double ms(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static struct sample run(char **argv, int devnull)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid == -1)
		err(1, "fork");
	if (pid == 0) {
		dup2(devnull, 1);
		dup2(devnull, 2);
		execve(argv[0], argv, environ);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		err(1, "wait4");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		errx(1, "cannot run %s", argv[0]);
	struct sample s = {ms(&t0, &t1), 0, (double)(ru.ru_minflt + ru.ru_majflt)};
	s.cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	        (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return s;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct stats {
	double median, mean, p90;
};

static struct stats stats(double *v, size_t n)
{
	struct stats s = {0, 0, 0};
	qsort(v, n, sizeof *v, cmp);
	for (size_t i = 0; i < n; i++)
		s.mean += v[i];
	s.mean /= (double)n;
	s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s.p90 = v[(size_t)((double)(n - 1) * 0.9)];
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 6)
		errx(2, "usage: control_bench N NAME-A NAME-B ARGV-A... -- ARGV-B...");
	char *end;
	long long n = strtoll(argv[1], &end, 10);
	if (*argv[1] == '\0' || *end != '\0' || n < 1 || n > 1000000)
		errx(2, "N: not a number from 1 to 1000000: %s", argv[1]);
	const char *name[2] = {argv[2], argv[3]};
	char **cmd[2] = {&argv[4], NULL};
	for (int i = 4; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			argv[i] = NULL;
			cmd[1] = &argv[i + 1];
		}
	if (cmd[1] == NULL || cmd[1][0] == NULL)
		errx(2, "missing -- ARGV-B");
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull == -1)
		err(1, "/dev/null");

	double *wall[2], *cpu[2], *flt[2];
	for (int k = 0; k < 2; k++) {
		wall[k] = calloc((size_t)n, sizeof(double));
		cpu[k] = calloc((size_t)n, sizeof(double));
		flt[k] = calloc((size_t)n, sizeof(double));
		if (wall[k] == NULL || cpu[k] == NULL || flt[k] == NULL)
			err(1, "calloc");
		for (int w = 0; w < 20; w++) /* warm the page cache and dentries */
			run(cmd[k], devnull);
	}
	for (long long i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			/* alternate which goes first, so neither always follows the other */
			int which = (int)((i & 1) ^ k);
			struct sample s = run(cmd[which], devnull);
			wall[which][i] = s.wall;
			cpu[which][i] = s.cpu;
			flt[which][i] = s.faults;
		}
	struct stats w[2], c[2], f[2];
	for (int k = 0; k < 2; k++) {
		w[k] = stats(wall[k], (size_t)n);
		c[k] = stats(cpu[k], (size_t)n);
		f[k] = stats(flt[k], (size_t)n);
	}
	printf("%-20s %10s %10s %10s %12s %8s\n", "command (ms/call)", "median", "mean", "p90",
	       "cpu mean", "faults");
	for (int k = 0; k < 2; k++)
		printf("%-20s %10.3f %10.3f %10.3f %12.3f %8.1f\n", name[k], w[k].median, w[k].mean,
		       w[k].p90, c[k].mean, f[k].mean);
	printf("%-20s %10.2f %10.2f %10.2f %12.2f %8.2f\n", "ratio", w[0].median / w[1].median,
	       w[0].mean / w[1].mean, w[0].p90 / w[1].p90, c[0].mean / c[1].mean,
	       f[0].mean / f[1].mean);
	return 0;
}
