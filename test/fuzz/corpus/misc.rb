=begin
c
=end
z = 'a' 'b' # c
w = foo(1)
  .bar
__END__
data
