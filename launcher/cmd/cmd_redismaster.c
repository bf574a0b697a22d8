/*
 * get-redis-master: print the current Redis master as HOST:PORT, as the first sentinel that
 * answers names it (engine/redisfollow.h: this node's sentinel, then
 * gitlab_rails['redis_sentinels']); exit 1 when none answers, as Omnibus.
 */
#include <stdio.h>

#include "cmd/commands.h"
#include "cmd/load.h"
#include "engine/redisfollow.h"

int cmd_get_redis_master(const struct ctl *ctl, int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: gitlab-ctl get-redis-master\n");
		return 2;
	}
	struct loaded l;
	if (cmd_load(ctl, &l, CMD_REPORT_FAILED, "get-redis-master", stderr) == -1) {
		cmd_unload(&l);
		return 1;
	}
	char ip[256];
	int port = 0;
	struct diags d;
	diags_init(&d);
	int rc = redis_master_now(&l.a, 1000, ip, sizeof ip, &port, &d, true);
	if (rc == 0)
		printf("%s:%d\n", ip, port);
	else if (rc == 1)
		fprintf(stderr, "gitlab-ctl get-redis-master: no sentinel to ask: set "
		                "gitlab_rails['redis_sentinels'] or run one here "
		                "(roles(['redis_sentinel_role']))\n");
	else
		diags_print(&d, stderr);
	diags_free(&d);
	cmd_unload(&l);
	return rc == 0 ? 0 : 1;
}
