/* SPDX-License-Identifier: MIT */
/* fakemac-client.c - the fast path of the fake macOS commands (see fakemacd.py).
 *
 *   fakemac-client PYTHON FAKEMAC_PY HOSTDIR COMMAND [ARGS...]
 *   fakemac-client HOSTDIR/bin/COMMAND [ARGS...]        (as a script's interpreter)
 *
 * The wrappers in HOSTDIR/bin are one line, `#!fakemac-client` (its full
 * path), so running one costs what running a native command costs: one exec
 * of one small program, no shell.  The kernel then runs the client with the
 * wrapper's path and the arguments; the client finds HOSTDIR and COMMAND from
 * that path (symbolic links resolved: /usr/bin/X in a host's file system view
 * is a link to HOSTDIR/bin/X), and PYTHON and FAKEMAC_PY were compiled in
 * (-DFAKEMAC_PYTHON, -DFAKEMAC_PY).  It exports PWD as the /bin/sh of the
 * old `#!/bin/sh` + `exec` wrappers did, so the command sees the same
 * environment.  The first form is what those wrappers ran, and what a
 * client compiled without the two paths accepts.  The client connects to HOSTDIR/fakemac.sock,
 * hands the daemon its fds 0/1/2 and its working directory (SCM_RIGHTS), argv,
 * environment, umask, nice value, rlimits, signal mask and ignored signals, and
 * waits for the exit status of the forked child that runs the command, which it
 * then reproduces (exit code, or death by the same signal).  Signals it receives
 * while waiting (TERM, INT, HUP, ...) are forwarded to that child; if the client
 * dies (SIGKILL), the daemon kills the child's process group.
 *
 * No daemon (socket missing, refused), or the daemon answers "X" (an environment
 * the fork cannot reproduce, e.g. PYTHONPATH set): exec PYTHON FAKEMAC_PY
 * --simhost HOSTDIR COMMAND ARGS..., which is exactly what the wrapper did before.
 *
 * Build: cc -O2 -o fakemac-client fakemac-client.c   (simcluster.sh up does it)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAGIC 0x31434d46 /* "FMC1" */
#define NRLIM 16
enum { H_MAGIC, H_FDMASK, H_NARGV, H_NENV, H_BODYLEN, H_UMASK, H_NICE, H_SIGIGN, H_SIGMASK,
       H_RLIM, H_COUNT = H_RLIM + 2 * NRLIM };

static const int fwd_sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
                               SIGPIPE, SIGXFSZ, SIGVTALRM, SIGPROF, SIGWINCH};
#define NFWD (sizeof fwd_sigs / sizeof fwd_sigs[0])

static int g_sock = -1;

static void forward(int sig)
{
    int e = errno;
    unsigned char b = (unsigned char)sig;
    if (g_sock >= 0)
        (void)!send(g_sock, &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    errno = e;
}

/* the old wrapper: exec PYTHON FAKEMAC_PY --simhost HOSTDIR COMMAND ARGS... */
static void fallback(int argc, char **argv, const sigset_t *orig)
{
    char **v = calloc((size_t)argc + 2, sizeof *v);
    int i, n = 0;
    if (g_sock >= 0) {
        close(g_sock);
        g_sock = -1;
    }
    sigprocmask(SIG_SETMASK, orig, NULL);
    if (!v) {
        perror("fakemac-client");
        exit(127);
    }
    v[n++] = argv[1];
    v[n++] = argv[2];
    v[n++] = "--simhost";
    for (i = 3; i < argc; i++)
        v[n++] = argv[i];
    v[n] = NULL;
    execv(argv[1], v);
    fprintf(stderr, "fakemac-client: %s: %s\n", argv[1], strerror(errno));
    exit(127);
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int recv_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

#if defined(FAKEMAC_PYTHON) && defined(FAKEMAC_PY)
/* PWD as dash sets it on start-up: the inherited value if it names the
   working directory, else the physical path */
static void export_pwd(void)
{
    const char *pwd = getenv("PWD");
    struct stat a, b;
    char *cwd;

    if (pwd && pwd[0] == '/' && stat(pwd, &a) == 0 && stat(".", &b) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return;
    cwd = getcwd(NULL, 0);
    if (cwd)
        setenv("PWD", cwd, 1);
    free(cwd);
}

/* the interpreter form: argv becomes CLIENT PYTHON FAKEMAC_PY HOSTDIR COMMAND ARGS... */
static char **from_script(int *argcp, char **argv)
{
    int argc = *argcp;
    char *path = realpath(argv[1], NULL), *cmd, *bin, *host;
    char **v;

    if (!path || !(cmd = strrchr(path, '/')) || cmd == path) {
        fprintf(stderr, "fakemac-client: %s: not a wrapper of a simulated host\n", argv[1]);
        exit(127);
    }
    *cmd++ = '\0';
    bin = strrchr(path, '/');
    host = path;
    if (bin && bin != path)
        *bin = '\0';
    v = calloc((size_t)argc + 4, sizeof *v);
    if (!v) {
        perror("fakemac-client");
        exit(127);
    }
    v[0] = argv[0];
    v[1] = FAKEMAC_PYTHON;
    v[2] = FAKEMAC_PY;
    v[3] = host;
    v[4] = cmd;
    for (int i = 2; i < argc; i++)
        v[i + 3] = argv[i];
    *argcp = argc + 3;
    export_pwd();
    return v;
}
#endif

int main(int argc, char **argv)
{
    sigset_t fwd, orig;
    int64_t h[H_COUNT];
    struct sockaddr_un sa;
    size_t i, body_len = 0, hl;
    char *body, *q;
    int fds[4], nfds = 0, fd, cwd, nenv = 0;
    unsigned char ack;
    int status;

#if defined(FAKEMAC_PYTHON) && defined(FAKEMAC_PY)
    if (argc >= 2 && strcmp(argv[1], FAKEMAC_PYTHON) != 0)
        argv = from_script(&argc, argv);
#endif
    if (argc < 5) {
        fprintf(stderr, "usage: fakemac-client PYTHON FAKEMAC_PY HOSTDIR COMMAND [ARGS...]\n");
        return 2;
    }
    /* which of 0/1/2 are open, before any fd of ours can take a free slot */
    memset(h, 0, sizeof h);
    for (fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) >= 0) {
            fds[nfds++] = fd;
            h[H_FDMASK] |= 1 << fd;
        }
    /* signals that arrive before the child exists stay pending until we know
       whether there will be one (then they are forwarded) or not (then they hit
       us before the exec of the interpreter, as they would have hit it) */
    sigemptyset(&fwd);
    for (i = 0; i < NFWD; i++)
        sigaddset(&fwd, fwd_sigs[i]);
    sigprocmask(SIG_BLOCK, &fwd, &orig);

    hl = strlen(argv[3]);
    if (hl + sizeof "/fakemac.sock" > sizeof sa.sun_path)
        fallback(argc, argv, &orig);
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, argv[3], hl);
    memcpy(sa.sun_path + hl, "/fakemac.sock", sizeof "/fakemac.sock");
    g_sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (g_sock < 0 || connect(g_sock, (struct sockaddr *)&sa, sizeof sa) < 0)
        fallback(argc, argv, &orig);

    h[H_MAGIC] = MAGIC;
    cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cwd < 0)
        fallback(argc, argv, &orig);
    fds[nfds++] = cwd;
    h[H_FDMASK] |= 8;
    h[H_NARGV] = argc - 1; /* PYTHON FAKEMAC_PY HOSTDIR COMMAND ARGS... */
    for (char **e = environ; *e; e++)
        nenv++;
    h[H_NENV] = nenv;
    for (int a = 1; a < argc; a++)
        body_len += strlen(argv[a]) + 1;
    for (char **e = environ; *e; e++)
        body_len += strlen(*e) + 1;
    h[H_BODYLEN] = (int64_t)body_len;
    {
        mode_t m = umask(0);
        umask(m);
        h[H_UMASK] = m;
    }
    errno = 0;
    h[H_NICE] = getpriority(PRIO_PROCESS, 0);
    for (int s = 1; s <= 64; s++) {
        struct sigaction cur;
        if (sigaction(s, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
            cur.sa_handler == SIG_IGN)
            h[H_SIGIGN] |= (int64_t)(1ULL << (s - 1));
        if (sigismember(&orig, s) == 1)
            h[H_SIGMASK] |= (int64_t)(1ULL << (s - 1));
    }
    for (int r = 0; r < NRLIM; r++) {
        struct rlimit rl;
        if (getrlimit(r, &rl) == 0) {
            h[H_RLIM + 2 * r] = rl.rlim_cur == RLIM_INFINITY ? -1 : (int64_t)rl.rlim_cur;
            h[H_RLIM + 2 * r + 1] = rl.rlim_max == RLIM_INFINITY ? -1 : (int64_t)rl.rlim_max;
        } else {
            h[H_RLIM + 2 * r] = h[H_RLIM + 2 * r + 1] = -1;
        }
    }
    body = malloc(body_len ? body_len : 1);
    if (!body)
        fallback(argc, argv, &orig);
    q = body;
    for (int a = 1; a < argc; a++) {
        size_t l = strlen(argv[a]) + 1;
        memcpy(q, argv[a], l);
        q += l;
    }
    for (char **e = environ; *e; e++) {
        size_t l = strlen(*e) + 1;
        memcpy(q, *e, l);
        q += l;
    }

    {
        struct iovec iov = {.iov_base = h, .iov_len = sizeof h};
        union {
            char buf[CMSG_SPACE(sizeof(int) * 4)];
            struct cmsghdr align;
        } u;
        struct msghdr msg = {0};
        struct cmsghdr *c;
        memset(&u, 0, sizeof u);
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = u.buf;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
        for (;;) {
            ssize_t w = sendmsg(g_sock, &msg, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                fallback(argc, argv, &orig);
            if ((size_t)w < sizeof h && send_all(g_sock, (char *)h + w, sizeof h - (size_t)w))
                fallback(argc, argv, &orig);
            break;
        }
    }
    close(cwd);
    if (send_all(g_sock, body, body_len) || recv_all(g_sock, &ack, 1) || ack != 'F')
        fallback(argc, argv, &orig); /* nothing ran: the interpreter path is still exact */
    free(body);

    /* the child runs: forward what we catch, unless it was ignored (then the
       interpreter would have ignored it too, and so does the child) */
    for (i = 0; i < NFWD; i++) {
        struct sigaction cur, act;
        if (sigaction(fwd_sigs[i], NULL, &cur) == 0 && cur.sa_handler == SIG_IGN &&
            !(cur.sa_flags & SA_SIGINFO))
            continue;
        memset(&act, 0, sizeof act);
        act.sa_handler = forward;
        sigemptyset(&act.sa_mask);
        act.sa_flags = SA_RESTART;
        sigaction(fwd_sigs[i], &act, NULL);
    }
    sigprocmask(SIG_SETMASK, &orig, NULL);

    if (recv_all(g_sock, &status, sizeof status)) {
        fprintf(stderr, "fakemac-client: lost the fake-command daemon of %s\n", argv[3]);
        return 255;
    }
    if (WIFEXITED(status))
        _exit(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int s = WTERMSIG(status);
        struct rlimit none = {0, 0};
        sigset_t u;
        setrlimit(RLIMIT_CORE, &none);
        signal(s, SIG_DFL);
        sigemptyset(&u);
        sigaddset(&u, s);
        sigprocmask(SIG_UNBLOCK, &u, NULL);
        raise(s);
        _exit(128 + s);
    }
    _exit(255);
}
