"""pgcluster - a private, throwaway PostgreSQL 15 cluster for the tests of
the PostgreSQL store. Python 3 standard library only.

    with PgCluster() as pg:                 # initdb + start
        os.environ["VEP_TEST_PG"] = pg.conninfo
        pg.psql("select count(*) from pg_stat_activity")   # "3\n"
        pg.stop()                           # fault drill: the server goes away
        pg.start()                          # ... and comes back, same data
    # stopped, and its directory removed

The cluster lives in a new temporary directory (under $TMPDIR, /tmp by
default): data/ (the data directory), sock/ (the server's Unix socket, the
only way in: listen_addresses is '') and postgres.log (the server's
output). Nothing touches a system cluster, /var/run/postgresql or a TCP port.

The role vep and the database vep, owned by it, are made at the first start:
conninfo connects as vep, a plain role (no superuser, as the authority will
be in production). The bootstrap superuser is postgres (SUPERUSER). Every
local connection is trusted (pg_hba.conf: "local all all trust"). Encoding
UTF8, locale C, time zone UTC.

Run as root (as in CI), the server runs as an unprivileged user (nobody
unless told otherwise): initdb refuses root. The socket is usable by any
user (directory 0755, socket 0777), so an authority that drops its
privileges to yet another user still connects.

The postmaster is started directly (not by pg_ctl, whose setsid() would take
it out of our process group) as a child of this process, in its process
group: a signal meson sends to the test's group on a timeout reaches it too.
Besides, the cluster stops (immediate shutdown, SIGQUIT) on close(), at
exit, on SIGTERM (the handler then carries on with whatever handled SIGTERM
before: by default, dying of it), and, should this process die in a way
none of these see (SIGKILL, a crash), a small watchdog process notices (its
pipe from us reaches end of file) and stops the server and removes the
directory. (The watchdog has a session of its own, so that a SIGKILL to
the whole group spares it: the postmaster dies of that one, but its
children, which PostgreSQL puts in sessions of their own, take a moment to
follow, and the directory is left to remove.)

Speed: durable=False (the default) sets fsync = off and runs initdb
--no-sync. Commits still reach the kernel, so data survives any stop of
PostgreSQL itself (immediate stops and kills included): only a crash of the
whole machine could lose it. durable=True keeps PostgreSQL's defaults.

All clusters use port 5432: with listen_addresses = '' the port is only part
of the socket's file name (sock/.s.PGSQL.5432), and each cluster has its own
socket directory, so clusters running in parallel never meet (PostgreSQL 15
derives its System V shared memory key from the data directory, not the
port). A fixed port also means nothing to choose and no race over a free one.
"""

import atexit
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

PG_BINDIR = "/usr/lib/postgresql/15/bin"
PG_PACKAGE = "postgresql-15"        # the Debian package that installs PG_BINDIR
SUPERUSER = "postgres"
ROLE = DBNAME = "vep"
PORT = 5432
START_TIMEOUT_S = 60                # initdb and crash recovery on a slow CI machine
STOP_TIMEOUT_S = 20

# stop() modes: PostgreSQL's shutdown signals.
MODES = {"smart": signal.SIGTERM, "fast": signal.SIGINT, "immediate": signal.SIGQUIT}

# The watchdog, one per cluster, run as "python3 -c WATCHDOG DIR" in a
# session of its own: reads lines from its stdin, a pipe from the test
# process, each the postmaster's pid or 0 when none runs. End of file comes
# when the test process is gone, however it went (or at close()): it then
# stops the last postmaster (immediate, then SIGKILL after 10 s) and removes
# DIR. It ignores the signals meant for the test process: stopping the
# server is its job.
WATCHDOG = r"""
import os, shutil, signal, sys, time
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
pid, top = 0, sys.argv[1]
for line in sys.stdin.buffer:
    pid = int(line)
def gone():
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True
for sig, wait in ((signal.SIGQUIT, 10), (signal.SIGKILL, 5)) if pid else ():
    try:
        os.kill(pid, sig)
    except OSError:
        pass
    end = time.time() + wait
    while not gone() and time.time() < end:
        time.sleep(0.05)
shutil.rmtree(top, ignore_errors=True)
"""


class PgMissing(RuntimeError):
    """The PostgreSQL 15 programs are not installed: a failure, not a skip."""


def _value(v):
    """A libpq keyword/value string's value, quoted when it must be."""
    v = str(v)
    if v and not any(c in v for c in " '\\\t\n"):
        return v
    return "'%s'" % v.replace("\\", "\\\\").replace("'", "\\'")


def _env(**extra):
    """Our environment for PostgreSQL's programs, less what could point them
    elsewhere or change them: PG* (PGHOST, PGDATA, PGOPTIONS...) and
    LD_PRELOAD (a test's pam_wrapper, say)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG") and k != "LD_PRELOAD"}
    env.update(extra)
    return env


def _tail(path, lines=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return "(no log: %s)" % e


class PgCluster:
    def __init__(self, durable=False, user=None, port=PORT, bindir=PG_BINDIR):
        """durable: keep fsync on (see the module's comment). user: the user
        the server runs as when we are root ("nobody" unless given; ignored
        when we are not root: the server runs as us)."""
        self.durable = durable
        self.port = port
        self.bindir = bindir
        for prog in ("initdb", "postgres"):
            if not os.access(os.path.join(bindir, prog), os.X_OK):
                raise PgMissing("%s/%s not found: install the Debian package %s "
                                "(apt-get install %s)" % (bindir, prog, PG_PACKAGE, PG_PACKAGE))
        self.psql_path = next((p for p in (os.path.join(bindir, "psql"), "/usr/bin/psql")
                               if os.access(p, os.X_OK)), None)
        if not self.psql_path:
            raise PgMissing("psql not found: install the Debian package postgresql-client-15 "
                            "(%s depends on it)" % PG_PACKAGE)
        self.run_as = None          # (uid, gid) of the server when we are root
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam(user or "nobody")
            except KeyError:
                raise RuntimeError("no user %r to run PostgreSQL as (initdb refuses root)"
                                   % (user or "nobody"))
            if pw.pw_uid == 0:
                raise RuntimeError("PostgreSQL cannot run as root: give another user")
            self.run_as = (pw.pw_uid, pw.pw_gid)
        self.top = None             # the temporary directory, once made
        self.proc = None            # the postmaster, while it runs
        self.watchdog = None
        self.log = None             # the log's file object, while the postmaster runs

    # --- Where things are ---

    @property
    def data_dir(self):
        return os.path.join(self.top, "data")

    @property
    def socket_dir(self):
        return os.path.join(self.top, "sock")

    @property
    def log_path(self):
        return os.path.join(self.top, "postgres.log")

    def dsn(self, user=ROLE, dbname=DBNAME):
        """A libpq keyword/value connection string for user and dbname."""
        return "host=%s port=%d dbname=%s user=%s" % (
            _value(self.socket_dir), self.port, _value(dbname), _value(user))

    @property
    def conninfo(self):
        """How the authority connects: as vep, to vep."""
        return self.dsn()

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def log_text(self):
        """The server's output so far (all its starts)."""
        with open(self.log_path, errors="replace") as f:
            return f.read()

    # --- Start and stop ---

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def _popen(self, args, **kw):
        """Starts one of PostgreSQL's programs, as the server's user."""
        if self.run_as:
            kw.update(user=self.run_as[0], group=self.run_as[1], extra_groups=[])
        return subprocess.Popen(args, env=_env(LC_ALL="C"), cwd=self.top, **kw)

    def _init(self):
        """Makes the directory and runs initdb."""
        self.top = tempfile.mkdtemp(prefix="vep-pg-")
        _live.add(self)
        _install_handlers()
        self.watchdog = subprocess.Popen([sys.executable, "-c", WATCHDOG, self.top],
                                         stdin=subprocess.PIPE, bufsize=0,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         start_new_session=True, env=_env())
        os.chmod(self.top, 0o755)
        # The server's user (and any user the authority runs as) must reach
        # the socket: every directory above it must let others through.
        d = os.path.dirname(self.top)
        while self.run_as and d != "/":
            if not os.stat(d).st_mode & 0o001:
                raise RuntimeError("%s is closed to other users, so PostgreSQL (run as uid %d) "
                                   "cannot reach %s: set TMPDIR to a directory others can reach, "
                                   "such as /tmp" % (d, self.run_as[0], self.top))
            d = os.path.dirname(d)
        # A Unix socket's path is at most 107 bytes.
        if len(os.path.join(self.socket_dir, ".s.PGSQL.%d.lock" % self.port)) > 107:
            raise RuntimeError("%s: too long a path for a Unix socket: set a shorter TMPDIR"
                               % self.socket_dir)
        os.mkdir(self.data_dir, 0o700)
        os.mkdir(self.socket_dir, 0o755)
        os.chmod(self.socket_dir, 0o755)        # whatever the umask
        if self.run_as:
            os.chown(self.data_dir, *self.run_as)
            os.chown(self.socket_dir, *self.run_as)
        args = [os.path.join(self.bindir, "initdb"), "-D", self.data_dir, "-U", SUPERUSER,
                "-A", "trust", "-E", "UTF8", "--locale=C", "--no-instructions"]
        if not self.durable:
            args.append("--no-sync")
        p = self._popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = p.communicate(timeout=START_TIMEOUT_S)[0]
        if p.returncode != 0:
            raise RuntimeError("initdb: exit %d:\n%s" % (p.returncode, out.decode(errors="replace")))
        # Our settings come last in postgresql.conf, so they win.
        conf = ["listen_addresses = ''",
                "port = %d" % self.port,
                "unix_socket_directories = '%s'" % self.socket_dir.replace("'", "''"),
                "unix_socket_permissions = 0777",
                "timezone = 'UTC'",
                "log_timezone = 'UTC'"]
        if not self.durable:
            conf.append("fsync = off")
        with open(os.path.join(self.data_dir, "postgresql.conf"), "a") as f:
            f.write("\n# tests/pgcluster.py\n" + "\n".join(conf) + "\n")
        with open(os.path.join(self.data_dir, "pg_hba.conf"), "w") as f:
            f.write("# tests/pgcluster.py: the Unix socket only, everyone trusted\n"
                    "local all all trust\n")
        if self.run_as:
            os.chown(os.path.join(self.data_dir, "pg_hba.conf"), *self.run_as)

    def start(self):
        """Starts the server (making the cluster first, the first time) and
        waits until it accepts connections; returns self. Nothing when it
        runs already. A start after stop() keeps the data (an immediate
        stop means crash recovery now: the log says so)."""
        if self.running:
            return self
        first = self.top is None
        if first:
            try:
                self._init()
            except BaseException:
                self.close()
                self.top = None
                raise
        self.log = open(self.log_path, "ab")
        self.proc = self._popen([os.path.join(self.bindir, "postgres"), "-D", self.data_dir],
                                stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        self._tell(self.proc.pid)
        try:
            self._wait_ready()
            if first:
                self.psql("CREATE ROLE %s LOGIN;\nCREATE DATABASE %s OWNER %s;\n"
                          % (ROLE, DBNAME, ROLE), user=SUPERUSER, dbname="postgres")
        except BaseException:
            if first:
                self.close()        # all of it: a next start() starts afresh
                self.top = None
            else:
                self.stop()
            raise
        return self

    def _wait_ready(self):
        """Waits for postmaster.pid to say "ready", as pg_ctl -w does."""
        pidfile = os.path.join(self.data_dir, "postmaster.pid")
        deadline = time.time() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("postgres exited (%d) while starting:\n%s"
                                   % (self.proc.returncode, _tail(self.log_path)))
            try:
                with open(pidfile) as f:
                    lines = f.read().splitlines()
                # Line 1: the postmaster's pid; line 8: its status.
                if len(lines) >= 8 and lines[0] == str(self.proc.pid) and lines[7].strip() == "ready":
                    return
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError("postgres not ready after %d s:\n%s"
                                   % (START_TIMEOUT_S, _tail(self.log_path)))
            time.sleep(0.01)

    def stop(self, mode="immediate", timeout=STOP_TIMEOUT_S):
        """Stops the server, keeping the cluster for start(). mode: "immediate"
        (the default: no checkpoint, as if it crashed; clients see their
        connections drop), "fast" (clients disconnected, checkpoint) or
        "smart" (waits for the clients to disconnect). A server not stopped
        after timeout seconds is killed, and stop() then raises. Nothing when
        it is not running."""
        if self.proc is None:
            return
        self._tell(0)               # before the pid can be reaped, and reused
        late = False
        try:
            if self.proc.poll() is None:
                self.proc.send_signal(MODES[mode])
                try:
                    self.proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    late = True
                    self.proc.kill()
                    self.proc.wait()
        finally:
            self.proc = None
            self.log.close()
            self.log = None
        if late:
            raise RuntimeError("postgres did not stop (%s) in %d s: killed" % (mode, timeout))

    def restart(self, mode="immediate"):
        """stop(mode), then start(); returns self."""
        self.stop(mode)
        return self.start()

    def close(self):
        """Stops the server and removes the cluster's directory."""
        try:
            self.stop()
        finally:
            if self.top:
                shutil.rmtree(self.top, ignore_errors=True)
            if self.watchdog:
                self.watchdog.stdin.close()         # it has nothing left to do
                self.watchdog.wait()
                self.watchdog = None
            _live.discard(self)

    def _tell(self, pid):
        """Tells the watchdog the postmaster's pid (0: none)."""
        try:
            os.write(self.watchdog.stdin.fileno(), b"%d\n" % pid)
        except (AttributeError, OSError):
            pass                    # no watchdog (any more): nothing to tell

    def _emergency_stop(self):
        """For a signal handler, which may have interrupted this very
        cluster's start() or stop(), so waits on nothing of Popen's:
        SIGQUIT, then SIGKILL if the postmaster has not exited in 5 s."""
        watchdog, proc = self.watchdog, self.proc
        if proc:
            for sig in (signal.SIGQUIT, signal.SIGKILL):
                if _exited(proc):
                    break
                os.kill(proc.pid, sig)
                end = time.time() + 5
                while not _exited(proc) and time.time() < end:
                    time.sleep(0.01)
        if self.top:
            shutil.rmtree(self.top, ignore_errors=True)
        if watchdog:
            watchdog.kill()

    # --- SQL ---

    def psql(self, sql, user=ROLE, dbname=DBNAME, timeout=60):
        """Runs sql (one or more statements, each in its own transaction
        unless it says BEGIN) through psql as user; returns its stdout: rows
        unaligned ("|" between columns), without headers or command tags.
        Raises on the first error."""
        p = subprocess.run([self.psql_path, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-d", self.dsn(user, dbname), "-f", "-"],
                           input=sql.encode(), capture_output=True, timeout=timeout,
                           env=_env(PGCLIENTENCODING="UTF8"))
        if p.returncode != 0:
            raise RuntimeError("psql: exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")))
        return p.stdout.decode()


# --- Stopping everything when this process ends ------------------------------

_live = set()                   # clusters with a directory
_owner = os.getpid()            # a fork's child must not stop our clusters
_previous = []                  # SIGTERM's handler before ours, once ours is in
_atexit = []


def _exited(proc):
    """Whether the child proc has exited, without reaping it (WNOWAIT):
    Popen, which a signal handler may have interrupted, reaps it."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _stop_all():
    if os.getpid() == _owner:
        for c in list(_live):
            c.close()


def _on_sigterm(signum, frame):
    if os.getpid() == _owner:
        for c in list(_live):
            c._emergency_stop()
        _live.clear()
    previous = _previous[0]
    if callable(previous):
        previous(signum, frame)
    elif previous != signal.SIG_IGN:
        # The default (or a handler not set from Python): die of the signal.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _install_handlers():
    """atexit once, and SIGTERM once from the main thread (Python sets
    signal handlers from no other)."""
    if not _atexit:
        _atexit.append(atexit.register(_stop_all))
    if not _previous and threading.current_thread() is threading.main_thread():
        _previous.append(signal.signal(signal.SIGTERM, _on_sigterm))
