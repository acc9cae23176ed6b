//===- ConvGraph.cpp - One convolution as a cuDNN graph -------------------===//

#include "runtime/cuda/ConvGraph.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>

namespace tcc::cuda {

namespace {

/// The finalized cuDNN descriptor of a built-in GPU, made once per GPU.
std::shared_ptr<fe::DeviceProperties> deviceProperties(const GpuDescription &gpu,
                                                       std::string &error) {
  static std::map<std::string, std::shared_ptr<fe::DeviceProperties>> made;
  auto found = made.find(gpu.name);
  if (found != made.end())
    return found->second;
  auto properties = std::make_shared<fe::DeviceProperties>();
  std::string json = gpu.cudnnJson;
  std::vector<uint8_t> bytes(json.begin(), json.end());
  fe::error_t status = properties->deserialize(bytes);
  if (status.is_bad()) {
    error = "cuDNN " + std::to_string(cudnnVersion()) +
            " does not accept the description of the " + gpu.name + " (" +
            status.get_message() + "); describing a GPU needs cuDNN 9.8 or newer";
    return nullptr;
  }
  made[gpu.name] = properties;
  return properties;
}

fe::DataType_t dataType(ConvDataType dtype) {
  switch (dtype) {
  case ConvDataType::Float32:
    return fe::DataType_t::FLOAT;
  case ConvDataType::BFloat16:
    return fe::DataType_t::BFLOAT16;
  case ConvDataType::Float16:
    return fe::DataType_t::HALF;
  }
  return fe::DataType_t::FLOAT;
}

/// The strides of a 4-d tensor with logical dims [n, c, h, w] (the order
/// cuDNN takes dims in) stored in `layout`. The weight is always NCHW
/// (KCRS): ConvProblem.h.
std::vector<int64_t> strides(const std::vector<int64_t> &dims, ConvLayout layout) {
  int64_t c = dims[1], h = dims[2], w = dims[3];
  if (layout == ConvLayout::NCHW)
    return {c * h * w, h * w, w, 1};
  return {c * h * w, 1, w * c, c};
}

/// A 4-d tensor [d0, d1, d2, d3] (logical NCHW order, as cuDNN wants the
/// dims) stored in `layout`.
std::shared_ptr<fe::graph::Tensor_attributes>
tensor(fe::graph::Graph &graph, const char *name, int64_t uid,
       std::vector<int64_t> dims, ConvLayout layout) {
  return graph.tensor(fe::graph::Tensor_attributes()
                          .set_name(name)
                          .set_uid(uid)
                          .set_dim(dims)
                          .set_stride(strides(dims, layout)));
}

void setOutput(const std::shared_ptr<fe::graph::Tensor_attributes> &out,
               int64_t uid, std::vector<int64_t> dims, ConvLayout layout) {
  out->set_output(true).set_uid(uid).set_dim(dims).set_stride(
      strides(dims, layout));
}

} // namespace

bool buildConvGraph(const ConvProblem &problem, const GpuDescription *gpu,
                    cudnnHandle_t handle, fe::graph::Graph &graph, std::string &error) {
  if (gpu) {
    auto properties = deviceProperties(*gpu, error);
    if (!properties)
      return false;
    graph.set_device_properties(properties);
    graph.set_sm_version(gpu->smVersion);
  }
  graph.set_io_data_type(dataType(problem.dtype))
      .set_compute_data_type(fe::DataType_t::FLOAT);
  if (problem.epilogue != ConvEpilogue::None)
    graph.set_intermediate_data_type(fe::DataType_t::FLOAT);

  const ConvProblem &p = problem;
  std::vector<int64_t> x = {p.n, p.c, p.h, p.w};
  std::vector<int64_t> wt = {p.k, p.c / p.groups, p.r, p.s};
  std::vector<int64_t> y = {p.n, p.k, p.p, p.q};
  // The geometry, on whichever direction's attributes.
  auto geometry = [&](auto attributes) {
    return attributes.set_padding({p.padH, p.padW})
        .set_stride({p.strideH, p.strideW})
        .set_dilation({p.dilationH, p.dilationW});
  };
  switch (p.direction) {
  case ConvDirection::Forward: {
    auto weight = tensor(graph, "w", kWeightUid, wt,
                         p.weightChannelsLast() ? ConvLayout::NHWC : ConvLayout::NCHW);
    auto input = tensor(graph, "x", kInputUid, x, p.layout);
    auto result = graph.conv_fprop(input, weight, geometry(fe::graph::Conv_fprop_attributes()));
    // The epilogue on the f32 sums (the compute type), rounded once when
    // the last node stores.
    if (p.epilogue == ConvEpilogue::Bias || p.epilogue == ConvEpilogue::BiasRelu) {
      auto bias = graph.tensor(fe::graph::Tensor_attributes()
                                   .set_name("bias")
                                   .set_uid(kBiasUid)
                                   .set_dim({1, p.k, 1, 1})
                                   .set_stride({p.k, 1, 1, 1}));
      result = graph.pointwise(
          result, bias, fe::graph::Pointwise_attributes().set_mode(fe::PointwiseMode_t::ADD));
    }
    if (p.epilogue == ConvEpilogue::BiasRelu)
      result = graph.pointwise(
          result, fe::graph::Pointwise_attributes().set_mode(fe::PointwiseMode_t::RELU_FWD));
    setOutput(result, kOutputUid, y, p.layout);
    // The statistics of the stored y, per channel in f32 ([1, k, 1, 1]).
    if (p.epilogue == ConvEpilogue::Statistics) {
      auto [sum, squares] = graph.genstats(result, fe::graph::Genstats_attributes());
      for (auto [stat, uid] : {std::pair(sum, kSumUid), std::pair(squares, kSquareSumUid)})
        stat->set_output(true)
            .set_uid(uid)
            .set_data_type(fe::DataType_t::FLOAT)
            .set_dim({1, p.k, 1, 1})
            .set_stride({p.k, 1, p.k, p.k});
    }
    break;
  }
  case ConvDirection::BackwardData: {
    auto weight = tensor(graph, "w", kWeightUid, wt, ConvLayout::NCHW);
    auto grad = tensor(graph, "dy", kOutputUid, y, p.layout);
    setOutput(graph.conv_dgrad(grad, weight, geometry(fe::graph::Conv_dgrad_attributes())),
              kInputUid, x, p.layout);
    break;
  }
  case ConvDirection::BackwardFilter: {
    // The weight gradient takes the weight's uid; no weight is read.
    auto grad = tensor(graph, "dy", kOutputUid, y, p.layout);
    auto input = tensor(graph, "x", kInputUid, x, p.layout);
    setOutput(graph.conv_wgrad(grad, input, geometry(fe::graph::Conv_wgrad_attributes())),
              kWeightUid, wt, ConvLayout::NCHW);
    break;
  }
  }
  fe::error_t status = graph.validate();
  if (status.is_good())
    status = gpu ? graph.build_operation_graph() : graph.build_operation_graph(handle);
  if (status.is_bad()) {
    error = "cuDNN does not accept the convolution [" + problem.key() +
            "]: " + status.get_message();
    return false;
  }
  return true;
}

void restrictNumerics(const ConvProblem &problem, fe::graph::Graph &graph) {
  std::vector<fe::NumericalNote_t> barred = {fe::NumericalNote_t::NONDETERMINISTIC};
  // An f32 convolution computes what the cpu step does within summation
  // order: no TF32 (tensor cores), and none of the algorithms that round
  // differently (FFT, Winograd, lower-precision inputs or sums), which the
  // heuristics rarely rank first but `tcc tune` found fastest for some
  // (2026-11-26, docs/performance.md: 7e-4 from the cpu step in 10 steps).
  if (problem.dtype == ConvDataType::Float32)
    barred.insert(barred.end(),
                  {fe::NumericalNote_t::TENSOR_CORE, fe::NumericalNote_t::DOWN_CONVERT_INPUTS,
                   fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION, fe::NumericalNote_t::FFT,
                   fe::NumericalNote_t::WINOGRAD, fe::NumericalNote_t::WINOGRAD_TILE_4x4,
                   fe::NumericalNote_t::WINOGRAD_TILE_6x6,
                   fe::NumericalNote_t::WINOGRAD_TILE_13x13});
  graph.deselect_numeric_notes(barred);
}

std::vector<std::string> ConvGraph::numericNotes(int64_t index) const {
  std::vector<std::string> names;
  if (index < int64_t(plans.numeric_notes.size()))
    for (fe::NumericalNote_t note : plans.numeric_notes[index])
      names.push_back(nlohmann::json(note).get<std::string>());
  return names;
}

std::string ConvGraph::buildBakedPlan(const ConvEngine &choice, int64_t &workspaceBytes) {
  std::string failure = addConfiguration(choice);
  if (!failure.empty())
    return failure;
  fe::error_t status = check_support();
  if (status.is_good())
    status = build_plans();
  if (status.is_good())
    status = get_workspace_size(workspaceBytes);
  std::string built;
  if (status.is_good())
    status = get_plan_name(built);
  if (status.is_bad())
    return status.get_message();
  if (!choice.name.empty() && built != choice.name)
    return "cuDNN built '" + built + "' instead";
  return "";
}

std::string ConvGraph::addConfiguration(const ConvEngine &choice) {
  fe::detail::backend_descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  fe::error_t made = fe::detail::create_engine(
      engine, choice.engine, operation_graph->get_raw_desc(), device_properties);
  if (made.is_bad())
    return "no engine " + std::to_string(choice.engine) + ": " + made.get_message();
  std::vector<fe::detail::backend_descriptor> knobs;
  for (const auto &[type, value] : choice.knobs) {
    fe::detail::backend_descriptor knob(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    auto backendType = static_cast<cudnnBackendKnobType_t>(type);
    int64_t setting = value;
    if (fe::detail::set_attribute(knob.get_ptr(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                  CUDNN_TYPE_KNOB_TYPE, 1, &backendType) ||
        fe::detail::set_attribute(knob.get_ptr(), CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                  CUDNN_TYPE_INT64, 1, &setting) ||
        fe::detail::finalize(knob.get_ptr()))
      return "knob " + std::to_string(type) + "=" + std::to_string(value) +
             " is refused";
    knobs.push_back(std::move(knob));
  }
  auto config = fe::make_shared_backend_pointer(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  made = fe::detail::create_engine_config(config, engine, knobs);
  if (made.is_good()) {
    plans.enqueue_engine_configs({config});
    made = plans.query_properties();
  }
  return made.is_good() ? "" : made.get_message();
}

bool parsePlanName(const std::string &tag, ConvEngine &engine) {
  if (tag.compare(0, 3, "eng") != 0)
    return false;
  const char *text = tag.c_str() + 3;
  char *end = nullptr;
  engine.engine = std::strtoll(text, &end, 10);
  if (end == text)
    return false;
  engine.knobs.clear();
  while (*end == '_') {
    if (end[1] != 'k')
      return false;
    text = end + 2;
    int64_t type = std::strtoll(text, &end, 10);
    if (end == text || *end != '=')
      return false;
    text = end + 1;
    int64_t value = std::strtoll(text, &end, 10);
    if (end == text)
      return false;
    engine.knobs.emplace_back(type, value);
  }
  std::sort(engine.knobs.begin(), engine.knobs.end());
  return *end == '\0';
}

bool buildAllCandidates(const ConvProblem &problem, ConvGraph &graph, int64_t workspaceLimit,
                        int most, std::vector<std::pair<int64_t, ConvEngine>> &built,
                        int &offered, std::string &error) {
  fe::error_t status = graph.create_execution_plans(
      {fe::HeurMode_t::A, fe::HeurMode_t::B, fe::HeurMode_t::FALLBACK});
  if (status.is_bad()) {
    error = "cuDNN's heuristics offer no engine for [" + problem.key() +
            "]: " + status.get_message();
    return false;
  }
  offered = int(graph.get_execution_plan_count());
  restrictNumerics(problem, graph);
  graph.deselect_workspace_greater_than(workspaceLimit);
  (void)graph.check_support();
  // Modes A and B offer many of the same configurations.
  std::set<std::string> seen;
  for (int64_t index = 0; index < offered && (most <= 0 || int(built.size()) < most);
       ++index) {
    ConvEngine engine;
    if (graph.build_plan_at_index(index).is_good() && describeEngine(graph, index, engine) &&
        engine.workspaceBytes <= workspaceLimit && seen.insert(engine.name).second)
      built.emplace_back(index, engine);
  }
  if (built.empty())
    error = "none of the " + std::to_string(offered) + " engine configurations cuDNN offers "
            "for [" + problem.key() + "] builds within the workspace limit";
  return !built.empty();
}

bool describeEngine(ConvGraph &graph, int64_t index, ConvEngine &engine) {
  if (graph.get_plan_name_at_index(index, engine.name).is_bad() ||
      !parsePlanName(engine.name, engine))
    return false;
  (void)graph.get_workspace_size_plan_at_index(index, engine.workspaceBytes);
  engine.numericNotes = graph.numericNotes(index);
  return true;
}


} // namespace tcc::cuda
