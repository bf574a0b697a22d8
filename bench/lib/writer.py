#!/usr/bin/python3
"""bench/lib/pgwriter.py: the client side of bench/failover (Debian's python3 and psycopg2,
the one Patroni uses).

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
  series LOG T0       seconds from T0 to the first "ok" line after the first "err" line after
                      T0 (0: none failed; "-" when none came back), for a poller's log.
"""
import signal
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
    elif sys.argv[1] == "series":
        lines, _ = read(sys.argv[2])
        print(back_after(lines, float(sys.argv[3])))
    else:
        sys.exit("usage: pgwriter.py write|report|series ...")


main()
