# SPDX-License-Identifier: MIT
#
# The program `jaccl-config verify --mlx` runs on every host through its
# launcher: MLX's own all_sum and all_gather (mlx.core.distributed, the
# backend of the hostfile, configured by the environment mlx.launch gives a
# job) on data every rank can check, timed for a bus bandwidth. jaccl-config
# sends it with the command line, so nothing needs installing on the hosts
# but Python and mlx; this copy is for reading and running by hand:
#
#   python3 verify-mlx.py check
#   python3 verify-mlx.py run BACKEND SUM_BYTES GATHER_BYTES ITERS
#
# check prints one line: the interpreter, its version, and mlx's version or
# "none" with the reason. run prints "rank=R size=N backend=B", then for each
# operation op=, bytes=, count=, iters=, time_us= (the mean of the timed
# calls), wrong= (elements of the first call's result that are wrong),
# first= (the first of them, -1 when none) and its got= and want=, then
# "done"; every line starts with "jaccl-verify-mlx". The data: in all_sum,
# rank r puts (r + 1) * h(i) at element i, h(i) = (i mod 1021) * 7919 mod 1021
# + 1 (float32, exact), so the sum is n(n+1)/2 * h(i); in all_gather, element
# i of rank r's block is (r + 1) * 2^24 + (i mod 2^24) (int32), so a word in
# the wrong place says whose and which it is, and 0 was never written.
import sys
import time

TAG = "jaccl-verify-mlx"


def check():
    import platform

    line = "%s check python=%s python_version=%s" % (
        TAG, sys.executable or "-", platform.python_version())
    try:
        import mlx.core  # noqa: F401
    except Exception as e:  # ImportError, or a broken install
        why = ("%s: %s" % (type(e).__name__, e)).replace("\n", " ")
        print("%s mlx=none why=%s" % (line, why))
        return
    try:
        from importlib.metadata import version

        v = version("mlx")
    except Exception:
        v = getattr(mlx.core, "__version__", "?")
    print("%s mlx=%s" % (line, v))


def timed(f, iters):
    t0 = time.perf_counter()
    for _ in range(iters):
        f()
    return (time.perf_counter() - t0) / iters * 1e6


def report(mx, op, nbytes, count, iters, usec, got, want):
    bad = mx.not_equal(got, want)
    wrong = mx.sum(bad.astype(mx.int32)).item()
    line = "%s op=%s bytes=%d count=%d iters=%d time_us=%.3f wrong=%d" % (
        TAG, op, nbytes, count, iters, usec, wrong)
    if wrong:
        k = mx.argmax(bad.astype(mx.int32)).item()
        line += " first=%d got=%.17g want=%.17g" % (
            k, float(got[k].item()), float(want[k].item()))
    else:
        line += " first=-1"
    print(line, flush=True)


def run(backend, sum_bytes, gather_bytes, iters):
    import mlx.core as mx

    g = mx.distributed.init(strict=True, backend=backend)
    r, n = g.rank(), g.size()
    print("%s rank=%d size=%d backend=%s" % (TAG, r, n, backend), flush=True)

    c = sum_bytes // 4
    i = mx.arange(c, dtype=mx.uint32)
    h = (i % 1021) * 7919 % 1021 + 1
    x = (h * (r + 1)).astype(mx.float32)
    want = (h * (n * (n + 1) // 2)).astype(mx.float32)

    def all_sum():
        y = mx.distributed.all_sum(x, group=g, stream=mx.cpu)
        mx.eval(y)
        return y

    y = all_sum()
    report(mx, "all_sum", sum_bytes, c, iters, timed(all_sum, iters), y, want)

    c = gather_bytes // 4
    i = mx.arange(c, dtype=mx.int32)
    a = (r + 1) * (1 << 24) + i % (1 << 24)
    k = mx.arange(c * n, dtype=mx.int32)
    want = (k // c + 1) * (1 << 24) + (k % c) % (1 << 24)

    def all_gather():
        y = mx.distributed.all_gather(a, group=g, stream=mx.cpu)
        mx.eval(y)
        return y

    y = all_gather()
    report(mx, "all_gather", gather_bytes, c, iters, timed(all_gather, iters), y, want)
    print("%s done" % TAG, flush=True)


def main(argv):
    if len(argv) == 2 and argv[1] == "check":
        check()
        return 0
    if len(argv) == 6 and argv[1] == "run":
        run(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
        return 0
    sys.stderr.write("usage: %s check | run BACKEND SUM_BYTES GATHER_BYTES ITERS\n" % TAG)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
