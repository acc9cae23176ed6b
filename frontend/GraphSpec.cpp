//===- GraphSpec.cpp - The `graph` array of model.json --------------------===//
//
// Nodes are read in file order; a node without `inputs` reads the previous
// node. Inputs may name later nodes, so the graph need not be listed in
// topological order: topoOrder is computed here (producers first, file order
// among ready nodes), and cycles and dead nodes are reported by name.
//
//===----------------------------------------------------------------------===//

#include "frontend/SpecSections.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>

namespace tcc::frontend::detail {
namespace {

std::string nodeLabel(const NodeSpec &node) {
  return "node " + quote(node.name) + " (graph[" + std::to_string(node.index) +
         "])";
}

/// PyTorch's parameter prefixes: a top-level nn.Sequential names its layers
/// 0, 1, ... (state_dict "0.weight"), so a name may start with a digit.
bool isValidNodeName(const std::string &name) {
  auto isWordChar = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
  };
  if (name.empty() || !isWordChar(name[0]))
    return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return isWordChar(c) || c == '.'; });
}

std::string readName(const ObjectReader &r,
                     const std::map<std::string, size_t> &seen) {
  const Json &v = r.require("name");
  if (!v.is_string())
    r.failField("name", "must be a string, got " + describe(v));
  std::string name = v.get<std::string>();
  if (name == "input")
    r.failField("name", "must not be \"input\": that name means the model "
                        "input; choose another name");
  if (!isValidNodeName(name))
    r.failField("name", "must start with a letter, a digit or '_' and hold "
                        "only letters, digits, '_' and '.', got " +
                            describe(v));
  auto it = seen.find(name);
  if (it != seen.end())
    fail("node " + quote(name) + " (" + r.owner() +
         "): name already used by graph[" + std::to_string(it->second) +
         "]; node names must be unique");
  return name;
}

std::vector<std::string> readInputs(const ObjectReader &r,
                                    const NodeSpec &node,
                                    const std::string &previous) {
  const OpArity arity = *opArity(node.op);
  const Json *v = r.find("inputs");
  if (arity.min == 0 && arity.max == 0) {
    if (v)
      r.failField("inputs", "must not be given: op " + node.op +
                                " reads no other node; remove it");
    return {};
  }
  std::string count =
      arity.max == 0           ? "at least " + std::to_string(arity.min)
      : arity.max == arity.min ? "exactly " + std::to_string(arity.min)
                               : std::to_string(arity.min) + " or " + std::to_string(arity.max);
  if (!v) {
    if (arity.min > 1)
      r.failHere("op " + node.op + " needs " + count +
                 " inputs, but 'inputs' is not given (without it a node "
                 "reads only the previous node); list them, e.g. "
                 "\"inputs\": [\"a\", \"b\"]");
    return {previous};
  }
  std::vector<std::string> inputs;
  if (v->is_string()) {
    inputs.push_back(v->get<std::string>());
  } else if (v->is_array() && !v->empty() &&
             std::all_of(v->begin(), v->end(),
                         [](const Json &e) { return e.is_string(); })) {
    for (const Json &e : *v)
      inputs.push_back(e.get<std::string>());
  } else {
    r.failField("inputs", "must be a node name or a non-empty array of node "
                          "names, got " +
                              describe(*v));
  }
  size_t n = inputs.size();
  if (n < arity.min || (arity.max != 0 && n > arity.max))
    r.failHere("op " + node.op + " takes " + count + " input" +
               (arity.min == 1 && arity.max == 1 ? "" : "s") + ", got " +
               std::to_string(n));
  return inputs;
}

NodeSpec readNode(const Json &value, size_t index,
                  const std::map<std::string, size_t> &seen,
                  const std::string &previous, const ModelSpec &spec) {
  NodeSpec node;
  node.index = index;
  ObjectReader unnamed(value, "graph[" + std::to_string(index) + "]", "");
  node.name = readName(unnamed, seen);
  ObjectReader r(value, nodeLabel(node), "");
  const Json &op = r.require("op");
  if (!op.is_string())
    r.failField("op", "must be a string such as \"conv2d\", got " +
                          describe(op));
  node.op = op.get<std::string>();
  if (!opArity(node.op)) {
    std::string hint = didYouMean(node.op, opNames());
    if (hint.empty()) {
      hint = "; the ops are";
      for (const std::string &name : opNames())
        hint += " " + name;
    }
    r.failHere("unknown op " + quote(node.op) + hint);
  }
  std::vector<std::string> allowed = opFields(node.op);
  allowed.insert(allowed.end(), {"name", "op", "inputs"});
  r.allowOnly(allowed, " for op " + node.op);
  node.inputs = readInputs(r, node, previous);
  parseOpFields(r, node, spec);
  return node;
}

/// Fails with the names along one cycle among `remaining` nodes (those that
/// Kahn's algorithm could not order; each has a remaining input).
[[noreturn]] void failCycle(const ModelSpec &spec,
                            const std::vector<bool> &remaining,
                            const std::map<std::string, size_t> &byName) {
  size_t start = std::find(remaining.begin(), remaining.end(), true) -
                 remaining.begin();
  // Walk producer-wards until a node repeats.
  std::vector<size_t> walk;
  std::vector<int> position(spec.nodes.size(), -1);
  size_t at = start;
  while (position[at] < 0) {
    position[at] = static_cast<int>(walk.size());
    walk.push_back(at);
    for (const std::string &in : spec.nodes[at].inputs) {
      auto it = byName.find(in);
      if (it != byName.end() && remaining[it->second]) {
        at = it->second;
        break;
      }
    }
  }
  std::vector<size_t> cycle(walk.begin() + position[at], walk.end());
  std::reverse(cycle.begin(), cycle.end()); // data flows producer first
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()),
              cycle.end());
  std::string text;
  for (size_t i : cycle)
    text += quote(spec.nodes[i].name) + " -> ";
  fail("graph: cycle through nodes " + text + quote(spec.nodes[cycle[0]].name) +
       "; a node cannot depend on its own output");
}

void orderAndCheck(ModelSpec &spec,
                   const std::map<std::string, size_t> &byName) {
  size_t n = spec.nodes.size();
  std::vector<std::vector<size_t>> consumers(n);
  std::vector<size_t> pending(n, 0);
  for (const NodeSpec &node : spec.nodes)
    for (const std::string &in : node.inputs)
      if (in != "input") {
        consumers[byName.at(in)].push_back(node.index);
        ++pending[node.index];
      }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0)
      ready.push(i);
  std::vector<bool> remaining(n, true);
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    remaining[i] = false;
    spec.topoOrder.push_back(i);
    for (size_t c : consumers[i])
      if (--pending[c] == 0)
        ready.push(c);
  }
  if (spec.topoOrder.size() != n)
    failCycle(spec, remaining, byName);
}

/// Token ids are indices, not features: only an embedding reads them, and
/// an embedding reads nothing else.
void checkTokenInput(const ModelSpec &spec) {
  for (const NodeSpec &node : spec.nodes) {
    bool readsInput = std::find(node.inputs.begin(), node.inputs.end(), "input") !=
                      node.inputs.end();
    if (node.op == "embedding") {
      if (!readsInput || spec.vocab == 0)
        fail(nodeLabel(node) + ": an embedding reads token ids, so its input must be " +
             "\"input\" with \"type\": \"tokens\" in the model's input" +
             (readsInput ? "" : ", not " + quote(node.inputs[0])));
      int64_t rows = node.attrs.at("num_embeddings").get<int64_t>();
      if (rows < spec.vocab)
        fail(nodeLabel(node) + ": num_embeddings " + std::to_string(rows) +
             " is less than input.vocab " + std::to_string(spec.vocab) +
             "; every token id needs a row: raise num_embeddings to at least the vocab");
    } else if (readsInput && spec.vocab > 0) {
      fail(nodeLabel(node) + ": reads the token input (token ids, input.type \"tokens\"), " +
           "which only an embedding node can read; put an embedding node first");
    }
  }
}

} // namespace

void parseGraph(const Json &graph, const Json *output, ModelSpec &spec) {
  if (!graph.is_array() || graph.empty())
    fail("graph must be a non-empty array of nodes, got " + describe(graph));
  std::map<std::string, size_t> byName;
  for (const Json &value : graph) {
    size_t index = spec.nodes.size();
    std::string previous = index == 0 ? "input" : spec.nodes.back().name;
    spec.nodes.push_back(readNode(value, index, byName, previous, spec));
    byName[spec.nodes.back().name] = index;
  }

  std::vector<std::string> names = {"input"};
  for (const NodeSpec &node : spec.nodes)
    names.push_back(node.name);
  for (const NodeSpec &node : spec.nodes)
    for (const std::string &in : node.inputs)
      if (in != "input" && !byName.count(in))
        fail(nodeLabel(node) + ": input " + quote(in) + " does not exist" +
             didYouMean(in, names));

  orderAndCheck(spec, byName);

  if (!output) {
    spec.output = spec.nodes.back().name;
  } else {
    if (!output->is_string())
      fail("output must be a node name, got " + describe(*output));
    spec.output = output->get<std::string>();
    if (spec.output == "input")
      fail("output must name a node, not the model input");
    if (!byName.count(spec.output))
      fail("output " + quote(spec.output) + " is not a node in graph" +
           didYouMean(spec.output, names));
  }

  // Every node must feed the output; a dead node is almost always a wiring
  // mistake (a forgotten residual, a typo in `inputs`).
  std::vector<bool> used(spec.nodes.size(), false);
  std::vector<size_t> work = {byName.at(spec.output)};
  used[work[0]] = true;
  while (!work.empty()) {
    size_t i = work.back();
    work.pop_back();
    for (const std::string &in : spec.nodes[i].inputs) {
      auto it = byName.find(in);
      if (it != byName.end() && !used[it->second]) {
        used[it->second] = true;
        work.push_back(it->second);
      }
    }
  }
  for (const NodeSpec &node : spec.nodes)
    if (!used[node.index])
      fail(nodeLabel(node) + " is not used by the output " +
           quote(spec.output) + "; remove it or feed it into the graph");
  checkTokenInput(spec);
}

} // namespace tcc::frontend::detail
