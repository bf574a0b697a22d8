#!/usr/bin/python3
"""bench/lib/writer.py: the client side of bench/failover (Debian's python3 and psycopg2,
the one Patroni uses; Redis spoken directly, RESP over TCP, as no Redis module is installed).

  write DSN LOG N     INSERT N+1, N+2, ... into acked(n), one autocommit statement every
                      20 ms, until SIGTERM. LOG gets "ok N T" once the server acknowledged N
                      and "err N T MESSAGE" for the first failure of each run of failures
                      (T: seconds since the epoch). A failed connection or statement drops
                      the connection; the next attempt connects again, so with a libpq
                      multi-host DSN and target_session_attrs=read-write it finds the primary.
  report DSN LOG T0   "WRITABLE ACKED LOST": seconds from T0 to the first acknowledged write
                      after the first failure after T0 (0: no write failed), the writes
                      acknowledged, and how many of those the primary DSN reaches lacks
                      ("-": no primary within 30 s).
  rwrite SENTINELS LOG N
                      the same against Redis: RPUSH acked N+1, N+2, ... on the master the
                      sentinels (ip:port,... ; passwords in SENTINEL_PASSWORD and
                      REDIS_PASSWORD) name, after AUTH and a ROLE check, as a Sentinel-aware
                      client does; asks them again after each failure.
  rreport SENTINELS LOG T0
                      as report, the list acked on the master the sentinels name.
  series LOG T0       seconds from T0 to the first "ok" line after the first "err" line after
                      T0 (0: none failed; "-" when none came back), for a poller's log.
"""
import os
import signal
import socket
import sys
import time

import psycopg2


def write(dsn, log, n):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    out = open(log, "a", buffering=1)
    conn, failing = None, False
    while not stop:
        # Each attempt its own id: a statement whose outcome is unknown may have committed.
        n += 1
        try:
            if conn is None:
                conn = psycopg2.connect(dsn)
                conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute("INSERT INTO acked VALUES (%s)", (n,))
            out.write(f"ok {n} {time.time():.3f}\n")
            failing = False
        except psycopg2.Error as e:
            if not failing:
                msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                out.write(f"err {n} {time.time():.3f} {msg}\n")
                failing = True
            if conn is not None:
                conn.close()
                conn = None
        time.sleep(0.02)


class RespError(Exception):
    pass


def resp_call(f, *args):
    """One command, its reply (a str, int, None or list); an error reply raises RespError."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    f.write(out)
    f.flush()
    return resp_read(f)


def resp_read(f):
    line = f.readline()
    if not line.endswith(b"\r\n"):
        raise RespError("connection closed")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RespError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)
        if len(data) != n + 2:
            raise RespError("connection closed")
        return data[:-2].decode()
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [resp_read(f) for _ in range(n)]
    raise RespError(f"bad reply {line!r}")


def resp_connect(host, port, password):
    s = socket.create_connection((host, int(port)), timeout=1)
    f = s.makefile("rwb")
    resp_call(f, "AUTH", password)
    return s, f


def redis_master(sentinels):
    """The master's connection, as the first sentinel that answers names it; its ROLE checked."""
    for sa in sentinels.split(","):
        host, port = sa.rsplit(":", 1)
        try:
            s, f = resp_connect(host, port, os.environ["SENTINEL_PASSWORD"])
            try:
                addr = resp_call(f, "SENTINEL", "get-master-addr-by-name", "gitlab-redis")
            finally:
                s.close()
        except (OSError, RespError):
            continue
        if addr:
            s, f = resp_connect(addr[0], addr[1], os.environ["REDIS_PASSWORD"])
            role = resp_call(f, "ROLE")
            if role[0] != "master":
                s.close()
                raise RespError(f"{addr[0]} is a {role[0]}")
            return s, f
    raise RespError("no sentinel answers")


def rwrite(sentinels, log, n):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    out = open(log, "a", buffering=1)
    conn, failing = None, False
    while not stop:
        n += 1
        try:
            if conn is None:
                conn = redis_master(sentinels)
            resp_call(conn[1], "RPUSH", "acked", n)
            out.write(f"ok {n} {time.time():.3f}\n")
            failing = False
        except (OSError, RespError) as e:
            if not failing:
                out.write(f"err {n} {time.time():.3f} {e}\n")
                failing = True
            if conn is not None:
                conn[0].close()
                conn = None
        time.sleep(0.02)


def back_after(lines, t0):
    """Seconds from t0 to the first ok after the first err after t0; 0 if none failed."""
    t_err = None
    for kind, t in lines:
        if t < t0:
            continue
        if t_err is None:
            if kind == "err":
                t_err = t
        elif kind == "ok":
            return f"{t - t0:.1f}"
    return "0" if t_err is None else "-"


def read(log):
    lines, acked = [], set()
    with open(log) as f:
        for line in f:
            p = line.split()
            if len(p) < 3:
                continue
            lines.append((p[0], float(p[2])))
            if p[0] == "ok":
                acked.add(int(p[1]))
    return lines, acked


def main():
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "report":
        lines, acked = read(sys.argv[3])
        lost = "-"
        for _ in range(30):  # a primary, within 30 s
            try:
                with psycopg2.connect(sys.argv[2]) as conn, conn.cursor() as cur:
                    cur.execute("SELECT n FROM acked")
                    lost = len(acked - {r[0] for r in cur.fetchall()})
                break
            except psycopg2.Error:
                time.sleep(1)
        print(back_after(lines, float(sys.argv[4])), len(acked), lost)
    elif sys.argv[1] == "rwrite":
        rwrite(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "rreport":
        lines, acked = read(sys.argv[3])
        lost = "-"
        for _ in range(30):  # a master, within 30 s
            try:
                s, f = redis_master(sys.argv[2])
                with s:
                    lost = len(acked - {int(v) for v in resp_call(f, "LRANGE", "acked", 0, -1)})
                break
            except (OSError, RespError):
                time.sleep(1)
        print(back_after(lines, float(sys.argv[4])), len(acked), lost)
    elif sys.argv[1] == "series":
        lines, _ = read(sys.argv[2])
        print(back_after(lines, float(sys.argv[3])))
    else:
        sys.exit("usage: writer.py write|report|rwrite|rreport|series ...")


main()
