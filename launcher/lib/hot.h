/*
 * hot: marks the functions every `status` runs. GCC places them in .text.hot, which the
 * linker lays out together beside main and _start, so that a `status` touches one 64 KiB
 * block of code instead of one per module it passes through: the kernel maps such a block
 * around each faulting page of a file, and a page fault costs more than all of status's
 * formatting (bench/control counts them). Anything else keeps its place.
 */
#ifndef GITLAB_CTL_HOT_H
#define GITLAB_CTL_HOT_H

#define STATUS_PATH __attribute__((hot))

#endif
