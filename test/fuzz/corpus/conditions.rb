# if/unless/case blocks and modifiers: conditions are skipped, never evaluated
if ENV['GITLAB_HOST'] == 'a' && node['fqdn'] != 'end'
  gitlab_rails['smtp_enable'] = true
  if File.exist?('/etc/x') then nginx['enable'] = false end
elsif node['hostname'] =~ /else|end/
  gitlab_rails['smtp_address'] = <<~EOS.strip
    end
  EOS
else
  gitlab_rails['smtp_enable'] = false # else
end
gitlab_rails['ldap_enabled'] = true unless node['fqdn'].nil?
external_url 'https://x' if ENV['A'] unless ENV['B']
case node['hostname']
when 'x' then nginx['listen_port'] = 81
when 'y', %w[if end]
  nginx['listen_port'] = [82,
    83] if a == <<~E
  when
E
else
  nginx['listen_port'] = {end: 80, if: :else}
end
case when a; x = 1; end
unless a; b = 2; else c = 3 end if d
gitlab_exporter['listen_port'] = 9168
