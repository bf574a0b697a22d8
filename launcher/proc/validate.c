/* Validators run on rendered bytes before publishing (see validate.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fdio.h"
#include "lib/gcovflush.h"
#include "lib/reap.h"
#include "proc/validate.h"

static char *const run_env[] = {"PATH=/usr/bin:/bin", "HOME=/", "LANG=C.UTF-8", NULL};

struct ids {
	bool drop;
	uid_t uid;
	gid_t gid;
};

/* The account as root (nobody when it does not exist yet, e.g. in a dry run). */
static int lookup(const char *user, const char *group, struct ids *id)
{
	id->drop = geteuid() == 0;
	if (!id->drop)
		return 0;
	const struct passwd *pw = user ? getpwnam(user) : NULL;
	const struct group *gr = group ? getgrnam(group) : NULL;
	if (pw == NULL || gr == NULL) {
		pw = getpwnam("nobody");
		gr = getgrnam("nogroup");
	}
	if (pw == NULL || gr == NULL || pw->pw_uid == 0) {
		errno = ESRCH;
		return -1;
	}
	id->uid = pw->pw_uid;
	id->gid = gr->gr_gid;
	return 0;
}

/* The bytes as a sealed memory file at offset 0. */
static int memfile(const char *data, size_t len)
{
	int fd = memfd_create("gitlab-ctl-validate", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1)
		return -1;
	if (fdio_write_all(fd, data, len) == -1 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) ==
	        -1 ||
	    lseek(fd, 0, SEEK_SET) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* In the child: only async-signal-safe calls until execve. */
static void child(char *const *argv, int in, int out, const struct ids *id)
{
	gcov_child();
	if (setsid() == -1 || dup2(in, STDIN_FILENO) == -1 || dup2(out, STDOUT_FILENO) == -1 ||
	    dup2(out, STDERR_FILENO) == -1 || chdir("/") == -1)
		_exit(127);
	closefrom(3);
	if (id->drop &&
	    (setgroups(1, &id->gid) == -1 || setgid(id->gid) == -1 || setuid(id->uid) == -1 ||
	     getuid() != id->uid || geteuid() != id->uid || setuid(0) != -1))
		_exit(127);
	gcov_before_exec();
	execve(argv[0], argv, run_env);
	_exit(127);
}

/* Bytes a terminal would act on become '?'; newlines and tabs stay. */
static void add_filtered(struct buf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n && out->len < VALIDATE_OUT_MAX; i++) {
		unsigned char c = (unsigned char)s[i];
		bool ctl = (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
		buf_addc(out, ctl ? '?' : (char)c);
	}
}

/* Read until EOF or the deadline: 0 at EOF, -1 at the deadline. */
static int drain(int fd, long deadline, struct buf *out)
{
	char buf[4096];
	for (;;) {
		if (ms_until(deadline) == 0 || poll_until(fd, POLLIN, deadline) != 1)
			return -1;
		ssize_t n = fdio_read(fd, buf, sizeof buf);
		if (n <= 0)
			return 0;
		add_filtered(out, buf, (size_t)n);
	}
}

int validate_start(char *const *argv, const char *data, size_t len, const char *user,
                   const char *group, long deadline, struct validate_job *j)
{
	struct ids id;
	int fds[2];
	if (argv[0] == NULL || argv[0][0] != '/') {
		errno = EINVAL;
		return -1;
	}
	if (lookup(user, group, &id) == -1)
		return -1;
	int in = memfile(data, len);
	if (in == -1)
		return -1;
	if (pipe2(fds, O_CLOEXEC) == -1) {
		close(in);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0)
		child(argv, in, fds[1], &id);
	int saved = errno;
	close(in);
	close(fds[1]);
	if (pid == -1) {
		close(fds[0]);
		errno = saved;
		return -1;
	}
	j->pid = pid;
	j->out = fds[0];
	j->deadline = deadline;
	return 0;
}

int validate_finish(struct validate_job *j, struct buf *out)
{
	(void)drain(j->out, j->deadline, out); /* its own session: reap_until stops all of it */
	close(j->out);
	return reap_until(j->pid, j->deadline, REAP_GRACE_MS);
}

int validate_run(char *const *argv, const char *data, size_t len, const char *user,
                 const char *group, long deadline, struct buf *out)
{
	struct validate_job j;
	if (validate_start(argv, data, len, user, group, deadline, &j) == -1)
		return -1;
	return validate_finish(&j, out);
}
