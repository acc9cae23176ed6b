//===- DgradDbnGraph.cpp - cuDNN's dgrad + drelu + dbn_weight graph -------===//

#include "runtime/cuda/DgradDbnGraph.h"

#include <cudnn_frontend.h>

#include <memory>
#include <vector>

namespace fe = cudnn_frontend;

namespace tcc::cuda {

namespace {

using Tensor = std::shared_ptr<fe::graph::Tensor_attributes>;

std::vector<int64_t> nhwcStrides(const std::vector<int64_t> &d) {
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

Tensor channels(fe::graph::Graph &g, const char *name, int64_t c) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_dim({1, c, 1, 1})
                      .set_stride({c, 1, c, c})
                      .set_data_type(fe::DataType_t::FLOAT));
}

} // namespace

bool dgradDbnHasEngine(const ConvProblem &p, const GpuDescription &gpu, std::string &why) {
  auto properties = std::make_shared<fe::DeviceProperties>();
  std::string json = gpu.cudnnJson;
  std::vector<uint8_t> bytes(json.begin(), json.end());
  if (properties->deserialize(bytes).is_bad()) {
    why = "cuDNN does not accept the description of the " + std::string(gpu.name);
    return false;
  }
  fe::graph::Graph g;
  g.set_device_properties(properties);
  g.set_sm_version(gpu.smVersion);
  g.set_io_data_type(fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  std::vector<int64_t> dyDims = {p.n, p.k, p.p, p.q}, xDims = {p.n, p.c, p.h, p.w},
                       wDims = {p.k, p.c / p.groups, p.r, p.s};
  auto nhwc = [&](const char *name, const std::vector<int64_t> &dims) {
    return g.tensor(
        fe::graph::Tensor_attributes().set_name(name).set_dim(dims).set_stride(nhwcStrides(dims)));
  };
  // The weight KCRS, as tcc keeps it (KRSC fares no better: docs/cuda.md).
  auto w = g.tensor(fe::graph::Tensor_attributes().set_name("w").set_dim(wDims).set_stride(
      {wDims[1] * p.r * p.s, p.r * p.s, p.s, 1}));
  auto dz = g.conv_dgrad(nhwc("dy", dyDims), w,
                         fe::graph::Conv_dgrad_attributes()
                             .set_padding({p.padH, p.padW})
                             .set_stride({p.strideH, p.strideW})
                             .set_dilation({p.dilationH, p.dilationW}));
  dz->set_dim(xDims);
  auto drelu = g.pointwise(dz, nhwc("relu", xDims),
                           fe::graph::Pointwise_attributes().set_mode(fe::PointwiseMode_t::RELU_BWD));
  drelu->set_output(true).set_dim(xDims).set_stride(nhwcStrides(xDims));
  auto [dscale, dbias, eqDy, eqX, eqBias] =
      g.dbn_weight(drelu, nhwc("x", xDims), channels(g, "mean", p.c), channels(g, "invstd", p.c),
                   channels(g, "scale", p.c), fe::graph::DBN_weight_attributes());
  for (const Tensor &t : {dscale, dbias, eqDy, eqX, eqBias})
    t->set_output(true).set_data_type(fe::DataType_t::FLOAT);
  fe::error_t status = g.validate();
  if (status.is_good())
    status = g.build_operation_graph();
  if (status.is_good())
    status = g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
  if (status.is_bad()) {
    why = status.get_message();
    return false;
  }
  (void)g.check_support();
  for (int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
    status = g.build_plan_at_index(i);
    if (status.is_good())
      return true;
    why = status.get_message();
  }
  return false;
}

} // namespace tcc::cuda
