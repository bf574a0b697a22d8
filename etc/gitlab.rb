## GitLab configuration settings
##! This file is read by `gitlab-ctl reconfigure`, in the style of Omnibus
##! GitLab's /etc/gitlab/gitlab.rb. gitlab-ctl understands the literal subset
##! of Ruby that gitlab.rb files use: name['key'] = value, strings, numbers,
##! true/false/nil, arrays, hashes and integer arithmetic.
##!
##! Settings for services this build does not manage (external_url,
##! gitlab_rails[...], nginx[...], ...) are accepted and ignored, so a whole
##! Omnibus gitlab.rb can be used as is. Settings of managed services must be
##! literal values: Ruby such as ENV['X'] or "#{...}" is reported as an error.
##!
##! Every line below shows the default; uncomment and edit to change it.
##! Check your edits with `gitlab-ctl check-config`, see the result with
##! `gitlab-ctl show-config`, and apply them with `gitlab-ctl reconfigure`.

################################################################################
## Service user
################################################################################

##! The account the services run as when gitlab-ctl runs as root. When
##! gitlab-ctl runs as another user, services run as that user.
# user['username'] = "git"
# user['group'] = "git"

##! Create the user and group above when they are missing.
# manage_accounts['enable'] = true

################################################################################
## Logging (runit svlogd)
################################################################################

##! Rotate `current` at this size, keep this many old files, rotate at least
##! this often (seconds), and compress rotated files with this filter.
# logging['svlogd_size'] = 200 * 1024 * 1024 # 200 MB
# logging['svlogd_num'] = 30
# logging['svlogd_timeout'] = 24 * 60 * 60 # 1 day
# logging['svlogd_filter'] = "gzip"

##! Also send log lines to a UDP host:port, and prefix each line with a string.
# logging['svlogd_udp'] = nil
# logging['svlogd_prefix'] = nil

################################################################################
## GitLab exporter
##! Docs: https://docs.gitlab.com/ee/administration/monitoring/prometheus/gitlab_exporter.html
################################################################################

# gitlab_exporter['enable'] = true
# gitlab_exporter['home'] = "/var/opt/gitlab/gitlab-exporter"
# gitlab_exporter['log_directory'] = "/var/log/gitlab/gitlab-exporter"
# gitlab_exporter['env_directory'] = "/opt/gitlab/etc/gitlab-exporter/env"

##! Where /metrics is served.
# gitlab_exporter['listen_address'] = 'localhost'
# gitlab_exporter['listen_port'] = '9168'
##! 'webrick' or 'puma' (Debian's puma package, as GitLab's exporter runs it).
# gitlab_exporter['server_name'] = 'webrick'

##! The exporter executable. The default is the exporter bundled with
##! gitlab-ctl; point it at a real gitlab-exporter when one is installed.
# gitlab_exporter['command'] = "/opt/gitlab/embedded/bin/gitlab-exporter"

##! The exporter's environment. This hash is merged over the defaults below;
##! a nil value removes a default. gitlab-ctl checks what Ruby and jemalloc
##! would silently ignore: RUBY_GC_* ranges and k/m/g suffixes, MALLOC_CONF
##! keys, and that every LD_PRELOAD file exists.
##!
##! Defaults (LD_PRELOAD is the jemalloc library found at build time):
##!   'LD_PRELOAD' => '/usr/lib/<arch>/libjemalloc.so.2',
##!   'MALLOC_CONF' => 'dirty_decay_ms:0,muzzy_decay_ms:0',
##!   'RUBY_GC_HEAP_INIT_SLOTS' => 80000,
##!   'RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO' => 0.055,
##!   'RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO' => 0.111
# gitlab_exporter['env'] = {
#   'MALLOC_CONF' => 'dirty_decay_ms:0,muzzy_decay_ms:0',
#   'RUBY_GC_HEAP_INIT_SLOTS' => 80000,
# }
##! One variable at a time works too:
# gitlab_exporter['env']['RUBY_GC_HEAP_GROWTH_FACTOR'] = 1.1
##! Run without jemalloc:
# gitlab_exporter['env']['LD_PRELOAD'] = nil

##! The exporter exits when its RSS passes this many MB; runsv starts it again.
# gitlab_exporter['memory_threshold'] = 1024

##! Where the database and Sidekiq probes connect. The defaults follow the
##! postgresql[...] and redis[...] settings below; set them to watch a
##! PostgreSQL or Redis that gitlab-ctl does not run. The probes of a disabled
##! postgresql or redis are left out of gitlab-exporter.yml.
# gitlab_exporter['connection_string'] = "dbname=gitlabhq_production user=gitlab host=/var/opt/gitlab/postgresql port=5432"
# gitlab_exporter['redis_url'] = "unix:/var/opt/gitlab/redis/redis.socket"

##! false: no Sidekiq probe (/sidekiq answers 404) and no gitlab_exporter_sidekiq job.
# gitlab_exporter['probe_sidekiq'] = true
##! Rendered for a real gitlab-exporter; the bundled one skips Elasticsearch.
# gitlab_exporter['probe_elasticsearch'] = false
# gitlab_exporter['elasticsearch_url'] = nil
# gitlab_exporter['elasticsearch_authorization'] = nil
##! HTTPS only, with these PEM files (the key readable by the exporter's account);
##! Prometheus then scrapes it over https, trusting tls_cert_path.
# gitlab_exporter['tls_enabled'] = false
# gitlab_exporter['tls_cert_path'] = nil
# gitlab_exporter['tls_key_path'] = nil
##! Unset: https exactly when tls_enabled. The server name defaults to listen_address.
# gitlab_exporter['prometheus_scrape_scheme'] = nil
# gitlab_exporter['prometheus_scrape_tls_server_name'] = nil
# gitlab_exporter['prometheus_scrape_tls_skip_verification'] = false

##! Per-service logging overrides take the logging['svlogd_*'] names:
# gitlab_exporter['svlogd_num'] = 10

################################################################################
## PostgreSQL (Debian's postgresql-15)
##! On by default, as in Omnibus; the exporter's database probes need it.
##! postgresql['enable'] = false stops it and keeps its cluster in data_dir
##! (reconfigure says where). It runs as its own account, listens on a unix socket in its home and, unless
##! listen_address is set, on no TCP address. reconfigure makes the cluster
##! once (initdb beside data_dir, renamed into place once it succeeded; an
##! existing cluster is never touched), then
##! creates the role sql_user and the database the exporter reads.
################################################################################

# postgresql['enable'] = true
# postgresql['username'] = "gitlab-psql"
# postgresql['group'] = "gitlab-psql"
# postgresql['home'] = "/var/opt/gitlab/postgresql"
# postgresql['data_dir'] = "/var/opt/gitlab/postgresql/data"
# postgresql['unix_socket_directory'] = "/var/opt/gitlab/postgresql"
# postgresql['log_directory'] = "/var/log/gitlab/postgresql"
# postgresql['env_directory'] = "/opt/gitlab/etc/postgresql/env"
# postgresql['bin_dir'] = "/usr/lib/postgresql/15/bin"
# postgresql['listen_address'] = nil
# postgresql['port'] = 5432
# postgresql['shared_buffers'] = "128MB"
# postgresql['max_connections'] = 400
# postgresql['sql_user'] = "gitlab"
# postgresql['database'] = "gitlabhq_production"

################################################################################
## Redis (Debian's redis-server)
##! On by default, as in Omnibus; the exporter's Sidekiq probes need it.
##! redis['enable'] = false stops it and keeps its data in dir (reconfigure
##! says where). It runs as its own account on a unix socket in its home;
##! port 0 means no TCP listener.
################################################################################

# redis['enable'] = true
# redis['username'] = "gitlab-redis"
# redis['group'] = "gitlab-redis"
# redis['home'] = "/var/opt/gitlab/redis"
# redis['dir'] = "/var/opt/gitlab/redis"
# redis['log_directory'] = "/var/log/gitlab/redis"
# redis['env_directory'] = "/opt/gitlab/etc/redis/env"
# redis['bind'] = '127.0.0.1'
# redis['port'] = 0
# redis['unixsocket'] = "/var/opt/gitlab/redis/redis.socket"
# redis['unixsocketperm'] = "777"
# redis['maxmemory'] = "0"
# redis['maxmemory_policy'] = "noeviction"
# redis['maxmemory_samples'] = 5
# redis['maxclients'] = 10000
# redis['tcp_backlog'] = 511
# redis['tcp_timeout'] = 60
# redis['tcp_keepalive'] = 300
# redis['hz'] = 10
# redis['io_threads'] = 1
# redis['io_threads_do_reads'] = false
# redis['lazyfree_lazy_eviction'] = false
# redis['lazyfree_lazy_expire'] = false
# redis['lazyfree_lazy_server_del'] = false
# redis['replica_lazy_flush'] = false
# redis['stop_writes_on_bgsave_error'] = true
# redis['client_output_buffer_limit_normal'] = "0 0 0"
# redis['client_output_buffer_limit_replica'] = "256mb 64mb 60"
# redis['client_output_buffer_limit_pubsub'] = "32mb 8mb 60"
##! One save line per entry; [""] turns snapshots off, [] leaves Redis' default.
# redis['save'] = ['900 1', '300 10', '60 10000']
##! '' disables a command; AUTH and PING stay (the readiness check sends them).
# redis['rename_commands'] = { 'KEYS' => '' }

##! TLS: every tls_* key applies only once tls_port is set (the same bind).
# redis['tls_port'] = nil
# redis['tls_cert_file'] = nil
# redis['tls_key_file'] = nil
# redis['tls_dh_params_file'] = nil
# redis['tls_ca_cert_file'] = "/etc/ssl/certs/ca-certificates.crt"
# redis['tls_ca_cert_dir'] = "/etc/ssl/certs"
# redis['tls_auth_clients'] = 'optional'   # 'yes', 'no' or 'optional'
# redis['tls_replication'] = nil           # 'yes' or 'no', as are the next two
# redis['tls_cluster'] = nil
# redis['tls_prefer_server_ciphers'] = nil
# redis['tls_protocols'] = nil             # e.g. "TLSv1.2 TLSv1.3"
# redis['tls_ciphers'] = nil
# redis['tls_ciphersuites'] = nil
# redis['tls_session_caching'] = nil       # 'yes' or 'no'
# redis['tls_session_cache_size'] = nil
# redis['tls_session_cache_timeout'] = nil

################################################################################
## Prometheus node exporter (Debian's prometheus-node-exporter)
##! On by default, as in Omnibus. Runit service node-exporter, account
##! gitlab-prometheus. Its runit
##! collector reports every service of this tree (node_service_state{service}).
##! On a node a remote Prometheus scrapes: listen_address = '0.0.0.0:9100'.
################################################################################

# node_exporter['enable'] = true
# node_exporter['home'] = "/var/opt/gitlab/node-exporter"
# node_exporter['log_directory'] = "/var/log/gitlab/node-exporter"
# node_exporter['env_directory'] = "/opt/gitlab/etc/node-exporter/env"
# node_exporter['listen_address'] = 'localhost:9100'

##! Kingpin flags merged over these defaults, sorted by key: true -> --key,
##! false -> --no-key, '' skipped, else --key=value; nil removes a default.
# node_exporter['flags'] = {
#   'collector.mountstats' => true,
#   'collector.runit' => true,
#   'collector.runit.servicedir' => "/opt/gitlab/service",
#   'collector.systemd' => false,
#   'collector.textfile.directory' => "/var/opt/gitlab/node-exporter/textfile_collector"
# }
# node_exporter['env'] = {}

################################################################################
## Prometheus Redis exporter (Debian's prometheus-redis-exporter)
##! Runit service redis-exporter, Redis' account; on by default where
##! redis['enable'] is true. Reads Redis on its unix socket.
################################################################################

# redis_exporter['enable'] = true   # where redis['enable'] = true
# redis_exporter['home'] = "/var/opt/gitlab/redis-exporter"
# redis_exporter['log_directory'] = "/var/log/gitlab/redis-exporter"
# redis_exporter['env_directory'] = "/opt/gitlab/etc/redis-exporter/env"
# redis_exporter['listen_address'] = 'localhost:9121'
##! Always --key=value ('' skipped).
# redis_exporter['flags'] = {
#   'redis.addr' => "unix:///var/opt/gitlab/redis/redis.socket"
# }
# redis_exporter['env'] = {}

################################################################################
## Prometheus PostgreSQL exporter (Debian's prometheus-postgres-exporter 0.11)
##! Runit service postgres-exporter, PostgreSQL's account (peer
##! authentication on the socket); on by default where postgresql['enable']
##! is true. per_table_stats adds pg_stat_user_tables_* per table.
################################################################################

# postgres_exporter['enable'] = true   # where postgresql['enable'] = true
# postgres_exporter['home'] = "/var/opt/gitlab/postgres-exporter"
# postgres_exporter['log_directory'] = "/var/log/gitlab/postgres-exporter"
# postgres_exporter['env_directory'] = "/opt/gitlab/etc/postgres-exporter/env"
# postgres_exporter['listen_address'] = 'localhost:9187'
# postgres_exporter['per_table_stats'] = false
##! Kingpin flags, as node_exporter's.
# postgres_exporter['flags'] = {
#   'extend.query-path' => "/var/opt/gitlab/postgres-exporter/queries.yaml"
# }
# postgres_exporter['env'] = {}

################################################################################
## Monitoring: Prometheus and Alertmanager (Debian's prometheus packages)
##! Docs: https://docs.gitlab.com/ee/administration/monitoring/prometheus/
################################################################################

##! On by default, as in Omnibus' single node.
##! Turn the whole monitoring set off (prometheus, alertmanager, node_exporter,
##! redis_exporter, postgres_exporter, gitlab_exporter), whatever their own
##! 'enable' says.
# prometheus_monitoring['enable'] = true

##! A dedicated monitoring node: prometheus, alertmanager and node_exporter on,
##! every other service off unless enabled below.
# roles(['monitoring_role'])

# prometheus['enable'] = true
# prometheus['home'] = "/var/opt/gitlab/prometheus"
# prometheus['log_directory'] = "/var/log/gitlab/prometheus"
# prometheus['env_directory'] = "/opt/gitlab/etc/prometheus/env"
# prometheus['listen_address'] = 'localhost:9090'
# prometheus['scrape_interval'] = 15 # seconds
# prometheus['scrape_timeout'] = 15 # seconds, at most scrape_interval
# prometheus['external_labels'] = {}
# prometheus['rules_directory'] = "/var/opt/gitlab/prometheus/rules"
# prometheus['rules_files'] = ["/var/opt/gitlab/prometheus/rules/*.rules"]
##! Jobs of other nodes (static targets or file_sd_configs), after the jobs of
##! the services enabled here; a job named like one of ours replaces it.
# prometheus['scrape_configs'] = [
#   { 'job_name' => 'app_nodes', 'static_configs' => [ { 'targets' => ['10.0.0.2:9100', '10.0.0.3:9100'] } ] },
# ]
##! Or target groups in file_sd's format, which gitlab-ctl writes to
##! scrape_targets_file for a job "file_sd" (Prometheus re-reads it itself).
# prometheus['scrape_targets'] = [
#   { 'targets' => ['10.0.0.2:9121'], 'labels' => { 'job' => 'app-redis' } },
# ]
# prometheus['scrape_targets_file'] = "/var/opt/gitlab/prometheus/targets/gitlab-rb.yml"
# prometheus['alertmanagers'] = nil # default: this node's alertmanager when enabled
# prometheus['remote_read'] = []
# prometheus['remote_write'] = []
##! --key=value flags merged over the defaults (web.listen-address,
##! storage.tsdb.path, config.file); '' skips a flag, nil removes a default.
# prometheus['flags'] = { 'storage.tsdb.retention.time' => '15d' }
##! Accepted for Omnibus files; gitlab-ctl generates no Kubernetes jobs.
# prometheus['monitor_kubernetes'] = true
##! The shipped rules (rules/gitlab-ctl.rules): how long a condition holds
##! before its alert fires, and gitlab-exporter's RSS (bytes) that alerts.
# prometheus['alert_for_seconds'] = 60
# prometheus['gitlab_exporter_memory_alert_bytes'] = 768 * 1024 * 1024

# alertmanager['enable'] = true
# alertmanager['home'] = "/var/opt/gitlab/alertmanager"
# alertmanager['log_directory'] = "/var/log/gitlab/alertmanager"
# alertmanager['env_directory'] = "/opt/gitlab/etc/alertmanager/env"
# alertmanager['listen_address'] = 'localhost:9093'
##! Kingpin flags: true -> --key, false -> --no-key, '' skipped. Clustering is
##! off (--cluster.listen-address=) unless you set cluster.listen-address.
# alertmanager['flags'] = {}
# alertmanager['admin_email'] = nil # mails the default receiver; needs SMTP in 'global'
# alertmanager['default_receiver'] = 'default-receiver'
# alertmanager['global'] = { 'smtp_smarthost' => 'mail.example.com:25', 'smtp_from' => 'alertmanager@example.com' }
# alertmanager['receivers'] = []
# alertmanager['routes'] = []
# alertmanager['inhibit_rules'] = []
# alertmanager['templates'] = []
