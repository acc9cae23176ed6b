//===- KernelBench.cpp - GFLOP/s of the conv2d and linear kernels ---------===//
//
// tcc-kernel-bench: times conv2d forward / backward_data / backward_filter and
// linear forward / backward_data / backward_weight (float) on the shapes of a
// small Fashion-MNIST CNN. Not a test (not registered with ctest). Run with
// e.g. OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive.
//
//   tcc-kernel-bench [min-seconds-per-kernel [name-filter]]
//
// min-seconds-per-kernel defaults to 1.0; with a filter, only the kernels
// whose name contains it run (e.g. "conv fwd").
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Linear.h"

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <time.h>
#include <vector>

using namespace tcc::rt::kernels;

namespace {

double g_minSeconds = 1.0;
std::string g_filter;

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/// Runs f once to warm up, then repeatedly for at least g_minSeconds, and
/// prints the best wall-clock time and its GFLOP/s, and the GFLOP/s per
/// second of CPU time of all threads (what one core delivers; less sensitive
/// to other processes on a busy machine).
template <class F> void bench(const std::string &what, double flops, F &&f) {
  using clock = std::chrono::steady_clock;
  if (what.find(g_filter) == std::string::npos)
    return;
  f();
  double best = 1e30, bestCpu = 1e30, total = 0;
  int reps = 0;
  while (total < g_minSeconds || reps < 3) {
    const double c0 = cpu_seconds();
    auto t0 = clock::now();
    f();
    const double dt = std::chrono::duration<double>(clock::now() - t0).count();
    bestCpu = std::min(bestCpu, cpu_seconds() - c0);
    best = std::min(best, dt);
    total += dt;
    ++reps;
  }
  std::printf("%-36s %9.3f ms %8.2f GFLOP/s %8.2f GFLOP/cpu-s  (%d reps)\n",
              what.c_str(), best * 1e3, flops / best * 1e-9,
              flops / bestCpu * 1e-9, reps);
  std::fflush(stdout);
}

void bench_conv(int64_t n, int64_t c, int64_t hw, int64_t o,
                int64_t stride = 1) {
  const Conv2dShape s =
      make_conv2d_shape(n, c, hw, hw, o, 3, 3, stride, stride, 1, 1);
  auto x = random_floats(s.n * s.c * s.h * s.w, 1);
  auto w = random_floats(s.o * s.c * s.kh * s.kw, 2);
  auto b = random_floats(s.o, 3);
  auto dy = random_floats(s.n * s.o * s.oh * s.ow, 4);
  std::vector<float> y(dy.size()), dx(x.size()), dw(w.size());
  const double flops =
      2.0 * s.n * s.o * s.oh * s.ow * (s.c / s.groups) * s.kh * s.kw;
  const std::string tag = "[" + std::to_string(n) + "," + std::to_string(c) +
                          "," + std::to_string(hw) + "," + std::to_string(hw) +
                          "]->" + std::to_string(o) +
                          (stride > 1 ? " s" + std::to_string(stride) : "");
  bench("conv fwd    " + tag, flops,
        [&] { conv2d_forward(s, x.data(), w.data(), b.data(), y.data()); });
  bench("conv bwd dx " + tag, flops,
        [&] { conv2d_backward_data(s, dy.data(), w.data(), dx.data()); });
  bench("conv bwd dw " + tag, flops,
        [&] { conv2d_backward_filter(s, x.data(), dy.data(), dw.data()); });
}

void bench_linear(int64_t m, int64_t k, int64_t n) {
  auto x = random_floats(m * k, 5), w = random_floats(n * k, 6);
  auto b = random_floats(n, 7), dy = random_floats(m * n, 8);
  std::vector<float> y(m * n), dx(m * k), dw(n * k);
  const double flops = 2.0 * m * n * k;
  const std::string tag = "[" + std::to_string(m) + "," + std::to_string(k) +
                          "]x[" + std::to_string(n) + "," + std::to_string(k) +
                          "]^T";
  bench("linear fwd  " + tag, flops, [&] {
    linear_forward(m, k, n, x.data(), w.data(), b.data(), y.data());
  });
  bench("linear bwd dx " + tag, flops,
        [&] { linear_backward_data(m, k, n, dy.data(), w.data(), dx.data()); });
  bench("linear bwd dw " + tag, flops, [&] {
    linear_backward_weight(m, k, n, dy.data(), x.data(), dw.data());
  });
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1)
    g_minSeconds = std::atof(argv[1]);
  if (argc > 2)
    g_filter = argv[2];
  std::printf("tcc-kernel-bench: %d OpenMP threads, float\n",
              omp_get_max_threads());
  // The conv shapes of examples/fashion_cnn.json, then a linear layer.
  bench_conv(256, 16, 28, 32);
  bench_conv(256, 32, 14, 32);
  bench_conv(256, 32, 14, 64);
  bench_linear(256, 784, 256);
  // Also in fashion_cnn.json: the first conv and the classifier.
  bench_conv(256, 1, 28, 16);
  bench_linear(256, 64, 10);
  // A strided convolution (the Im2col algorithm).
  bench_conv(256, 32, 28, 64, 2);
  return 0;
}
