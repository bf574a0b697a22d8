gitlab_exporter['listen_port'] = 70000
gitlab_exporter['env'] = { 'BAD-NAME' => 'x', 'RUBY_GC_HEAP_INIT_SLOTS' => '-1' }
gitlab_exporter['env']['MALLOC_CONF'] = 'junk:maybe,,'
gitlab_exporter['home'] = 'relative'
gitlab_exporter['enable'] = "#{node['x']}"
gitlab_rails['time_zone'] = 'UTC'
user['username'] = '-x'
