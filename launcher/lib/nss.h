/*
 * nss: what a static build looks accounts and host names up in.
 *
 * A static glibc still reads /etc/nsswitch.conf, and for a source it does not carry built in
 * (systemd, sss, ldap, mdns, ...) it dlopens that module, which brings the host's libc.so
 * into the process beside the linked one: that works only while the host runs the very glibc
 * this binary was linked with. So a static build looks accounts and groups up in the files
 * (/etc/passwd and /etc/group, where useradd puts the service accounts) and host names in
 * the files and DNS, the sources it carries: nothing is loaded at run time. The shared
 * builds follow nsswitch.conf.
 */
#ifndef GITLAB_CTL_NSS_H
#define GITLAB_CTL_NSS_H

/* In a static build, the built-in sources for every database gitlab-ctl looks up; nothing
 * otherwise. 0, or -1 with errno (glibc refused a database name). */
int nss_builtin_only(void);

#endif
