//===- SdpaProbe.cpp - What cuDNN's fused attention builds without a GPU --===//
//
// Not part of tcc: a probe for issue 38's cuDNN attention (docs/performance.md,
// "Fused attention: what cuDNN builds without a GPU"). For each built-in GPU
// description (GpuDescriptions.cpp), data type, sequence length, causal
// mask and dropout, it describes cudnn-frontend's scaled-dot-product
// attention forward (with its softmax statistics, for training) and
// backward on tcc's tensors ([N, T, H*d] as [N, H, T, d] with strides
// {T*H*d, d, H*d, 1}; the statistics [N, H, T, 1] in f32), asks the
// heuristics (modes A and fallback) for candidates as the convolutions do
// (ConvPlans.cpp), builds each and prints one line per case: candidates,
// plans built, the first plan's name and workspace, or cuDNN's message.
// With --device, the same graphs on this machine's GPU instead, through a
// cuDNN handle, so that the runtime-compiled engines (NVRTC, which needs the
// driver) are offered too, each build timed: what a trainer could build at
// its start (scripts/gpu-session.sh runs it on a lent GPU).
// Build: ninja tcc-sdpa-probe (not in the default build).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/GpuDescriptions.h"

#include <cudnn_frontend.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace fe = cudnn_frontend;
using Tensor = std::shared_ptr<fe::graph::Tensor_attributes>;

namespace {

struct Case {
  const char *gpu;
  fe::DataType_t type;
  int64_t n, heads, t, d;
  bool causal, backward;
  /// 0: none; 1: cuDNN's Philox (seed and offset tensors); 2: a given mask
  /// tensor [N, H, T, T] and its scale (tcc's own counter-based mask).
  int dropout;
  fe::AttentionImplementation_t implementation;
  /// Forward only: no softmax statistics (what an evaluation step needs).
  bool inference = false;
};

const char *implementationName(fe::AttentionImplementation_t implementation) {
  return implementation == fe::AttentionImplementation_t::UNIFIED     ? "unified"
         : implementation == fe::AttentionImplementation_t::COMPOSITE ? "composite"
                                                                      : "auto";
}

/// cuDNN's message for a graph no engine takes, one clause per engine:
/// "e<id>: <its first reason>".
std::string engineReasons(const std::string &message) {
  std::string out;
  for (size_t at = message.find("{\"engineId\":"); at != std::string::npos;
       at = message.find("{\"engineId\":", at + 1)) {
    const size_t idStart = at + 12, idEnd = message.find(',', idStart);
    const size_t reason = message.find("Reason: ", idEnd);
    std::string why = reason == std::string::npos
                          ? "?"
                          : message.substr(reason + 8, message.find('\n', reason) - reason - 8);
    if (const size_t where = why.find(" at: "); where != std::string::npos)
      why.resize(where);
    out += (out.empty() ? "" : "; ") + std::string("e") +
           message.substr(idStart, idEnd - idStart) + ": " + why;
  }
  return out.empty() ? message : out;
}

const char *typeName(fe::DataType_t type) {
  return type == fe::DataType_t::BFLOAT16 ? "bf16"
         : type == fe::DataType_t::HALF   ? "fp16"
                                          : "fp32";
}

std::unique_ptr<fe::DeviceProperties> deviceProperties(const tcc::cuda::GpuDescription &gpu,
                                                       std::string &error) {
  auto properties = std::make_unique<fe::DeviceProperties>();
  std::string json = gpu.cudnnJson;
  std::vector<uint8_t> bytes(json.begin(), json.end());
  fe::error_t status = properties->deserialize(bytes);
  if (status.is_bad()) {
    error = "device properties: " + status.get_message();
    return nullptr;
  }
  return properties;
}

/// tcc's [N, T, H*d] activation as cuDNN's [N, H, T, d].
Tensor activation(fe::graph::Graph &g, const char *name, int64_t uid, const Case &c) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({c.n, c.heads, c.t, c.d})
                      .set_stride({c.t * c.heads * c.d, c.d, c.heads * c.d, 1}));
}

void asActivation(const Tensor &out, int64_t uid, const Case &c) {
  out->set_output(true).set_uid(uid).set_dim({c.n, c.heads, c.t, c.d}).set_stride(
      {c.t * c.heads * c.d, c.d, c.heads * c.d, 1});
}

Tensor stats(fe::graph::Graph &g, int64_t uid, const Case &c) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name("stats")
                      .set_uid(uid)
                      .set_dim({c.n, c.heads, c.t, 1})
                      .set_stride({c.heads * c.t, c.t, 1, 1})
                      .set_data_type(fe::DataType_t::FLOAT));
}

/// Seed and offset (pass-by-value int64 scalars) or mask and scale.
template <class Attributes> void addDropout(fe::graph::Graph &g, const Case &c, Attributes &a) {
  auto scalar = [&](const char *name, int64_t uid, fe::DataType_t type) {
    return g.tensor(fe::graph::Tensor_attributes()
                        .set_name(name)
                        .set_uid(uid)
                        .set_dim({1, 1, 1, 1})
                        .set_stride({1, 1, 1, 1})
                        .set_data_type(type));
  };
  if (c.dropout == 1)
    a.set_dropout(0.1f, scalar("seed", 20, fe::DataType_t::INT64),
                  scalar("offset", 21, fe::DataType_t::INT64));
  else if (c.dropout == 2) {
    Tensor mask = g.tensor(fe::graph::Tensor_attributes()
                               .set_name("mask")
                               .set_uid(22)
                               .set_dim({c.n, c.heads, c.t, c.t})
                               .set_stride({c.heads * c.t * c.t, c.t * c.t, c.t, 1})
                               .set_data_type(c.type));
    Tensor scale = scalar("scale", 23, fe::DataType_t::FLOAT);
    // The backward takes 1/scale too.
    if constexpr (std::is_same_v<Attributes, fe::graph::SDPA_backward_attributes>)
      a.set_dropout(mask, scale, scalar("scale_inv", 24, fe::DataType_t::FLOAT));
    else
      a.set_dropout(mask, scale);
  }
}

/// The GPU's handle for --device cases (gpu "device"), else null.
cudnnHandle_t deviceHandle = nullptr;

std::string probe(const Case &c) {
  fe::graph::Graph g;
  if (!deviceHandle) {
    std::string error;
    const tcc::cuda::GpuDescription *gpu = tcc::cuda::findGpu(c.gpu, error);
    if (!gpu)
      return error;
    auto properties = deviceProperties(*gpu, error);
    if (!properties)
      return error;
    g.set_device_properties(std::shared_ptr<fe::DeviceProperties>(std::move(properties)));
    g.set_sm_version(gpu->smVersion);
  }
  g.set_io_data_type(c.type)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const float scale = 0.125f; // 1/sqrt(64)
  Tensor q = activation(g, "q", 1, c), k = activation(g, "k", 2, c), v = activation(g, "v", 3, c);
  if (!c.backward) {
    auto a = fe::graph::SDPA_attributes()
                 .set_name("sdpa")
                 .set_generate_stats(!c.inference)
                 .set_attn_scale(scale)
                 .set_causal_mask(c.causal)
                 .set_implementation(c.implementation);
    addDropout(g, c, a);
    auto [o, lse] = g.sdpa(q, k, v, a);
    asActivation(o, 4, c);
    if (lse)
      lse->set_output(true).set_uid(5).set_data_type(fe::DataType_t::FLOAT);
  } else {
    Tensor o = activation(g, "o", 4, c), dO = activation(g, "dO", 6, c);
    auto a = fe::graph::SDPA_backward_attributes()
                 .set_name("sdpa_backward")
                 .set_attn_scale(scale)
                 .set_causal_mask(c.causal);
    addDropout(g, c, a);
    auto [dq, dk, dv] = g.sdpa_backward(q, k, v, o, dO, stats(g, 5, c), a);
    asActivation(dq, 7, c);
    asActivation(dk, 8, c);
    asActivation(dv, 9, c);
  }
  fe::error_t status = g.validate();
  if (status.is_bad())
    return "validate: " + status.get_message();
  status = deviceHandle ? g.build_operation_graph(deviceHandle) : g.build_operation_graph();
  if (status.is_bad())
    return "build_operation_graph: " + status.get_message();
  status = g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
  if (status.is_bad())
    return "no engine: " + engineReasons(status.get_message());
  const int64_t candidates = g.get_execution_plan_count();
  (void)g.check_support();
  int built = 0;
  std::string first, lastError;
  int64_t workspace = -1;
  double firstSeconds = 0, allSeconds = 0;
  for (int64_t i = 0; i < candidates; ++i) {
    const auto start = std::chrono::steady_clock::now();
    status = g.build_plan_at_index(i);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    allSeconds += seconds;
    if (status.is_bad()) {
      lastError = status.get_message();
      continue;
    }
    if (built++ == 0) {
      firstSeconds = seconds;
      (void)g.get_plan_name_at_index(i, first);
      (void)g.get_workspace_size_plan_at_index(i, workspace);
    }
  }
  std::string line = std::to_string(candidates) + " candidates, " + std::to_string(built) +
                     " built";
  if (built)
    line += "; first " + first + ", workspace " + std::to_string(workspace) + " B";
  if (deviceHandle) { // the runtime-compiled engines' cost at a trainer's start
    char times[96];
    std::snprintf(times, sizeof times, "; builds took %.2f s (the first built: %.2f s)",
                  allSeconds, firstSeconds);
    line += times;
  }
  if (!lastError.empty())
    line += "; a failure said: " + lastError;
  return line;
}

} // namespace

/// [--device] [CASE-PREFIX]: with --device, this machine's GPU in place of
/// the descriptions; with a prefix, only the cases whose line starts with it.
int main(int argc, char **argv) {
  std::printf("cuDNN %zu, cudnn-frontend %d\n", cudnnGetVersion(), CUDNN_FRONTEND_VERSION);
  std::vector<const char *> gpus = {"h100", "a100"};
  if (argc >= 2 && std::strcmp(argv[1], "--device") == 0) {
    if (cudnnStatus_t status = cudnnCreate(&deviceHandle); status != CUDNN_STATUS_SUCCESS) {
      std::fprintf(stderr, "error: no cuDNN handle on this machine's GPU: %s\n",
                   cudnnGetErrorString(status));
      return 1;
    }
    gpus = {"device"};
    --argc, ++argv;
  }
  const char *dropoutNames[] = {"", ", dropout (Philox)", ", dropout (given mask)"};
  using Impl = fe::AttentionImplementation_t;
  std::vector<Case> cases;
  for (const char *gpu : gpus)
    for (fe::DataType_t type : {fe::DataType_t::BFLOAT16, fe::DataType_t::HALF})
      for (int64_t t : {197, 256})
        for (bool causal : {false, true})
          for (bool backward : {false, true})
            for (Impl impl : {Impl::AUTO, Impl::COMPOSITE, Impl::UNIFIED})
              if (!backward || impl == Impl::AUTO) // the backward has no choice
                cases.push_back({gpu, type, 32, 12, t, 64, causal, backward, 0, impl});
  for (const char *gpu : gpus)
    for (bool backward : {false, true}) {
      for (int dropout : {1, 2})
        cases.push_back({gpu, fe::DataType_t::BFLOAT16, 32, 12, 256, 64, true, backward,
                         dropout, Impl::AUTO});
      cases.push_back(
          {gpu, fe::DataType_t::FLOAT, 32, 12, 256, 64, false, backward, 0, Impl::AUTO});
    }
  for (const char *gpu : gpus)
    for (Impl impl : {Impl::COMPOSITE, Impl::UNIFIED})
      cases.push_back({gpu, fe::DataType_t::BFLOAT16, 32, 12, 256, 64, false, false, 0, impl,
                       /*inference=*/true});
  for (const Case &c : cases) {
    char name[200];
    std::snprintf(name, sizeof name, "%s %s T %ld%s %s%s [%s]", c.gpu, typeName(c.type),
                  long(c.t), c.causal ? " causal" : "",
                  c.backward ? "backward" : c.inference ? "inference" : "forward",
                  dropoutNames[c.dropout], implementationName(c.implementation));
    if (argc >= 2 && std::string(name).rfind(argv[1], 0) != 0)
      continue;
    std::string result;
    try { // the frontend throws where no SDPA implementation takes the attributes
      result = probe(c);
    } catch (const std::exception &e) {
      result = std::string("sdpa node: ") + e.what();
    }
    std::printf("%s: %s\n", name, result.c_str());
  }
  return 0;
}
