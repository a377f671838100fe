// SPDX-License-Identifier: MIT
//
// The collectives of `jaccl-config verify --mlx` on MLX's own JACCL, for
// machines without Python's mlx: the same all_sum and all_gather on the same
// data as data/mlx/verify-mlx.py, through jaccl::init() (configured by the
// environment mlx.launch gives a JACCL job, as MLX's backend is) and the
// group's all_sum and all_gather (what mx.distributed calls), printing the
// same lines. verify --mlx runs it instead of the Python program when
// JACCL_CONFIG_MLX_PROGRAM names it. Compiled against the JACCL that
// tests/jaccl/build.sh builds from MLX's code; test code, never installed.
//
//   jaccl_verify_mlx check
//   jaccl_verify_mlx run BACKEND SUM_BYTES GATHER_BYTES ITERS
#include <jaccl/jaccl.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static const char *TAG = "jaccl-verify-mlx";

// all_sum: rank r contributes (r + 1) * h(i); the sum is n(n+1)/2 * h(i)
static uint32_t h(uint64_t i) {
  return (uint32_t)((i % 1021) * 7919 % 1021 + 1);
}

// all_gather: element i of rank r's block is (r + 1) << 24 | (i mod 2^24)
static int32_t word(uint64_t r, uint64_t i) {
  return (int32_t)((r + 1) << 24 | (i & 0xffffff));
}

template <typename F>
static double timed(F f, long iters) {
  auto t0 = std::chrono::steady_clock::now();
  for (long k = 0; k < iters; k++)
    f();
  std::chrono::duration<double, std::micro> d =
      std::chrono::steady_clock::now() - t0;
  return d.count() / (double)iters;
}

template <typename T>
static void report(const char *op, size_t bytes, size_t count, long iters,
                   double usec, const std::vector<T> &got,
                   const std::vector<T> &want) {
  long long wrong = 0, first = -1;
  for (size_t k = 0; k < got.size(); k++)
    if (got[k] != want[k] && wrong++ == 0)
      first = (long long)k;
  std::printf("%s op=%s bytes=%zu count=%zu iters=%ld time_us=%.3f wrong=%lld "
              "first=%lld",
              TAG, op, bytes, count, iters, usec, wrong, first);
  if (first >= 0)
    std::printf(" got=%.17g want=%.17g", (double)got[first],
                (double)want[first]);
  std::printf("\n");
}

int main(int argc, char **argv) {
  if (argc == 2 && std::strcmp(argv[1], "check") == 0) {
    std::printf("%s check python=- python_version=- mlx=jaccl\n", TAG);
    return 0;
  }
  if (argc != 6 || std::strcmp(argv[1], "run") != 0) {
    std::fprintf(stderr,
                 "usage: %s check | run BACKEND SUM_BYTES GATHER_BYTES ITERS\n",
                 argv[0]);
    return 2;
  }
  std::string backend = argv[2];
  size_t sum_bytes = std::strtoull(argv[3], nullptr, 10);
  size_t gather_bytes = std::strtoull(argv[4], nullptr, 10);
  long iters = std::strtol(argv[5], nullptr, 10);
  if (backend != "jaccl") {
    std::fprintf(stderr, "%s: only the jaccl backend, not %s\n", TAG,
                 backend.c_str());
    return 2;
  }
  auto g = jaccl::init(/* strict= */ true);
  uint64_t r = g->rank(), n = g->size();
  std::printf("%s rank=%llu size=%llu backend=%s\n", TAG,
              (unsigned long long)r, (unsigned long long)n, backend.c_str());
  std::fflush(stdout);

  size_t c = sum_bytes / 4;
  std::vector<float> x(c), y(c, 0.0f), want(c);
  for (size_t i = 0; i < c; i++) {
    x[i] = (float)(h(i) * (r + 1));
    want[i] = (float)(h(i) * (n * (n + 1) / 2));
  }
  g->all_sum(x.data(), y.data(), c * 4, jaccl::Float32);
  std::vector<float> checked = y;
  double t = timed([&] { g->all_sum(x.data(), y.data(), c * 4, jaccl::Float32); },
                   iters);
  report("all_sum", sum_bytes, c, iters, t, checked, want);

  c = gather_bytes / 4;
  std::vector<int32_t> a(c), out(c * n, 0), gwant(c * n);
  for (size_t i = 0; i < c; i++)
    a[i] = word(r, i);
  for (size_t k = 0; k < c * n; k++)
    gwant[k] = word(k / c, k % c);
  g->all_gather(a.data(), out.data(), c * 4);
  std::vector<int32_t> gchecked = out;
  t = timed([&] { g->all_gather(a.data(), out.data(), c * 4); }, iters);
  report("all_gather", gather_bytes, c, iters, t, gchecked, gwant);
  std::printf("%s done\n", TAG);
  return 0;
}
