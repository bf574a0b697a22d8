/* Each service's account made (or named) and its uid/gid looked up (see owners.h). */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"
#include "engine/owners.h"
#include "lib/clock.h"
#include "render/accounts.h"

/*
 * useradd fails while another program (adduser, an operator's userdel) holds /etc/passwd's
 * lock; parallel reconfigures take turns in accounts_ensure, but an account that appeared
 * meanwhile all the same is no failure: try again a few times. An attempt's problems count
 * only when it is the last or the account then exists.
 */
static int ensure_account(struct plans *ps, const struct svc *s, const char *home, bool manage,
                          bool dry_run, struct diags *d)
{
	for (int attempt = 0;; attempt++) {
		uid_t u;
		gid_t g;
		struct diags tries;
		diags_init(&tries);
		tries.live = d->live;
		int rc = accounts_ensure(s->user, s->group, home, manage, dry_run, &ps->accounts,
		                         &tries);
		bool made_by_another = rc != 0 && accounts_lookup(s->user, s->group, &u, &g) == 0;
		if (rc == 0 || (!made_by_another && attempt == 4)) {
			diags_move(d, &tries);
			return rc;
		}
		diags_free(&tries);
		if (made_by_another)
			return 0;
		sleep_ms(200L << attempt);
	}
}

/* An earlier plan of the same account, so that NSS is asked once per account. */
static const struct plan *same_account(const struct plans *ps, size_t k)
{
	const struct svc *s = ps->p[k].svc;
	for (size_t j = 0; j < k; j++)
		if (strcmp(ps->p[j].svc->user, s->user) == 0 &&
		    strcmp(ps->p[j].svc->group, s->group) == 0)
			return &ps->p[j];
	return NULL;
}

int owners_ensure(struct plans *ps, bool manage_accounts, bool dry_run, struct diags *d)
{
	if (geteuid() != 0)
		return 0; /* files are ours; the service runs as the invoking user */
	for (size_t k = 0; k < ps->np; k++) {
		struct plan *p = &ps->p[k];
		const struct svc *s = p->svc;
		const struct plan *same = same_account(ps, k);
		if (same != NULL) {
			p->uid = same->uid;
			p->gid = same->gid;
			continue;
		}
		char home[PATH_MAX];
		if (accounts_home(s, home, sizeof home) == -1) {
			diag_add(d, DIAG_ERR, "path too long: %s/%s", GITLAB_CTL_DATA_DIR,
			         s->def->name);
			return -1;
		}
		if (ensure_account(ps, s, home, manage_accounts, dry_run, d) == -1)
			return -1;
		if (accounts_lookup(s->user, s->group, &p->uid, &p->gid) == -1 && !dry_run) {
			diag_add(d, DIAG_ERR, "cannot find user '%s' or group '%s'", s->user,
			         s->group);
			return -1;
		}
	}
	return 0;
}
