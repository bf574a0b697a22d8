/* A program on a pty of its own, relayed (see ptyrelay.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/buf.h"
#include "lib/ptyrelay.h"
#include "lib/reap.h"
#include "lib/clock.h"
#include "lib/safetext.h"

struct relay {
	int master;
	int in;  /* our terminal, read for keystrokes; -1: stdin is not one */
	int out; /* where the pty's output goes: stdout or stderr if a terminal; -1: nowhere */
	int sig; /* signalfd */
	pid_t child;
	char carry[4]; /* an unfinished UTF-8 sequence from the last read */
	size_t ncarry;
	/*
	 * Keystrokes the pty has no room for yet: one read's worth, and our terminal is not read
	 * until it is gone, so typing the command never reads costs a bounded buffer, never a
	 * blocked relay (the kernel holds the rest; it is flushed when the command ends).
	 */
	char pend[4096];
	size_t npend, off;
};

static const int relayed_signals[] = {SIGCHLD, SIGWINCH, SIGHUP, SIGINT, SIGQUIT, SIGTERM};

bool ptyrelay_wanted(void)
{
	return isatty(STDIN_FILENO) || isatty(STDOUT_FILENO) || isatty(STDERR_FILENO);
}

/* The first of fds 0-2 that is a terminal: its settings and size become the pty's. */
static int our_terminal(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd))
			return fd;
	return -1;
}

/* In the child: lead a new session on the pty, on the fds that were terminals. */
static void become_pty_child(int master, int slave, const sigset_t *mask)
{
	close(master);
	if (setsid() == -1 || ioctl(slave, TIOCSCTTY, 0) == -1)
		_exit(126);
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd) && dup2(slave, fd) == -1)
			_exit(126);
	if (slave > 2)
		close(slave);
	(void)sigprocmask(SIG_SETMASK, mask, NULL);
}

/* The pty's output, escaped, to our terminal. 0 while it may say more, 1 at its end. */
static int from_pty(struct relay *r)
{
	char buf[4096 + sizeof r->carry];
	memcpy(buf, r->carry, r->ncarry);
	ssize_t n = fdio_read(r->master, buf + r->ncarry, sizeof buf - sizeof r->carry);
	if (n == -1 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		return 1; /* EIO: every slave fd is closed */
	size_t len = r->ncarry + (size_t)n;
	struct buf esc;
	buf_init(&esc);
	size_t used = safetext_add(&esc, buf, len, SAFETEXT_NL | SAFETEXT_TTY | SAFETEXT_MORE);
	r->ncarry = len - used;
	memcpy(r->carry, buf + used, r->ncarry);
	if (r->out != -1 && esc.len > 0)
		(void)fdio_write_all(r->out, esc.p, esc.len);
	buf_free(&esc);
	return 0;
}

/* What is pending to the pty, as far as it takes it now (the master is non-blocking). */
static void flush_pending(struct relay *r)
{
	while (r->off < r->npend) {
		ssize_t n = write(r->master, r->pend + r->off, r->npend - r->off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) { /* the pty is gone: what was typed for it goes nowhere */
			r->in = -1;
			break;
		}
		r->off += (size_t)n;
	}
	r->npend = r->off = 0;
}

/* Keystrokes to the pty; at EOF of our terminal, no more reading it. */
static void to_pty(struct relay *r)
{
	ssize_t n = fdio_read(r->in, r->pend, sizeof r->pend);
	if (n == -1 && errno == EAGAIN)
		return;
	if (n <= 0) {
		r->in = -1;
		return;
	}
	r->npend = (size_t)n;
	r->off = 0;
	flush_pending(r);
}

/* One signal: a size change, the child's end, or one to pass on. 1 once the child is reaped. */
static int on_signal(struct relay *r, int *status)
{
	struct signalfd_siginfo si;
	if (read(r->sig, &si, sizeof si) != (ssize_t)sizeof si)
		return 0;
	if (si.ssi_signo == SIGWINCH) {
		struct winsize ws;
		int t = our_terminal();
		if (t != -1 && ioctl(t, TIOCGWINSZ, &ws) == 0)
			(void)ioctl(r->master, TIOCSWINSZ, &ws);
		return 0;
	}
	if (si.ssi_signo != SIGCHLD) {
		(void)kill(r->child, (int)si.ssi_signo);
		return 0;
	}
	/* Any child: as a container's PID 1 the orphans are ours to reap too. */
	int st, done = 0;
	pid_t w;
	while ((w = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
		if (w != r->child)
			continue;
		if (WIFSTOPPED(st)) {
			/* ^Z on its pty: nobody in there can resume it, so it goes on. */
			(void)kill(r->child, SIGCONT);
			continue;
		}
		*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		done = 1;
	}
	return done;
}

/* Until the child is reaped; then whatever the pty still holds. */
static void relay(struct relay *r, int *status)
{
	bool pty_open = true, reaped = false;
	while (!reaped) {
		bool pending = r->npend > 0;
		struct pollfd p[3] = {
		    {.fd = r->sig, .events = POLLIN},
		    {.fd = pty_open ? r->master : -1, .events = POLLIN | (pending ? POLLOUT : 0)},
		    {.fd = pending ? -1 : r->in, .events = POLLIN}};
		if (poll_fds_until(p, 3, 0) == -1)
			break;
		if ((p[1].revents & POLLOUT) != 0)
			flush_pending(r);
		if ((p[1].revents & ~POLLOUT) != 0 && from_pty(r) == 1) {
			pty_open = false;
			r->npend = r->off = 0;
		}
		if (p[2].revents != 0)
			to_pty(r);
		if (p[0].revents != 0 && on_signal(r, status) == 1)
			reaped = true;
	}
	if (!reaped) { /* poll failed: no more relaying, but the child is still ours to reap */
		int st = reap_until(r->child, 0, 0);
		if (st != -1)
			*status = st;
	}
	/* A daemon the child left may keep the pty open: take only what is there now. */
	int fl = fcntl(r->master, F_GETFL);
	if (pty_open && fl != -1 && fcntl(r->master, F_SETFL, fl | O_NONBLOCK) == 0)
		for (int i = 0; i < 256; i++) {
			struct pollfd p = {.fd = r->master, .events = POLLIN};
			if (poll(&p, 1, 0) != 1 || from_pty(r) == 1)
				break;
		}
	if (r->ncarry > 0 && r->out != -1) {
		struct buf esc;
		buf_init(&esc);
		safetext_add(&esc, r->carry, r->ncarry, 0);
		(void)fdio_write_all(r->out, esc.p, esc.len);
		buf_free(&esc);
	}
}

/* Keystrokes go to the pty as they are typed (^C included): our terminal in raw mode. */
static bool make_raw(int fd, struct termios *saved)
{
	struct termios raw;
	if (tcgetattr(fd, saved) == -1)
		return false;
	raw = *saved;
	cfmakeraw(&raw);
	return tcsetattr(fd, TCSADRAIN, &raw) == 0;
}

pid_t ptyrelay_fork(int *status)
{
	int term = our_terminal(), master, slave;
	struct termios tio, saved;
	struct winsize ws;
	if (term == -1) {
		errno = ENOTTY;
		return -1;
	}
	bool have_tio = tcgetattr(term, &tio) == 0, have_ws = ioctl(term, TIOCGWINSZ, &ws) == 0;
	/* Our terminal stays cooked when stdin is not one: it adds the CR before LF itself. */
	if (have_tio && !isatty(STDIN_FILENO))
		tio.c_oflag &= ~(tcflag_t)OPOST;
	if (openpty(&master, &slave, NULL, have_tio ? &tio : NULL, have_ws ? &ws : NULL) == -1)
		return -1;
	(void)fcntl(master, F_SETFD, FD_CLOEXEC);
	(void)fcntl(slave, F_SETFD, FD_CLOEXEC);
	int mfl = fcntl(master, F_GETFL);
	if (mfl == -1 || fcntl(master, F_SETFL, mfl | O_NONBLOCK) == -1) {
		close(master);
		close(slave);
		return -1;
	}
	sigset_t mask, old;
	sigemptyset(&mask);
	sigemptyset(&old);
	for (size_t i = 0; i < sizeof relayed_signals / sizeof *relayed_signals; i++)
		sigaddset(&mask, relayed_signals[i]);
	/* An inherited SIG_IGN would reap the child unseen: no SIGCHLD, a relay for ever. */
	struct sigaction dfl, chld;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	(void)sigaction(SIGCHLD, &dfl, &chld);
	int sfd = -1;
	pid_t pid = -1;
	if (sigprocmask(SIG_BLOCK, &mask, &old) == 0 &&
	    (sfd = signalfd(-1, &mask, SFD_CLOEXEC)) != -1)
		pid = fork();
	if (pid == 0) {
		close(sfd);
		become_pty_child(master, slave, &old);
		return 0;
	}
	int saved_errno = errno;
	close(slave);
	if (pid == -1) {
		if (sfd != -1)
			close(sfd);
		close(master);
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		(void)sigaction(SIGCHLD, &chld, NULL);
		errno = saved_errno;
		return -1;
	}
	struct relay r = {.master = master,
	                  .in = isatty(STDIN_FILENO) ? STDIN_FILENO : -1,
	                  .out = isatty(STDOUT_FILENO)   ? STDOUT_FILENO
	                         : isatty(STDERR_FILENO) ? STDERR_FILENO
	                                                 : -1,
	                  .sig = sfd,
	                  .child = pid};
	bool raw = r.in != -1 && make_raw(r.in, &saved);
	*status = 1;
	relay(&r, status);
	/* What was typed for the command and never read is not root's shell's input. */
	if (raw)
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
	close(master);
	close(sfd);
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	(void)sigaction(SIGCHLD, &chld, NULL);
	return pid;
}
