external_url 'https://gitlab.example.com'
roles ['a_role', 'b_role',]
gitlab_exporter['listen_port'] = '9168'
logging['svlogd_size'] = 200 * 1024 * 1024
x = -(7 - 2) / 2
