//===- SpecSections.h - Parsers of the parts of model.json ------*- C++ -*-===//
//
// Internal to the frontend. Each function reads one part of model.json into
// the ModelSpec, filling defaults, and throws SpecError on the first problem.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_FRONTEND_SPECSECTIONS_H
#define TCC_FRONTEND_SPECSECTIONS_H

#include "frontend/JsonReader.h"
#include "frontend/ModelSpec.h"

#include <optional>

namespace tcc::frontend::detail {

/// How many producers an op reads: [min, max], `max` 0 for no bound, and
/// min 0 for an op that reads none (a parameter node: {0, 0}).
struct OpArity {
  unsigned min, max;
};

/// Every op name, in documentation order.
const std::vector<std::string> &opNames();
/// The op's arity, or nullopt for an unknown op.
std::optional<OpArity> opArity(std::string_view op);
/// The op-specific field names of `op` (besides name, op, inputs).
const std::vector<std::string> &opFields(std::string_view op);
/// Reads the op fields of `node` (whose name, op and inputs are set) into
/// node.attrs and node.params. `spec.inputShape` must be set.
void parseOpFields(const ObjectReader &r, NodeSpec &node,
                   const ModelSpec &spec);

/// Reads `graph` and `output` (may be null) into spec.nodes, spec.output and
/// spec.topoOrder, checking names, inputs, cycles and dead nodes.
void parseGraph(const Json &graph, const Json *output, ModelSpec &spec);
/// `graph` with its "block" and "repeat" nodes replaced by the nodes of the
/// blocks they name (BlockSpec.cpp); `output`, if it names an instance, is
/// renamed to the instance's last node. `blocks` may be null.
Json expandBlocks(const Json *blocks, const Json &graph, std::string *output);

LossSpec parseLoss(const ObjectReader &r);
/// The `train` section with every default filled.
rt::TrainRecipe parseTrain(const ObjectReader &r);
/// train.loss_scale (GradScaler's settings), defaults filled.
rt::LossScale parseLossScale(const ObjectReader &r);
/// The `data` section (may be null) with every default filled; checks that
/// the data set fits spec.inputShape and spec.classes.
rt::DataRecipe parseData(const Json *data, const ModelSpec &spec);
/// The `eval` section (may be null) with every default filled.
rt::EvalRecipe parseEval(const Json *eval, const ModelSpec &spec);

/// Checks between the graph and the recipe (ghost batches must split the
/// batch). Whether optimizer groups match parameters is checked by the
/// importer, which names the parameters.
void checkRecipeAgainstGraph(const ModelSpec &spec);

/// Checks that a batch of inputs fits one tensor, for the train step (all
/// micro-batches of train.accumulate) and the eval step.
void checkBatchTensors(const ModelSpec &spec);

/// "[3, 32, 32]".
std::string shapeText(const std::vector<int64_t> &shape);

} // namespace tcc::frontend::detail

#endif // TCC_FRONTEND_SPECSECTIONS_H
