#!/usr/bin/env python3
"""pg_run - runs one test program against a fresh PostgreSQL 15 cluster:

    python3 tests/unit/pg_run.py BINARY [ARGS...]

starts a cluster (../pgcluster.py), runs BINARY with VEP_TEST_PG set to its
libpq connection string, stops and removes the cluster, and exits with
BINARY's status (128+N when signal N ended it). When BINARY fails, the
server's log ends stderr. A cluster that does not start is a failure (exit
1), never a skip: PostgreSQL 15 is a dependency of the test suite.
"""

import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import pgcluster  # noqa: E402


def main(argv):
    if len(argv) < 2:
        print("usage: %s BINARY [ARGS...]" % argv[0], file=sys.stderr)
        return 2
    child = []

    # meson's timeout sends SIGTERM (to the whole process group, BINARY
    # included; by hand, perhaps to us alone). pgcluster's own handler,
    # installed at start, stops the cluster first, then calls this one.
    def on_term(signum, frame):
        if child and child[0].poll() is None:
            child[0].send_signal(signum)
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)

    try:
        pg = pgcluster.PgCluster().start()
    except Exception as e:
        print("pg_run: no PostgreSQL cluster: %s" % e, file=sys.stderr)
        return 1
    try:
        env = dict(os.environ, VEP_TEST_PG=pg.conninfo)
        try:
            child.append(subprocess.Popen(argv[1:], env=env))
        except OSError as e:
            print("pg_run: cannot run %s: %s" % (argv[1], e), file=sys.stderr)
            return 127
        rc = child[0].wait()
        if rc != 0:
            sys.stdout.flush()
            print("pg_run: %s exited %d; the PostgreSQL log:\n%s"
                  % (argv[1], rc, pgcluster._tail(pg.log_path, 50)), file=sys.stderr)
    finally:
        pg.close()
    return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
