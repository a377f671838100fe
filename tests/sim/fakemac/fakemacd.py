#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fakemacd.py - the fast path for the fake macOS commands of one simulated host.

    fakemacd.py HOSTDIR SOCKET

simcluster.sh starts one per host, from the shell that starts the host's sshd (after
its network namespace, UTS namespace, private mounts, home and overlays are in
place), so the daemon and its workers see exactly what a command run over ssh on
that host sees.  It imports fakemac.py once; the wrappers
in HOSTDIR/bin exec the small C client fakemac-client.c, which talks to it:

  client -> daemon   header (see HDR and fakemac-client.c), the client's fds 0/1/2
                     and its cwd (SCM_RIGHTS), then argv and environ, NUL-separated;
                     who the client is comes from the kernel: SO_PEERCRED names its
                     process, whose real, effective and saved ids and groups
                     (/proc/PID/status) the command then runs with
  daemon -> client   b"F": a worker runs the command (or b"X": this request needs a
                     fresh interpreter, e.g. PYTHONPATH is set; the client then
                     execs fakemac.py itself, exactly as the old wrappers did), then
                     the command's raw wait status (4 bytes, native int)
  client -> daemon   one byte per signal the client caught while waiting (forwarded
                     to the worker); EOF before the status (the client was killed):
                     SIGKILL to the worker's process group

Workers are forks of the daemon (so everything is imported already) that serve one
request at a time, in-process, and then wait for the next: no fork, no interpreter
start-up, no copy-on-write faults per command.  For each request a worker takes the
client's fds 0/1/2, cwd, umask, nice value, rlimits, signal mask and ignored
signals, environment and credentials (uids, gids, groups: the daemon runs as root,
and a stock Mac's fakes decide "privileged" by the effective uid, write their logs
as that user, and are refused what that user is refused; the saved uid stays 0 so
that the worker can come back); rebuilds sys.stdin/stdout/stderr the way the interpreter
does at start-up (encoding, errors, buffering from PYTHONUNBUFFERED and isatty,
C-locale coercion LC_CTYPE=C.UTF-8); sets sys.argv as the old wrapper did; runs
fakemac.py's own `if __name__ == "__main__":` block (compiled from fakemac.py with
its real line numbers, so tracebacks read the same); ends the way the interpreter
would (SystemExit code, uncaught exception -> traceback and 1, KeyboardInterrupt ->
death by SIGINT, a failing flush of stdout -> "Exception ignored" and 120); then
puts everything back.  SIGUSR1 makes the daemon write HOSTDIR/fakemacd.stats,
"served=N fallback=M": the requests a worker ran and those sent back to the
interpreter path (b"X"), for the tests.  fakemac.py is not changed: log lines, `ip` calls and state
files are its own.  The one thing a worker does differently is the exec of the fake
`sudo`: the program runs as the worker's child (posix_spawn with the same argv,
environment and PATH search as os.execvpe, signals forwarded to it) and its wait
status becomes the command's, so the worker survives.
"""

import ast
import gc
import io
import locale
import os
import resource
import selectors
import signal
import socket
import struct
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fakemac  # noqa: E402  (the fake commands; imported once, used by every request)

MAGIC = 0x31434d46            # "FMC1"
HDR = struct.Struct("=qqqqqqqQQ" + "q" * 32)   # see fakemac-client.c
NRLIM = 16
DONE = struct.Struct("=ii")   # worker -> daemon: raw wait status, reusable
NGROUPS = 64
CRED = struct.Struct("=7i" + "i" * NGROUPS)   # ruid euid suid rgid egid sgid n groups...
CHUNK = 1 << 16
MAX_IDLE = 4                  # idle workers kept per host
MAX_SERVED = 2000             # requests per worker before it is replaced
# PYTHON* variables that do not change what fakemac.py prints or does; any other
# non-empty one (PYTHONPATH, PYTHONIOENCODING, PYTHONUTF8, PYTHONWARNINGS, ...)
# sends the request down the interpreter path (b"X").
PY_OK = {b"PYTHONUNBUFFERED", b"PYTHONDONTWRITEBYTECODE", b"PYTHONPYCACHEPREFIX",
         b"PYTHONFAULTHANDLER", b"PYTHONASYNCIODEBUG", b"PYTHONBREAKPOINT"}
COERCION_TARGETS = ("C.UTF-8", "C.utf8", "UTF-8")   # CPython's _TARGET_LOCALES
CATCHABLE = [s for s in range(1, signal.NSIG)
             if s not in (signal.SIGKILL, signal.SIGSTOP) and not 32 <= s < signal.SIGRTMIN]
# what the client forwards (fakemac-client.c fwd_sigs)
FORWARDED = [signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGUSR1,
             signal.SIGUSR2, signal.SIGALRM, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGVTALRM,
             signal.SIGPROF, signal.SIGWINCH]
FORWARDED_SET = set(FORWARDED)

LOG_FD = 2
OWN = {}                      # the daemon's umask, nice value, rlimits


def log(msg):
    try:
        os.write(LOG_FD, f"{time.strftime('%H:%M:%S')} fakemacd[{os.getpid()}] {msg}\n".encode())
    except OSError:
        pass


def fresh(s):
    """A fresh interpreter's disposition for signal s (inherited ones aside)."""
    if s == signal.SIGINT:
        return signal.default_int_handler
    if s in (signal.SIGPIPE, signal.SIGXFSZ):
        return signal.SIG_IGN
    return signal.SIG_DFL


def normalize_signals():
    """Fresh-interpreter dispositions and an empty mask, whatever the daemon inherited
    (a background job of a script ignores INT and QUIT)."""
    for s in CATCHABLE:
        try:
            if signal.getsignal(s) is not fresh(s):
                signal.signal(s, fresh(s))
        except (OSError, ValueError):
            pass
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def peer_creds(conn):
    """The client's credentials: (ruid, euid, suid, rgid, egid, sgid, groups), from
    the kernel's SO_PEERCRED (its pid, effective ids) and its /proc status."""
    pid, uid, gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                        struct.calcsize("3i")))
    ids = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Uid", "Gid", "Groups"):
                ids[k] = [int(x) for x in v.split()]
    u, g, groups = ids["Uid"], ids["Gid"], ids.get("Groups", [])
    if u[1] != uid or g[1] != gid or len(groups) > NGROUPS:
        raise ConnectionError("credentials changed")
    return (u[0], u[1], u[2], g[0], g[1], g[2], groups)


def pack_creds(c):
    groups = list(c[6]) + [0] * (NGROUPS - len(c[6]))
    return CRED.pack(*c[:6], len(c[6]), *groups)


def unpack_creds(b):
    v = CRED.unpack(b)
    return v[:6] + (list(v[7:7 + v[6]]),)


def own_creds():
    return os.getresuid() + os.getresgid() + (os.getgroups(),)


def become(c):
    """Take the client's credentials (the saved uid stays 0: the way back)."""
    ruid, euid, _suid, rgid, egid, sgid, groups = c
    os.setgroups(groups)
    os.setresgid(rgid, egid, sgid)
    os.setresuid(ruid, euid, 0)


def come_back():
    u, g = OWN["creds"][:3], OWN["creds"][3:6]
    os.setresuid(*u)
    os.setresgid(*g)
    os.setgroups(OWN["creds"][6])


def get_rlimits():
    res = []
    for r in range(NRLIM):
        try:
            res += list(resource.getrlimit(r))
        except (OSError, ValueError):
            res += [-1, -1]
    return tuple(res)


def set_rlimits(want):
    for r in range(NRLIM):
        w = (want[2 * r], want[2 * r + 1])
        try:
            if resource.getrlimit(r) != w:
                resource.setrlimit(r, w)
        except (OSError, ValueError):
            pass


def main_block_code(script):
    """fakemac.py's `if __name__ == "__main__":` body, with its own positions."""
    with open(script, "rb") as f:
        src = f.read()
    tree = ast.parse(src, script)
    for node in reversed(tree.body):
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"):
            return compile(ast.Module(body=node.body, type_ignores=[]), script, "exec")
    raise SystemExit(f"fakemacd: no __main__ block in {script}")


def unraisable_args_type():
    got = []
    old = sys.unraisablehook
    sys.unraisablehook = got.append
    try:
        class _X:
            def __del__(self):
                raise RuntimeError

        _X()
        gc.collect()
    finally:
        sys.unraisablehook = old
    return type(got[0])


# --------------------------------------------------------------------------
# what a fresh interpreter would pick for this environment

_locale_cache = {}


def ctype_locale(env):
    """(name setlocale(LC_CTYPE, "") gives, codeset) for env, cached; "C" when the
    named locale is not installed (the interpreter then stays in the C locale)."""
    name = b""
    for k in (b"LC_ALL", b"LC_CTYPE", b"LANG"):
        if env.get(k):
            name = env[k]
            break
    if name not in _locale_cache:
        saved = locale.setlocale(locale.LC_CTYPE)
        try:
            try:
                got = locale.setlocale(locale.LC_CTYPE, os.fsdecode(name) if name else "C")
            except (locale.Error, ValueError):
                got = locale.setlocale(locale.LC_CTYPE, "C")
            codeset = locale.nl_langinfo(locale.CODESET)
        finally:
            locale.setlocale(locale.LC_CTYPE, saved)
        _locale_cache[name] = (got, codeset)
    return _locale_cache[name]


def supported(env):
    for k, v in env.items():
        if k.startswith(b"PYTHON") and v and k not in PY_OK:
            return False
    loc, codeset = ctype_locale(env)
    return loc in ("C", "POSIX") or codeset.upper().replace("-", "") == "UTF8"


def parse_env(strs):
    env = {}
    for kv in strs:
        k, sep, v = kv.partition(b"=")
        if sep and k and k not in env:     # first of duplicate names wins, as in os.environ
            env[k] = v
    return env


# --------------------------------------------------------------------------
# a worker: run one request in-process, as a fresh interpreter would have

class Exec(BaseException):
    """fakemac's sudo exec'd a program; it ran as our child and ended with status."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


def make_stdio(fd, write, name, encoding, errors, buffered):
    """sys.stdin/stdout/stderr as CPython's create_stdio() builds them."""
    buffering = 0 if (write and not buffered) else -1
    buf = io.open(fd, "wb" if write else "rb", buffering, closefd=False)
    raw = buf if buffering == 0 else buf.raw
    raw.name = name
    isatty = raw.isatty()
    stream = io.TextIOWrapper(buf, encoding, errors, "\n",
                              buffered and (isatty or fd == 2), not buffered)
    stream.mode = "w" if write else "r"
    return stream


def spawn_execve(path, args, env):
    """os.execve for fakemac's sudo (os._execvpe calls it for each PATH candidate):
    the program starts exactly as exec would start it (same argv, environment, fds,
    cwd, umask, rlimits, mask; caught signals back to default, ignored ones stay
    ignored), as our child; signals forwarded to us go on to it; when it ends, its
    wait status ends the request (Exec).  A failed exec raises the same OSError."""
    # os.execve's own argument checks, with its messages
    if not isinstance(args, (list, tuple)):
        raise TypeError("execve: argv must be a tuple or list")
    if len(args) < 1:
        raise ValueError("execve: argv must not be empty")
    if not hasattr(env, "keys"):
        raise TypeError("execve: environment must be a mapping object")
    if args[0] in ("", b""):
        raise ValueError("execve: argv first element cannot be empty")
    box = {"pidfd": None, "pending": []}

    def forward(sig, _frame):
        if box["pidfd"] is None:
            box["pending"].append(sig)
        else:
            try:
                signal.pidfd_send_signal(box["pidfd"], sig)
            except OSError:
                pass

    before = {}
    for s in FORWARDED:
        h = signal.getsignal(s)
        if h is not signal.SIG_IGN:
            before[s] = h
            signal.signal(s, forward)
    try:
        pid = os.posix_spawn(path, args, env)
    except OSError:                 # no exec: back as we were, signals included
        for s, h in before.items():
            signal.signal(s, h)
        for s in box["pending"]:
            os.kill(os.getpid(), s)
        box["pending"] = []
        raise
    box["pidfd"] = os.pidfd_open(pid)
    for s in box["pending"]:
        forward(s, None)
    _, status = os.waitpid(pid, 0)
    os.close(box["pidfd"])
    box["pidfd"] = -1
    raise Exec(status)


def strip_own_frames(exc, seen=None):
    """Tracebacks as a fresh interpreter prints them: without this file's frames."""
    seen = seen if seen is not None else set()
    if exc is None or id(exc) in seen:
        return
    seen.add(id(exc))
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename != __file__:
            frames.append(tb)
        tb = tb.tb_next
    new = None
    for t in reversed(frames):
        new = types.TracebackType(new, t.tb_frame, t.tb_lasti, t.tb_lineno)
    exc.__traceback__ = new
    strip_own_frames(exc.__cause__, seen)
    strip_own_frames(exc.__context__, seen)


def idle_disposition(s):
    """Between requests the forwarded signals are ignored: one that the daemon sent
    just as a command ended is dropped instead of hitting the next command."""
    return signal.SIG_IGN if s in FORWARDED_SET else fresh(s)


class Worker:
    def __init__(self, ctl, main_code, uha):
        self.ctl, self.main_code, self.uha = ctl, main_code, uha

    def setup(self, h, fds, strs, creds):
        """Become the client's process: fds, cwd, umask, nice, rlimits, signals,
        environment, locale, stdio, argv, credentials.  Returns what reset()
        needs."""
        fdmask = h[1]
        received = list(fds)
        taken = []
        for target in (0, 1, 2):
            if fdmask & (1 << target):
                os.dup2(fds.pop(0), target)
                taken.append(target)
        os.fchdir(fds.pop(0))
        for target in (0, 1, 2):
            if target not in taken:
                os.close(target)
        for fd in received:
            os.close(fd)
        os.umask(h[5])
        nice_changed = h[6] != OWN["nice"]
        if nice_changed:
            try:
                os.setpriority(os.PRIO_PROCESS, 0, h[6])
            except OSError:
                pass
        rl = h[9:9 + 2 * NRLIM]
        rl_changed = rl != OWN["rlimits"]
        if rl_changed:
            set_rlimits(rl)
        # signals: fresh-interpreter dispositions, plus what the client ignores (an
        # exec keeps ignored signals ignored), plus its blocked mask
        ign, mask = h[7], h[8]
        changed = []
        for s in CATCHABLE if ign else FORWARDED:
            want = signal.SIG_IGN if ign & (1 << (s - 1)) else fresh(s)
            if signal.getsignal(s) is not want:
                signal.signal(s, want)
                changed.append(s)
        masked = [s for s in CATCHABLE if mask & (1 << (s - 1))] if mask else []
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, masked)
        # environment, in the client's order
        data = os.environ._data          # bytes -> bytes behind os.environ and os.environb
        for k in data:
            os.unsetenv(k)
        data.clear()
        env = {}
        for kv in strs[h[2]:]:
            k, sep, v = kv.partition(b"=")
            if sep and k and k not in env:
                env[k] = v
                os.putenv(k, v)
                data[k] = v
        # C-locale coercion (PEP 538) and UTF-8 mode (PEP 540), as at interpreter start
        loc, _codeset = ctype_locale(env)
        utf8_mode = loc in ("C", "POSIX")
        if utf8_mode and not env.get(b"LC_ALL"):
            for target in COERCION_TARGETS:
                try:
                    locale.setlocale(locale.LC_CTYPE, target)
                except locale.Error:
                    continue
                os.environb[b"LC_CTYPE"] = target.encode()
                loc = target
                break
        else:
            try:
                locale.setlocale(locale.LC_CTYPE, loc)
            except locale.Error:
                pass
        errors = "surrogateescape" if (utf8_mode or loc in COERCION_TARGETS) else "strict"
        buffered = not env.get(b"PYTHONUNBUFFERED")
        sys.stdin = sys.__stdin__ = (make_stdio(0, False, "<stdin>", "utf-8", errors, buffered)
                                     if 0 in taken else None)
        sys.stdout = sys.__stdout__ = (make_stdio(1, True, "<stdout>", "utf-8", errors, buffered)
                                       if 1 in taken else None)
        sys.stderr = sys.__stderr__ = (make_stdio(2, True, "<stderr>", "utf-8",
                                                  "backslashreplace", buffered)
                                       if 2 in taken else None)
        # fakemac.py reads FAKEMAC_OFFLINE once, at start-up: as a new process would
        fakemac.OFFLINE = env.get(b"FAKEMAC_OFFLINE") == b"1"
        argv = [os.fsdecode(a) for a in strs[:h[2]]]
        # the wrapper's PY SCRIPT HOSTDIR CMD ARGS... -> fakemac.py's sys.argv
        sys.argv = [argv[1], "--simhost", argv[2]] + argv[3:]
        sys.orig_argv = [argv[0]] + sys.argv
        creds_changed = creds != OWN["creds"]
        if creds_changed:
            become(creds)
        return nice_changed, rl_changed, changed, masked, creds_changed

    def execute(self, masked):
        """Run fakemac.py's __main__ block and end as the interpreter would.
        -> (raw wait status, reusable); never raises."""
        status, reusable, flush, kbd = 0, True, True, False
        try:
            try:
                exec(self.main_code, fakemac.__dict__)
            except SystemExit as e:
                code = e.code
                if code is None:
                    status = 0
                elif isinstance(code, int):
                    status = code if -(1 << 31) <= code < (1 << 31) else -1
                else:
                    if sys.stderr is not None:
                        sys.stderr.write(str(code) + "\n")
                    status = 1
                status = (status & 0xff) << 8
            except Exec as e:        # as after an exec: buffered output is lost
                status, flush = e.status, False
            except BaseException as e:
                reusable = False
                kbd = isinstance(e, KeyboardInterrupt)
                # the interpreter exits through SIG_DFL SIGINT (130 if that is blocked)
                status = (((130 << 8) if signal.SIGINT in masked else signal.SIGINT) if kbd
                          else 1 << 8)
                strip_own_frames(e)
                sys.excepthook(type(e), e, e.__traceback__)
            # Py_FinalizeEx: flush stdout ("Exception ignored" + 120 on failure), stderr
            fout, ferr = sys.stdout, sys.stderr
            if flush and fout is not None and not fout.closed:
                try:
                    fout.flush()
                except Exception as e:
                    sys.unraisablehook(self.uha((type(e), e, None, None, fout)))
                    if not kbd:
                        status = 120 << 8
            if flush and ferr is not None and not ferr.closed:
                try:
                    ferr.flush()
                except Exception:
                    if not kbd:
                        status = 120 << 8
        except BaseException:         # e.g. a KeyboardInterrupt landing in our own code
            reusable = False
        return status, reusable

    def reset(self, nice_changed, rl_changed, changed, masked, creds_changed):
        """Back to the idle state.  The credentials first (root again), then the
        client's fds: buffered output of an exec'd request must not be written
        when its stream object goes away."""
        if creds_changed:
            come_back()
        for s in FORWARDED + masked:          # ignoring drops what is still pending
            if signal.getsignal(s) is not signal.SIG_IGN:
                signal.signal(s, signal.SIG_IGN)
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
        for s in set(changed + masked):
            if signal.getsignal(s) is not idle_disposition(s):
                signal.signal(s, idle_disposition(s))
        for target in (0, 1, 2):
            os.dup2(NULL_FD, target)
        sys.stdin = sys.__stdin__ = sys.stdout = sys.__stdout__ = None
        sys.stderr = sys.__stderr__ = None
        sys.argv = sys.orig_argv = []
        os.closerange(3, NULL_FD)        # whatever the command left open
        os.chdir("/")
        os.umask(OWN["umask"])
        if nice_changed:
            try:
                os.setpriority(os.PRIO_PROCESS, 0, OWN["nice"])
            except OSError:
                pass
        if rl_changed:
            set_rlimits(OWN["rlimits"])

    def serve(self):
        ctl = self.ctl
        space = socket.CMSG_SPACE(4 * 4)
        for served in range(1, MAX_SERVED + 1):
            data, anc, _flags, _ = ctl.recvmsg(CRED.size + HDR.size, space,
                                               socket.MSG_CMSG_CLOEXEC)
            if not data:
                return
            creds, data = unpack_creds(data[:CRED.size]), data[CRED.size:]
            fds = []
            for level, typ, cdata in anc:
                if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    n = len(cdata) - len(cdata) % 4
                    fds += struct.unpack(f"{n // 4}i", cdata[:n])
            h = HDR.unpack(data)
            body = bytearray()
            while len(body) < h[4]:
                chunk = ctl.recv(CHUNK)
                if not chunk:
                    return
                body += chunk
            # a failure here ends the worker before "R": the daemon then tells the
            # client to run the command the old way
            ctx = self.setup(h, fds, bytes(body).split(b"\0")[:-1], creds)
            ctl.send(b"R")
            status, reusable = self.execute(ctx[3])
            try:
                self.reset(*ctx)
            except BaseException:
                reusable = False
            reusable = reusable and served < MAX_SERVED
            ctl.send(DONE.pack(status, reusable))
            if not reusable:
                return


NULL_FD = CTL_FD = -1


def worker_main(ctl_fd, main_code, script, hostdir, uha):
    global NULL_FD, CTL_FD
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    top = 1024 if soft < 0 or soft > 1024 else soft
    CTL_FD, NULL_FD = top - 1, top - 2
    os.dup2(ctl_fd, CTL_FD, inheritable=False)
    nul = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    os.dup2(nul, NULL_FD, inheritable=False)
    for target in (0, 1, 2):
        os.dup2(NULL_FD, target)
    os.closerange(3, NULL_FD)
    os.closerange(CTL_FD + 1, 1 << 20)
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    OWN["creds"] = own_creds()
    os.execve = spawn_execve      # fakemac's sudo: os.execvpe -> os._execvpe -> execve
    for s in FORWARDED:
        signal.signal(s, idle_disposition(s))
    gc.freeze()
    w = Worker(socket.socket(fileno=CTL_FD), main_code, uha)
    try:
        w.serve()
    except BaseException:
        pass
    os._exit(0)


# --------------------------------------------------------------------------
# the daemon

class W:
    __slots__ = ("pid", "pidfd", "ctl", "job", "dead")


class Job:
    __slots__ = ("conn", "worker", "fds", "started")


def recv_exact(conn, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = conn.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError("short request")
        buf += chunk
    return bytes(buf)


def close_fds(fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def serve(hostdir, sockpath):
    script = os.path.abspath(fakemac.__file__)
    script_id = os.stat(script)
    main_code = main_block_code(script)
    uha = unraisable_args_type()
    me = os.path.realpath(sys.executable)
    try:
        os.unlink(sockpath)
    except FileNotFoundError:
        pass
    lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lsock.bind(sockpath)
    os.chmod(sockpath, 0o666)     # every user of the host runs fake commands
    lsock.listen(256)
    sel = selectors.DefaultSelector()
    sel.register(lsock, selectors.EVENT_READ, ("listen", None))
    idle = []
    workers = set()
    exe_ok = {}      # interpreter path named by a wrapper -> is it this interpreter?
    cmsg_space = socket.CMSG_SPACE(4 * 4)

    normalize_signals()
    OWN["umask"] = os.umask(0o022)
    os.umask(OWN["umask"])
    OWN["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    OWN["rlimits"] = get_rlimits()
    OWN["creds"] = own_creds()

    def stop(*_):
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, stop)
    stats = {"served": 0, "fallback": 0}

    def write_stats(*_):
        path = os.path.join(hostdir, "fakemacd.stats")
        with open(path + ".tmp", "w") as f:
            f.write(f"served={stats['served']} fallback={stats['fallback']}\n")
        os.replace(path + ".tmp", path)
    signal.signal(signal.SIGUSR1, write_stats)
    sys.stdout.flush()
    sys.stderr.flush()
    gc.collect()
    gc.freeze()

    def spawn():
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                worker_main(b.fileno(), main_code, script, hostdir, uha)
            finally:
                os._exit(0)
        b.close()
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass
        w = W()
        w.pid, w.pidfd, w.ctl, w.job, w.dead = pid, os.pidfd_open(pid), a, None, False
        sel.register(a, selectors.EVENT_READ, ("ctl", w))
        sel.register(w.pidfd, selectors.EVENT_READ, ("pid", w))
        workers.add(w)
        return w

    def retire(w):
        if w.ctl is not None:
            sel.unregister(w.ctl)
            w.ctl.close()        # the worker reads EOF and exits
            w.ctl = None

    def end_job(job, reply):
        close_fds(job.fds)
        job.fds = []
        if job.conn is not None:
            try:
                job.conn.setblocking(True)
                job.conn.sendall(reply)
            except OSError:
                pass
            sel.unregister(job.conn)
            job.conn.close()
            job.conn = None

    def worker_messages(w):
        """Read what the worker says: b"R" (the command starts), DONE (it ended)."""
        while w.ctl is not None:
            try:
                msg = w.ctl.recv(DONE.size, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            except OSError:
                msg = b""
            job = w.job
            if msg == b"R" and job is not None and not job.started:
                job.started = True
                stats["served"] += 1
                close_fds(job.fds)
                job.fds = []
                if job.conn is not None:
                    try:
                        job.conn.send(b"F")
                    except OSError:
                        pass
            elif len(msg) == DONE.size and job is not None and job.started:
                status, reusable = DONE.unpack(msg)
                w.job = None
                end_job(job, struct.pack("=i", status))
                if reusable and not w.dead and len(idle) < MAX_IDLE:
                    idle.append(w)
                else:
                    retire(w)
            else:                # EOF: the worker exec'd, exited or died
                retire(w)

    def request(conn):
        fds = []
        try:
            conn.settimeout(5)
            data, anc, flags, _ = conn.recvmsg(HDR.size, cmsg_space, socket.MSG_CMSG_CLOEXEC)
            for level, typ, cdata in anc:
                if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    n = len(cdata) - len(cdata) % 4
                    fds += struct.unpack(f"{n // 4}i", cdata[:n])
            if len(data) < HDR.size:
                data += recv_exact(conn, HDR.size - len(data))
            h = HDR.unpack(data)
            if h[0] != MAGIC or flags & socket.MSG_CTRUNC:
                raise ConnectionError("bad request")
            if len(fds) != bin(h[1] & 15).count("1") or not h[1] & 8:
                raise ConnectionError("fd count")
            body = recv_exact(conn, h[4])
            creds = peer_creds(conn)
            strs = body.split(b"\0")[:-1]
            nargv = h[2]
            if len(strs) != nargv + h[3] or nargv < 4:
                raise ConnectionError("bad strings")
            ok = exe_ok.get(strs[0])
            if ok is None:
                ok = exe_ok[strs[0]] = os.path.realpath(os.fsdecode(strs[0])) == me
            try:
                st = os.stat(script)
                same_script = (st.st_mtime_ns, st.st_size, st.st_ino) == \
                    (script_id.st_mtime_ns, script_id.st_size, script_id.st_ino)
            except OSError:
                same_script = False
            if (not ok or not same_script or os.fsdecode(strs[1]) != script
                    or os.fsdecode(strs[2]) != hostdir or not supported(parse_env(strs[nargv:]))):
                stats["fallback"] += 1
                conn.sendall(b"X")   # fakemac.py edited since start-up, PYTHONPATH, ...
                return
            w = None
            while idle and w is None:
                w = idle.pop()
                if w.dead or w.ctl is None:
                    w = None
            if w is None:
                w = spawn()
            try:
                w.ctl.sendmsg([pack_creds(creds) + data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                        struct.pack(f"{len(fds)}i", *fds))])
                for i in range(0, len(body), CHUNK):
                    w.ctl.sendall(body[i:i + CHUNK])
            except OSError:
                try:
                    os.killpg(w.pid, signal.SIGKILL)
                except OSError:
                    pass
                retire(w)
                stats["fallback"] += 1
                conn.sendall(b"X")
                return
            job = Job()
            job.conn, job.worker, job.fds, job.started = conn, w, fds, False
            fds = []             # kept until the worker has started (else: b"X")
            w.job = job
            conn.setblocking(False)
            sel.register(conn, selectors.EVENT_READ, ("conn", job))
            conn = None
        except (OSError, ConnectionError, struct.error, ValueError) as e:
            log(f"request dropped: {e!r}")
        finally:
            close_fds(fds)
            if conn is not None:
                conn.close()

    for _ in range(2):
        idle.append(spawn())
    pidfile = os.path.join(hostdir, "fakemacd.pid")    # up waits for it: we are ready
    with open(pidfile + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.replace(pidfile + ".tmp", pidfile)
    log(f"serving {hostdir} on {sockpath}")

    try:
        while True:
            for key, _ in sel.select():
                kind, obj = key.data
                if kind == "listen":
                    try:
                        conn, _ = lsock.accept()
                    except OSError:
                        continue
                    request(conn)
                elif kind == "conn":
                    job = obj
                    if job.conn is None:
                        continue
                    try:
                        data = job.conn.recv(256)
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b""
                    w = job.worker
                    if not data:    # the client is gone: so is its command
                        sel.unregister(job.conn)
                        job.conn.close()
                        job.conn = None
                        if w.job is job and not w.dead:
                            try:
                                os.killpg(w.pid, signal.SIGKILL)
                            except OSError:
                                try:
                                    signal.pidfd_send_signal(w.pidfd, signal.SIGKILL)
                                except OSError:
                                    pass
                        continue
                    if w.job is job and job.started and not w.dead:
                        for sig in data:
                            try:
                                signal.pidfd_send_signal(w.pidfd, sig)
                            except OSError:
                                pass
                elif kind == "ctl":
                    worker_messages(obj)
                else:               # a worker (or the program it became) ended
                    w = obj
                    worker_messages(w)
                    sel.unregister(w.pidfd)
                    _, status = os.waitpid(w.pid, 0)
                    os.close(w.pidfd)
                    w.dead = True
                    workers.discard(w)
                    retire(w)
                    if w in idle:
                        idle.remove(w)
                    job, w.job = w.job, None
                    if job is not None:
                        if job.started:
                            end_job(job, struct.pack("=i", status))
                        else:       # died before starting: the client runs it itself
                            log(f"worker {w.pid} ended before a request started ({status:#x})")
                            stats["fallback"] += 1
                            end_job(job, b"X")
    finally:
        for w in workers:
            try:
                signal.pidfd_send_signal(w.pidfd, signal.SIGKILL)
            except OSError:
                pass


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: fakemacd.py HOSTDIR SOCKET")
    try:
        serve(sys.argv[1], sys.argv[2])
    except Exception:
        # up waits for fakemacd.pid or this; the clients find no socket and run
        # fakemac.py themselves
        open(os.path.join(sys.argv[1], "fakemacd.failed"), "w").close()
        raise
