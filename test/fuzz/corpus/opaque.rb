x = { 'X' => ENV['Y'], k: "#{node['fqdn']}", "s": %w[a b], :t => 1..2 }
y = [1, 0x1f, 0755, 1_0.5e3, :sym, nil, true, cond ? 'a' : "b\u{41}\x41"]
