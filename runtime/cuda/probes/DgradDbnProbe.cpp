//===- DgradDbnProbe.cpp - What cuDNN builds of dgrad + drelu + dbn_weight -===//
//
// Not part of tcc: a probe for tcc-cuda-dgrad-statistics (docs/cuda.md,
// "Batch norm backward sums from the backward-data convolution"). For each
// built-in GPU description and fp16 NHWC problem it describes
// cudnn-frontend's "Dgrad Drelu DBNweight" graph (samples/cpp/convolution/
// dgrads.cpp) on tcc's tensors: conv_dgrad(dy, w) -> RELU_BWD with the
// ReLU's saved fp16 output -> dbn_weight(drelu, x, mean, invstd, scale),
// the drelu output stored fp16, the five per-channel outputs f32. Weight
// KCRS (tcc's) and KRSC (what the forward genstats graph needs). It asks
// the heuristics (modes A and fallback) as ConvPlans.cpp does, builds each
// candidate and prints one line per case: candidates, plans built, the
// first plan's name and workspace, or cuDNN's message. With --device, the
// same graphs on this machine's GPU through a handle (whether a real GPU
// has the runtime-compiled engines the descriptions lack; gpu-session.sh).
// Build: ninja tcc-dgrad-dbn-probe (not in the default build).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/GpuDescriptions.h"

#include <cudnn_frontend.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace fe = cudnn_frontend;
using Tensor = std::shared_ptr<fe::graph::Tensor_attributes>;

namespace {

struct Case {
  int64_t n, c, h, w, k, r, stride; ///< dx [n, c, h, w]; dy [n, k, h/stride, w/stride]
  bool weightKrsc;
  /// 0: RELU_BWD on the ReLU's saved output; 1: on the norm's output
  /// recomputed from x (the sample's form: x + (-mean), * invstd, * scale,
  /// + bias); 2: dgrad + drelu alone, no dbn_weight.
  int form;
};

std::vector<int64_t> nhwc(const std::vector<int64_t> &d) {
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

Tensor channelVector(fe::graph::Graph &g, const char *name, int64_t c) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_dim({1, c, 1, 1})
                      .set_stride({c, 1, c, c})
                      .set_data_type(fe::DataType_t::FLOAT));
}

/// The GPU's handle with --device, else null (the described GPUs).
cudnnHandle_t deviceHandle = nullptr;

/// `gpu` null: this machine's GPU, through deviceHandle.
void probe(const tcc::cuda::GpuDescription *gpu, const Case &k) {
  static const char *const forms[] = {"saved relu", "recomputed bn", "no dbn_weight"};
  std::printf("%s n%lld c%lld h%lld w%lld k%lld r%lld stride%lld weight %s, %s: ",
              gpu ? gpu->name : "device",
              (long long)k.n, (long long)k.c, (long long)k.h, (long long)k.w, (long long)k.k,
              (long long)k.r, (long long)k.stride, k.weightKrsc ? "KRSC" : "KCRS",
              forms[k.form]);
  fe::graph::Graph g;
  if (gpu) {
    auto properties = std::make_shared<fe::DeviceProperties>();
    std::string json = gpu->cudnnJson;
    std::vector<uint8_t> bytes(json.begin(), json.end());
    if (properties->deserialize(bytes).is_bad()) {
      std::printf("description refused\n");
      return;
    }
    g.set_device_properties(properties);
    g.set_sm_version(gpu->smVersion);
  }
  g.set_io_data_type(fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const int64_t p = k.h / k.stride, q = k.w / k.stride;
  std::vector<int64_t> dyDims = {k.n, k.k, p, q}, xDims = {k.n, k.c, k.h, k.w},
                       wDims = {k.k, k.c, k.r, k.r};
  auto dy = g.tensor(fe::graph::Tensor_attributes().set_name("dy").set_dim(dyDims).set_stride(
      nhwc(dyDims)));
  auto w = g.tensor(fe::graph::Tensor_attributes().set_name("w").set_dim(wDims).set_stride(
      k.weightKrsc ? nhwc(wDims)
                   : std::vector<int64_t>{k.c * k.r * k.r, k.r * k.r, k.r, 1}));
  auto dz = g.conv_dgrad(dy, w,
                         fe::graph::Conv_dgrad_attributes()
                             .set_padding({k.r / 2, k.r / 2})
                             .set_stride({k.stride, k.stride})
                             .set_dilation({1, 1}));
  dz->set_dim(xDims);
  auto x = g.tensor(
      fe::graph::Tensor_attributes().set_name("x").set_dim(xDims).set_stride(nhwc(xDims)));
  auto mean = channelVector(g, "mean", k.c), invstd = channelVector(g, "invstd", k.c),
       scale = channelVector(g, "scale", k.c);
  Tensor relu;
  if (k.form == 1) {
    auto op = [&](Tensor a, Tensor b, fe::PointwiseMode_t mode) {
      return g.pointwise(a, b, fe::graph::Pointwise_attributes().set_mode(mode));
    };
    relu = op(op(op(op(x, mean, fe::PointwiseMode_t::ADD), invstd, fe::PointwiseMode_t::MUL),
                 scale, fe::PointwiseMode_t::MUL),
              channelVector(g, "bias", k.c), fe::PointwiseMode_t::ADD);
  } else {
    relu = g.tensor(fe::graph::Tensor_attributes().set_name("relu").set_dim(xDims).set_stride(
        nhwc(xDims)));
  }
  auto drelu = g.pointwise(
      dz, relu, fe::graph::Pointwise_attributes().set_mode(fe::PointwiseMode_t::RELU_BWD));
  drelu->set_output(true).set_dim(xDims).set_stride(nhwc(xDims));
  if (k.form != 2) {
    auto [dscale, dbias, eqDy, eqX, eqBias] =
        g.dbn_weight(drelu, x, mean, invstd, scale, fe::graph::DBN_weight_attributes());
    for (const Tensor &t : {dscale, dbias, eqDy, eqX, eqBias})
      t->set_output(true).set_data_type(fe::DataType_t::FLOAT);
  }
  fe::error_t status = g.validate();
  if (status.is_good())
    status = deviceHandle ? g.build_operation_graph(deviceHandle) : g.build_operation_graph();
  if (status.is_good())
    status = g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
  if (status.is_bad()) {
    std::printf("no candidates: %s\n", status.get_message().c_str());
    return;
  }
  const int64_t candidates = g.get_execution_plan_count();
  (void)g.check_support();
  int built = 0;
  std::string first, last;
  int64_t workspace = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < candidates; ++i) {
    status = g.build_plan_at_index(i);
    if (status.is_bad()) {
      last = status.get_message();
      continue;
    }
    if (built++ == 0) {
      (void)g.get_plan_name_at_index(i, first);
      (void)g.get_workspace_size_plan_at_index(i, workspace);
    }
  }
  // On a GPU, what building them costs a trainer's start.
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (built > 0)
    std::printf("%lld candidates, %d built; first %s, workspace %lld; builds took %.2f s\n",
                (long long)candidates, built, first.c_str(), (long long)workspace, seconds);
  else
    std::printf("%lld candidates, none built: %s\n", (long long)candidates, last.c_str());
}

} // namespace

/// [--device]: this machine's GPU in place of the built-in descriptions.
int main(int argc, char **argv) {
  // bn_relu_net's (test/runtime/cuda/models) and airbench94's layer-1 block.
  const Case cases[] = {{32, 8, 28, 28, 16, 3, 2, false, 0},  {32, 8, 28, 28, 16, 3, 2, true, 0},
                        {512, 64, 32, 32, 64, 3, 1, false, 0}, {512, 64, 32, 32, 64, 3, 1, true, 0},
                        {512, 64, 32, 32, 256, 3, 1, true, 0}, {512, 64, 32, 32, 64, 3, 1, false, 1},
                        {512, 64, 32, 32, 64, 3, 1, true, 1},  {512, 64, 32, 32, 64, 3, 1, false, 2},
                        {512, 64, 32, 32, 64, 3, 1, true, 2}};
  if (argc >= 2 && std::strcmp(argv[1], "--device") == 0) {
    if (cudnnStatus_t status = cudnnCreate(&deviceHandle); status != CUDNN_STATUS_SUCCESS) {
      std::fprintf(stderr, "error: no cuDNN handle on this machine's GPU: %s\n",
                   cudnnGetErrorString(status));
      return 1;
    }
    for (const Case &k : cases)
      probe(nullptr, k);
    return 0;
  }
  if (argc >= 2) {
    std::fprintf(stderr, "error: unknown argument '%s' (usage: tcc-dgrad-dbn-probe [--device])\n",
                 argv[1]);
    return 1;
  }
  for (const tcc::cuda::GpuDescription &gpu : tcc::cuda::builtinGpus())
    for (const Case &k : cases)
      probe(&gpu, k);
  return 0;
}
