gitlab_exporter['env']['RUBY_GC_HEAP_GROWTH_FACTOR'] = '1.1'
gitlab_exporter['env']['RUBY_GC_HEAP_FREE_SLOTS_GOAL_RATIO'] = 0.08
gitlab_exporter['env']['RUBY_GC_MALLOC_LIMIT'] = 0x1000000
gitlab_exporter['env']['MALLOC_CONF'] = 'background_thread:true,thp:never,hpa_dirty_mult:0.25'
gitlab_exporter['env']['RUBY_GC_HEAP_0_INIT_SLOTS'] = 1_000
gitlab_exporter['env'][:SSL_CERT_DIR] = :x
