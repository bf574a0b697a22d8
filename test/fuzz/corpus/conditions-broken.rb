if a
  case b
  when 1 then x = 1
  else
    y = if c then 1 else 2 end
  end
  z = 1 while d
  unless e
    w = [1].each do |v|
    end
  elsif f
end
end
