/*
 * exec_bench: time from "about to execve" to the target's main(), for a
 * direct execve of the target and for the same target behind
 * `gitlab-ctl exec --envdir`. Built and run by bench/exec.
 *
 *   exec_bench target N ENVDIR -- GITLAB-CTL-ARGV...   (driver)
 *   exec_bench --target                                 (the target itself)
 *
 * The target prints CLOCK_MONOTONIC at the start of main() on stdout (a
 * pipe); the driver takes its own stamp just before fork+execve.
 */
#define _GNU_SOURCE
#include <err.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/*
 * One spawn: returns start-to-main latency in ns; *total gets start-to-reaped
 * and *cpu the child's user+system CPU time (ns), which unlike wall time
 * hardly moves when the machine is busy with other work.
 */
static long long spawn(char **argv, char **envp, long long *total, long long *cpu)
{
	int p[2];
	if (pipe(p) == -1)
		err(1, "pipe");
	long long t0 = now_ns();
	pid_t pid = fork();
	if (pid == -1)
		err(1, "fork");
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	close(p[1]);
	char buf[64];
	ssize_t n = read(p[0], buf, sizeof buf - 1);
	close(p[0]);
	int status;
	struct rusage ru;
	wait4(pid, &status, 0, &ru);
	*total = now_ns() - t0;
	*cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
	if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		errx(1, "%s failed (status %d)", argv[0], status);
	buf[n] = '\0';
	return buf[0] >= '0' && buf[0] <= '9' ? strtoll(buf, NULL, 10) - t0 : 0;
}

struct series {
	const char *label;
	char **argv, **envp;
	bool stamps; /* the program prints its start-of-main stamp */
	long long *lat, *tot, *cpu;
};

/*
 * All series interleaved, in rotating order (A B C, B C A, ...): load that
 * comes and goes on a shared machine then slows every series alike.
 */
static void run_all(struct series *s, int ns, int n)
{
	for (int k = 0; k < ns; k++) {
		s[k].lat = calloc((size_t)n, sizeof(long long));
		s[k].tot = calloc((size_t)n, sizeof(long long));
		s[k].cpu = calloc((size_t)n, sizeof(long long));
		if (s[k].lat == NULL || s[k].tot == NULL || s[k].cpu == NULL)
			err(1, "calloc");
		for (int i = 0; i < 20; i++) /* warm the page cache */
			spawn(s[k].argv, s[k].envp, &s[k].tot[0], &s[k].cpu[0]);
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < ns; j++) {
			struct series *c = &s[(i + j) % ns];
			c->lat[i] = spawn(c->argv, c->envp, &c->tot[i], &c->cpu[i]);
		}
}

static double median_us(long long *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_ll);
	return (double)v[n / 2] / 1000.0;
}

static void print_series(struct series *c, int n)
{
	qsort(c->lat, (size_t)n, sizeof *c->lat, cmp_ll);
	qsort(c->tot, (size_t)n, sizeof *c->tot, cmp_ll);
	if (c->stamps)
		printf("%-34s %10.1f %10.1f %10.1f", c->label, (double)c->lat[n / 2] / 1000.0,
		       (double)c->lat[n * 9 / 10] / 1000.0, (double)c->lat[n * 99 / 100] / 1000.0);
	else
		printf("%-34s %10s %10s %10s", c->label, "-", "-", "-");
	printf(" %12.1f %10.1f\n", (double)c->tot[n / 2] / 1000.0, median_us(c->cpu, n));
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--target") == 0) {
		long long t = now_ns(); /* first thing in main */
		printf("%lld\n", t);
		return 0;
	}
	if (argc < 6 || strcmp(argv[4], "--") != 0)
		errx(2, "usage: exec_bench TARGET N ENVFILE -- GITLAB-CTL-ARGV...");
	const char *target = argv[1];
	int n = atoi(argv[2]);
	if (n < 10)
		errx(2, "N must be >= 10");

	/* The direct exec gets the same environment the envdir gives. */
	char *envp[64];
	int ne = 0;
	FILE *fp = fopen(argv[3], "r");
	if (fp == NULL)
		err(1, "%s", argv[3]);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while (ne < 63 && (len = getline(&line, &cap, fp)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		envp[ne++] = strdup(line);
	}
	envp[ne] = NULL;
	fclose(fp);

	char *direct[] = {(char *)target, "--target", NULL};
	char *none[] = {NULL};
	/* What merely starting the gitlab-ctl binary costs (ld.so, libbsd), doing nothing. */
	char *version[] = {argv[5], "--version", NULL};
	struct series s[3] = {
	    {.label = "direct execve", .argv = direct, .envp = envp, .stamps = true},
	    {.label = "gitlab-ctl exec --envdir", .argv = &argv[5], .envp = none, .stamps = true},
	    {.label = "gitlab-ctl --version (baseline)", .argv = version, .envp = none},
	};
	run_all(s, 3, n);
	printf("%-34s %10s %10s %10s %12s %10s\n", "start -> target main (us)", "median", "p90",
	       "p99", "spawn+exit", "cpu");
	for (int k = 0; k < 3; k++)
		print_series(&s[k], n);
	double d = (double)s[0].lat[n / 2] / 1000.0, w = (double)s[1].lat[n / 2] / 1000.0;
	double dc = (double)s[0].cpu[n / 2] / 1000.0, wc = (double)s[1].cpu[n / 2] / 1000.0;
	double vc = (double)s[2].cpu[n / 2] / 1000.0;
	printf(
	    "\nN=%d interleaved, medians. gitlab-ctl exec adds %.1f us wall (ratio %.2fx) and "
	    "%.1f us CPU (ratio %.2fx);\njust starting gitlab-ctl (--version) costs %.1f us CPU.\n",
	    n, w - d, w / d, wc - dc, wc / dc, vc);
	return 0;
}
