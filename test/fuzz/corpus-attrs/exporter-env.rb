gitlab_exporter['enable'] = true
gitlab_exporter['listen_address'] = '127.0.0.1'
gitlab_exporter['listen_port'] = '9168'
gitlab_exporter['env'] = {
  'MALLOC_CONF' => 'dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:2',
  'RUBY_GC_HEAP_INIT_SLOTS' => '100k',
  'RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO' => 0.1,
  'RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO' => "0.3",
  'LD_PRELOAD' => nil,
}
