#!/bin/sh
# t_exporter_reader: the bundled exporter's Redis reply reader (replacing
# redis-rb 4's, which copied the rest of its socket buffer for every reply).
# It parses the same replies whatever the socket's chunking (one byte at a
# time up to 16 KB reads, bulk strings holding CRLF and binary bytes), and
# reading 200 Sidekiq-sized replies out of 16 KB socket reads allocates about
# what was read, not a copy of the buffer per reply.
. "$SRCDIR/test/integration/lib.sh"
command -v ruby >/dev/null || fail "ruby is needed (scripts/setup installs it)"

cat >"$T_ROOT/reader.rb" <<'RUBY'
# frozen_string_literal: true

require "socket"
load ARGV.fetch(0) # defines the exporter; its main runs only as the program
require "redis"
require "redis/connection/ruby"
Reader = GitLabCtl::Exporter::RedisReader
abort "FAIL: the reader was not installed over redis-rb #{Redis::VERSION}" unless Reader.install

# A socket delivering DATA in reads of at most CHUNK bytes.
class ChunkedSocket
  include Redis::Connection::SocketMixin

  def initialize(data, chunk)
    super()
    @data = data.b
    @chunk = chunk
    @at = 0
  end

  def _read_from_socket(nbytes, buffer = nil)
    raise Errno::ECONNRESET if @at >= @data.bytesize

    part = @data.byteslice(@at, [nbytes, @chunk].min)
    @at += part.bytesize
    buffer ? buffer.replace(part) : part
  end
end

# A pipe's read end, as redis-rb's sockets read: read_nonblock into a buffer.
class PipeSocket
  include Redis::Connection::SocketMixin

  def initialize(io)
    super()
    @io = io
  end

  def read_nonblock(nbytes, buffer = nil, exception: true)
    @io.read_nonblock(nbytes, buffer, exception: exception)
  end

  def wait_readable(timeout = nil)
    @io.wait_readable(timeout)
  end
end

bin = "a\r\nb\xff\x00c".b
stream = "*4\r\n$3\r\nfoo\r\n$#{bin.bytesize}\r\n#{bin}\r\n$-1\r\n:42\r\n" \
         "+OK\r\n-ERR boom\r\n$0\r\n\r\n*0\r\n:-7\r\n"
want = [["foo", bin, nil, 42], "OK", :error, "", [], -7]
[1, 2, 3, 7, 16, 4096, 16_384].each do |chunk|
  conn = Redis::Connection::Ruby.new(ChunkedSocket.new(stream, chunk))
  got = want.map do |w|
    r = conn.read
    w == :error ? (r.is_a?(Redis::CommandError) && r.message == "ERR boom" ? :error : r) : r
  end
  # redis-rb gives bulk strings the default external encoding: compare bytes.
  bytes = ->(v) { v.is_a?(Array) ? v.map(&bytes) : v.is_a?(String) ? v.b : v }
  abort "FAIL: reads of #{chunk} bytes parsed #{got.inspect}, want #{want.inspect}" unless bytes.(got) == bytes.(want)
end
puts "# replies parsed alike in reads of 1 byte to 16 KB"

# 200 replies the size of a Sidekiq retry entry (ZRANGE member and score).
job = "{\"class\":\"PostReceive\",\"args\":[1,\"#{"y" * 40}\"],\"jid\":\"#{"0" * 24}\",\"retry_count\":3}"
one = "$#{job.bytesize}\r\n#{job}\r\n$17\r\n1764633600.123456\r\n"
payload = one * 200
r, w = IO.pipe
w.write(payload)
w.close
conn = Redis::Connection::Ruby.new(PipeSocket.new(r))
GC.start
GC.disable
before = GC.stat(:malloc_increase_bytes)
400.times { |i| abort "FAIL: reply #{i} differs" unless conn.read == (i.even? ? job : "1764633600.123456") }
allocated = GC.stat(:malloc_increase_bytes) - before
GC.enable
puts "# 200 replies, #{payload.bytesize} bytes read: #{allocated} bytes allocated"
abort "FAIL: reading #{payload.bytesize} bytes of replies allocated #{allocated} bytes" if allocated > 4 * payload.bytesize
RUBY
ruby "$T_ROOT/reader.rb" "$SRCDIR/exporter/gitlab-exporter" || fail "the reader"
note "ok"
