node_exporter['enable'] = true
node_exporter['listen_address'] = '[::1]:9100'
node_exporter['flags'] = { 'collector.textfile.directory' => '/tmp/t', 'web.telemetry-path' => '/m' }
node_exporter['flags']['collector.systemd'] = ''
node_exporter['flags']['collector.textfile.directory'] = nil
node_exporter['env'] = { 'GOMAXPROCS' => 1 }
