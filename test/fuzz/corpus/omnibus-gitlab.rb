## GitLab configuration settings (test fixture)
##! A whole gitlab.rb in the style of the Omnibus template: many sections that
##! gitlab-ctl does not manage (they must parse, opaque Ruby included), plus
##! the gitlab_exporter, node_exporter, user and logging settings it does
##! manage, all written as literal values.

## GitLab URL
##! URL on which GitLab will be reachable.
external_url 'https://gitlab.example.com'

## Roles for multi-instance GitLab
# roles ['redis_sentinel_role', 'redis_master_role']
roles ['application_role', 'monitoring_role']

################################################################################
## gitlab.yml configuration
################################################################################
gitlab_rails['gitlab_ssh_host'] = 'ssh.gitlab.example.com'
gitlab_rails['time_zone'] = 'UTC'
gitlab_rails['max_request_duration_seconds'] = 57

### GitLab email server settings
gitlab_rails['smtp_enable'] = true
gitlab_rails['smtp_address'] = "smtp.example.com"
gitlab_rails['smtp_port'] = 465
gitlab_rails['smtp_user_name'] = "gitlab"
gitlab_rails['smtp_password'] = "not-a-real-password"
gitlab_rails['smtp_domain'] = "example.com"
gitlab_rails['smtp_authentication'] = :login
gitlab_rails['smtp_tls'] = false
gitlab_rails['smtp_openssl_verify_mode'] = 'peer'
gitlab_rails['gitlab_email_from'] = "gitlab@#{node['fqdn']}"
gitlab_rails['gitlab_email_display_name'] = 'GitLab'

### Issue closing pattern: a double-quoted regexp with escapes
gitlab_rails['gitlab_issue_closing_pattern'] = "\b((?:[Cc]los(?:e[sd]?|ing)|\b[Ff]ix(?:e[sd]|ing)?)(:?) +(?:(?:issues? +)?%{issue_ref}(?:(?:, *| +and +)?)|([A-Z][A-Z0-9_]+-\d+))+)"

### Auxiliary jobs
gitlab_rails['stuck_ci_jobs_worker_cron'] = "0 0 * * *"
gitlab_rails['expire_build_artifacts_worker_cron'] = "*/7 * * * *"

### Trusted proxies and allowed hosts
gitlab_rails['trusted_proxies'] = ['10.0.0.0/8', '192.168.1.1',]
gitlab_rails['monitoring_whitelist'] = ['127.0.0.0/8', '::1/128']
gitlab_rails['allowed_hosts'] = []

### Content Security Policy: nested hashes with trailing commas
gitlab_rails['content_security_policy'] = {
  'enabled' => true,
  'report_only' => false,
  # Each directive is a String (e.g. "'self'").
  'directives' => {
    'base_uri' => nil,
    'default_src' => "'self'",
    'script_src' => "'self' 'unsafe-eval' https://www.recaptcha.net",
    'img_src' => "* data: blob:",
    'report_uri' => nil,
  },
}

### Incoming email via Microsoft Graph: "key": value hash syntax
gitlab_rails['incoming_email_inbox_options'] = {
   'tenant_id': 'YOUR-TENANT-ID',
   'client_id': 'YOUR-CLIENT-ID',
   'poll_interval': 60  # Optional
}

### Consolidated object storage: nested subscripts
gitlab_rails['object_store']['enabled'] = false
gitlab_rails['object_store']['connection'] = {
  'provider' => 'AWS',
  'region' => 'eu-west-1',
  'aws_access_key_id' => ENV['AWS_ACCESS_KEY_ID'],
  'aws_secret_access_key' => ENV['AWS_SECRET_ACCESS_KEY'],
}
gitlab_rails['object_store']['objects']['artifacts']['bucket'] = 'gitlab-artifacts'
gitlab_rails['object_store']['objects']['lfs']['bucket'] = nil
gitlab_rails[:uploads_storage_path] = '/var/opt/gitlab/gitlab-rails/public'

### Backup settings
gitlab_rails['backup_path'] = "/var/opt/gitlab/backups"
gitlab_rails['backup_archive_permissions'] = 0644
gitlab_rails['backup_keep_time'] = 7 * 24 * 3600
gitlab_rails['backup_upload_remote_directory'] = "backups-#{Time.now.year}"
gitlab_rails['env'] = {
  "SKIP" => "db,uploads,repositories,builds,artifacts,lfs,registry,pages"
}

### LDAP settings
###! Docs: https://docs.gitlab.com/omnibus/settings/ldap.html
gitlab_rails['ldap_enabled'] = true
gitlab_rails['prevent_ldap_sign_in'] = false

###! **remember to close this block with 'EOS' below**
gitlab_rails['ldap_servers'] = YAML.load <<-'EOS'
  main: # 'main' is the GitLab 'provider ID' of this LDAP server
    label: 'LDAP'
    host: '_your_ldap_server'
    port: 389
    uid: 'sAMAccountName'
    bind_dn: '_the_full_dn_of_the_user_you_will_bind_with'
    password: '_the_password_of_the_bind_user'
    encryption: 'plain' # "start_tls" or "simple_tls" or "plain"
    active_directory: true
    base: ''
    user_filter: ''
  EOS

### OmniAuth settings
gitlab_rails['omniauth_enabled'] = true
gitlab_rails['omniauth_allow_single_sign_on'] = ['saml', 'github']
gitlab_rails['omniauth_block_auto_created_users'] = true
gitlab_rails['omniauth_providers'] = [
  {
    name: "github",
    app_id: "YOUR_APP_ID",
    app_secret: "YOUR_APP_SECRET",
    args: { scope: "user:email" },
  },
  {
    name: "saml",
    label: "Company SSO",
    args: {
      assertion_consumer_service_url: "https://gitlab.example.com/users/auth/saml/callback",
      idp_cert_fingerprint: '43:51:43:a1:b5:fc:8b:b7:0a:3a:a9:b1:0f:66:73:a8',
      name_identifier_format: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
    },
  },
]

### Rack Attack
gitlab_rails['rack_attack_git_basic_auth'] = {
  'enabled' => false,
  'ip_whitelist' => ["127.0.0.1"],
  'maxretry' => 10,
  'findtime' => 60,
  'bantime' => 3600
}

### GitLab Shell
gitlab_shell['log_level'] = 'INFO'
gitlab_shell['audit_usernames'] = false

### Git data directories
git_data_dirs({
  "default" => {
    "path" => "/var/opt/gitlab/git-data"
  }
})

################################################################################
## GitLab user: the account services run as (managed by gitlab-ctl)
################################################################################
user['username'] = "git"
user['group'] = "git"
manage_accounts['enable'] = true

################################################################################
## Logging: runit svlogd settings (managed by gitlab-ctl)
################################################################################
logging['svlogd_size'] = 200 * 1024 * 1024 # rotate after 200 MB of log data
logging['svlogd_num'] = 30 # keep 30 rotated log files
logging['svlogd_timeout'] = 24 * 60 * 60 # rotate after 24 hours
logging['svlogd_filter'] = "gzip" # compress logs with gzip
logging['svlogd_udp'] = nil # transmit log messages via UDP
logging['svlogd_prefix'] = nil # custom prefix for log messages

################################################################################
## Puma
################################################################################
puma['enable'] = true
puma['worker_timeout'] = 60
puma['worker_processes'] = 2
puma['per_worker_max_memory_mb'] = 1_024
puma['listen'] = '127.0.0.1'
puma['port'] = 8080

################################################################################
## Sidekiq
################################################################################
sidekiq['enable'] = true
sidekiq['log_format'] = "json"
sidekiq['queue_groups'] = ['*'] * 2
sidekiq['routing_rules'] = [
  ["resource_boundary=cpu", "cpu_boundary"],
  ["feature_category=pages", nil],
  ["*", "default"]
]

################################################################################
## PostgreSQL
################################################################################
postgresql['enable'] = true
postgresql['listen_address'] = nil
postgresql['port'] = 5432
postgresql['max_connections'] = 400
postgresql['shared_buffers'] = "256MB"
postgresql['work_mem'] = "16MB"
postgresql['checkpoint_timeout'] = "5min"
postgresql['checkpoint_completion_target'] = 0.9
postgresql['random_page_cost'] = 2.0
postgresql['trust_auth_cidr_addresses'] = %w(127.0.0.1/32 ::1/128)
postgresql['custom_pg_hba_entries'] = {
  APPLICATION: [
    {
      type: 'hostssl',
      database: 'gitlabhq_production',
      user: 'gitlab',
      cidr: '10.0.0.0/24',
      method: 'md5',
    }
  ]
}

################################################################################
## Redis
################################################################################
redis['enable'] = true
redis['maxclients'] = "10000"
redis['tcp_timeout'] = "60"
redis['tcp_keepalive'] = "300"
redis['bind'] = '127.0.0.1'
redis['port'] = 6379
redis['password'] = "redis-password-goes-here"
redis['rename_commands'] = {
  'KEYS': ''
}

################################################################################
## NGINX
################################################################################
nginx['enable'] = true
nginx['client_max_body_size'] = '250m'
nginx['redirect_http_to_https'] = true
nginx['ssl_certificate'] = "/etc/gitlab/ssl/#{node['fqdn']}.crt"
nginx['ssl_certificate_key'] = "/etc/gitlab/ssl/#{node['fqdn']}.key"
nginx['ssl_ciphers'] = "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256"
nginx['ssl_protocols'] = "TLSv1.2 TLSv1.3"
nginx['ssl_session_timeout'] = "1d"
nginx['proxy_set_headers'] = {
  "Host" => "$http_host_with_default",
  "X-Real-IP" => "$remote_addr",
  "X-Forwarded-For" => "$proxy_add_x_forwarded_for",
  "X-Forwarded-Proto" => "https",
  "Upgrade" => "$http_upgrade",
  "Connection" => "$connection_upgrade"
}
nginx['real_ip_trusted_addresses'] = []
nginx['custom_gitlab_server_config'] = "location ^~ /foo-namespace/bar-project/raw/ {\n deny all;\n}\n"
nginx['keepalive_timeout'] = 65
nginx['gzip_enabled'] = true
nginx['proxy_cache'] = 'gitlab'

################################################################################
## Prometheus and its exporters
################################################################################
prometheus['enable'] = true
prometheus['listen_address'] = 'localhost:9090'
prometheus['scrape_interval'] = 15
prometheus['scrape_configs'] = [
  {
    'job_name': 'example',
    'static_configs' => [
      'targets' => ['hostname:port'],
    ],
  },
]
prometheus['flags'] = {
  'storage.tsdb.path' => "/var/opt/gitlab/prometheus/data",
  'storage.tsdb.retention.time' => "15d",
  'config.file' => "/var/opt/gitlab/prometheus/prometheus.yml"
}

##! Docs: https://docs.gitlab.com/ee/administration/monitoring/prometheus/node_exporter.html
node_exporter['enable'] = false

##! Docs: https://docs.gitlab.com/ee/administration/monitoring/prometheus/gitlab_exporter.html
gitlab_exporter['enable'] = true
gitlab_exporter['log_directory'] = "/var/log/gitlab/gitlab-exporter"
gitlab_exporter['home'] = "/var/opt/gitlab/gitlab-exporter"

##! Advanced settings. Should be changed only if absolutely needed.
gitlab_exporter['server_name'] = 'webrick'
gitlab_exporter['listen_address'] = 'localhost'
gitlab_exporter['listen_port'] = '9168'
gitlab_exporter['probe_sidekiq'] = true
gitlab_exporter['env'] = {
  'RUBY_GC_HEAP_INIT_SLOTS' => '100000',
  'MALLOC_CONF' => 'dirty_decay_ms:0,muzzy_decay_ms:0',
  'SSL_CERT_DIR' => '/opt/gitlab/embedded/ssl/certs/',
}

################################################################################
## Gitaly
################################################################################
gitaly['configuration'] = {
  listen_addr: 'localhost:8075',
  prometheus_listen_addr: 'localhost:9236',
  storage: [
    {
      name: 'default',
      path: '/var/opt/gitlab/git-data/repositories',
    },
  ],
  concurrency: [
    {
      rpc: '/gitaly.SmartHTTPService/PostReceivePack',
      max_per_repo: 20,
    },
  ],
  cgroups: {
    mountpoint: '/sys/fs/cgroup',
    memory_bytes: 1048576,
    cpu_quota_us: 400_000,
  },
}

################################################################################
## Registry and Pages
################################################################################
registry_external_url 'https://registry.example.com'
registry['enable'] = false
registry_nginx['ssl_certificate'] = "/etc/gitlab/ssl/#{node['fqdn']}.crt"
pages_external_url "http://pages.example.com/"
gitlab_pages['access_control'] = false
gitlab_pages['headers'] = nil

################################################################################
## Mattermost
################################################################################
mattermost['enable'] = false
mattermost['service_use_ssl'] = false
mattermost['email_invite_salt'] = nil

################################################################################
## Geo and Patroni
################################################################################
patroni['enable'] = false
patroni['maximum_lag_on_failover'] = 1_048_576
patroni['postgresql']['max_wal_senders'] = 5
consul['configuration'] = {
  server: true,
  retry_join: %w(10.10.10.1 10.10.10.2 10.10.10.3)
}
package['modify_kernel_parameters'] = true
