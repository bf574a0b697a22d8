gitlab_rails['ldap_servers'] = YAML.load <<-'EOS'
  main:
    label: 'LDAP'
  EOS
x = <<~A + <<B
  a
  A
b
B
