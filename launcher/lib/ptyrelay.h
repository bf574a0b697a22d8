/*
 * ptyrelay: give a program its own terminal instead of ours, as `su --pty`
 * does. The child leads a new session whose controlling terminal is a fresh
 * pty; our terminal stays with the parent, which copies keystrokes to the pty
 * and the pty's output, escaped (lib/safetext.h), back, forwards window size
 * changes and termination signals, and restores the terminal at the end. What
 * runs in the child can then neither push input into our terminal (TIOCSTI)
 * nor read what is typed after it ends.
 * Typed input the program does not read waits in the kernel and one bounded
 * buffer (the relay never blocks on it) and is discarded when the program ends.
 */
#ifndef GITLAB_CTL_PTYRELAY_H
#define GITLAB_CTL_PTYRELAY_H

#include <stdbool.h>
#include <sys/types.h>

/* Whether any of stdin, stdout and stderr is a terminal. */
bool ptyrelay_wanted(void);

/*
 * Fork. The child gets 0: each of fds 0-2 that was a terminal is now the
 * pty, the others are as they were. The parent relays until the child has
 * exited, then returns its pid with its status in *status (the exit status,
 * or 128 + the signal that killed it). -1 with errno when there is no pty or
 * no fork; nothing changed then.
 */
pid_t ptyrelay_fork(int *status);

#endif
