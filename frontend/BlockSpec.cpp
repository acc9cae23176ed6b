//===- BlockSpec.cpp - model.json's blocks, expanded into graph nodes -----===//
//
// A block is a small graph defined once under "blocks" and used by graph
// nodes of op "block" (one instance) or "repeat" (count instances in a
// chain). An instance's nodes are named "<instance>.<node>", as PyTorch
// names a submodule's parameters (layer1.0.conv1.weight), and a "$name"
// string in the block stands for the instance's argument `name`. The
// expansion is plain JSON → JSON before the graph is read, so everything
// after it (checks, import, passes) sees ordinary nodes.
//
//===----------------------------------------------------------------------===//

#include "frontend/SpecSections.h"

#include <map>
#include <set>

namespace tcc::frontend::detail {
namespace {

/// Nested blocks deeper than this are a mistake (or a cycle).
constexpr int kMaxBlockDepth = 8;
/// Nodes of the expanded graph: the largest real networks have a few
/// thousand; the bound stops a typo in `count` from exhausting memory.
constexpr size_t kMaxExpandedNodes = 100000;

struct Block {
  std::vector<std::string> params;
  Json graph;
};

class Expander {
public:
  explicit Expander(std::map<std::string, Block> blocks) : blocks(std::move(blocks)) {}

  /// Appends `graph`'s nodes to `out`, names prefixed by `prefix`; the
  /// name "input" and a first node without inputs read `input`.
  void expand(const Json &graph, const std::string &where, const std::string &prefix,
              const std::string &input, int depth, Json &out);

  /// The last node an instance's name (or a repeat's) stands for.
  std::map<std::string, std::string> aliases;

private:
  /// One instance of `blockName` named `name`, reading `input`; returns
  /// the name of its last node.
  std::string instance(const std::string &blockName, const Json &args, const std::string &name,
                       const std::string &input, const std::string &where, int depth,
                       Json &out);

  std::map<std::string, Block> blocks;
};

/// The name of the last node of `out` ("input" if none; "" if it has no
/// name, which the graph reader reports).
std::string lastName(const Json &out) {
  if (out.empty())
    return "input";
  const Json &last = out.back();
  return last.is_object() && last.contains("name") && last["name"].is_string()
             ? last["name"].get<std::string>()
             : std::string();
}

/// `value` with every "$param" string replaced by its argument.
Json substitute(const Json &value, const Json &args, const std::string &where) {
  if (value.is_string()) {
    const std::string &s = value.get_ref<const std::string &>();
    if (s.size() > 1 && s[0] == '$') {
      std::string param = s.substr(1);
      if (!args.contains(param))
        fail(where + ": " + quote(s) + " names no parameter of the block");
      return args[param];
    }
    return value;
  }
  if (value.is_array() || value.is_object()) {
    Json out = value;
    for (auto it = out.begin(); it != out.end(); ++it)
      *it = substitute(*it, args, where);
    return out;
  }
  return value;
}

std::string Expander::instance(const std::string &blockName, const Json &args,
                               const std::string &name, const std::string &input,
                               const std::string &where, int depth, Json &out) {
  auto it = blocks.find(blockName);
  if (it == blocks.end()) {
    std::vector<std::string> names;
    for (const auto &[known, _] : blocks)
      names.push_back(known);
    fail(where + ": block " + quote(blockName) + " is not defined under \"blocks\"" +
         didYouMean(blockName, names));
  }
  const Block &block = it->second;
  for (const std::string &param : block.params)
    if (!args.contains(param))
      fail(where + ": block " + quote(blockName) + " needs \"with\": {" + quote(param) +
           ": ...} (its params are the values its nodes read as \"$name\")");
  for (auto arg = args.begin(); arg != args.end(); ++arg) {
    if (std::find(block.params.begin(), block.params.end(), arg.key()) != block.params.end())
      continue;
    std::string hint = didYouMean(arg.key(), block.params);
    if (hint.empty()) {
      for (const std::string &p : block.params)
        hint += (hint.empty() ? "; its params are " : ", ") + quote(p);
      if (hint.empty())
        hint = "; it has none";
    }
    fail(where + ": block " + quote(blockName) + " has no param " + quote(arg.key()) + hint);
  }
  Json nodes = substitute(block.graph, args, where);
  expand(nodes, "blocks." + blockName + ".graph", name + ".", input, depth + 1, out);
  return out.back()["name"].get<std::string>();
}

void Expander::expand(const Json &graph, const std::string &where, const std::string &prefix,
                      const std::string &input, int depth, Json &out) {
  if (depth > kMaxBlockDepth)
    fail(where + ": blocks nest deeper than " + std::to_string(kMaxBlockDepth) +
         " (does a block use itself?)");
  std::string previous = input;
  std::set<std::string> local; // this graph's names, before the prefix
  for (size_t i = 0; i < graph.size(); ++i) {
    const Json &node = graph[i];
    if (!node.is_object() || !node.contains("name") || !node["name"].is_string()) {
      if (!prefix.empty())
        fail(where + "[" + std::to_string(i) + "]: a node needs a \"name\" string");
      out.push_back(node); // the graph reader reports it
      continue;
    }
    std::string own = node["name"].get<std::string>();
    std::string name = prefix + own;
    const std::string at = "node " + quote(name) + " (" + where + "[" + std::to_string(i) + "])";
    // Inputs: the block's "input", a node of this graph, or (at the top)
    // any earlier name; an instance's name stands for its last node.
    auto resolve = [&](const std::string &in) -> std::string {
      if (in == "input")
        return input;
      std::string full = local.count(in) ? prefix + in : in;
      auto alias = aliases.find(full);
      return alias == aliases.end() ? full : alias->second;
    };
    Json inputs;
    if (node.contains("inputs")) {
      inputs = node["inputs"];
      if (inputs.is_string())
        inputs = resolve(inputs.get<std::string>());
      else if (inputs.is_array())
        for (Json &in : inputs)
          if (in.is_string())
            in = resolve(in.get<std::string>());
    }
    std::string op = node.contains("op") && node["op"].is_string() ? node["op"].get<std::string>()
                                                                  : std::string();
    if (op == "block" || op == "repeat") {
      for (auto field = node.begin(); field != node.end(); ++field)
        if (!std::set<std::string>{"name", "op", "block", "with", "inputs", "count", "from"}
                 .count(field.key()) ||
            (op == "block" && (field.key() == "count" || field.key() == "from")))
          fail(at + ": unknown field " + quote(field.key()) + " for op " + op);
      if (!node.contains("block") || !node["block"].is_string())
        fail(at + ": op " + op + " needs \"block\": the name of a block under \"blocks\"");
      Json args = node.value("with", Json::object());
      if (!args.is_object())
        fail(at + ": \"with\" must be an object of the block's params, got " + describe(args));
      std::string from = previous;
      if (!inputs.is_null()) {
        if (!inputs.is_string())
          fail(at + ": op " + op + " reads one input: \"inputs\" must be a node name");
        from = inputs.get<std::string>();
      }
      std::string block = node["block"].get<std::string>();
      int64_t count = 1, first = 0;
      if (op == "repeat") {
        if (!node.contains("count") || !node["count"].is_number_integer() ||
            node["count"].get<int64_t>() < 1 || node["count"].get<int64_t>() > 10000)
          fail(at + ": op repeat needs \"count\", a whole number from 1 to 10000");
        count = node["count"].get<int64_t>();
        if (node.contains("from")) {
          if (!node["from"].is_number_integer() || node["from"].get<int64_t>() < 0 ||
              node["from"].get<int64_t>() > 1000000)
            fail(at + ": \"from\" must be a whole number from 0 to 1000000, the index of the "
                      "first instance's name");
          first = node["from"].get<int64_t>();
        }
      }
      for (int64_t k = 0; k < count; ++k) {
        std::string instanceName = op == "repeat" ? name + "." + std::to_string(first + k) : name;
        from = instance(block, args, instanceName, from, at, depth, out);
        aliases[instanceName] = from;
        if (out.size() > kMaxExpandedNodes)
          fail(at + ": the blocks expand to more than " + std::to_string(kMaxExpandedNodes) +
               " nodes");
      }
      aliases[name] = from;
      local.insert(own);
      previous = from;
      continue;
    }
    Json expanded = node;
    expanded["name"] = name;
    if (!inputs.is_null())
      expanded["inputs"] = inputs;
    else if (!prefix.empty() || previous != lastName(out))
      expanded["inputs"] = previous; // the previous node of this graph, not of `out`
    out.push_back(std::move(expanded));
    local.insert(own);
    previous = name;
  }
}

} // namespace

Json expandBlocks(const Json *blocks, const Json &graph, std::string *output) {
  if (!blocks)
    return graph;
  if (!blocks->is_object())
    fail("blocks must be an object of named blocks, got " + describe(*blocks));
  std::map<std::string, Block> defined;
  for (auto it = blocks->begin(); it != blocks->end(); ++it) {
    const std::string where = "blocks." + it.key();
    const Json &b = it.value();
    if (!b.is_object())
      fail(where + " must be an object with \"graph\" (and \"params\"), got " + describe(b));
    for (auto field = b.begin(); field != b.end(); ++field)
      if (field.key() != "graph" && field.key() != "params")
        fail(where + ": unknown field " + quote(field.key()) + "; a block has \"params\" and "
                     "\"graph\"");
    Block block;
    if (!b.contains("graph") || !b["graph"].is_array() || b["graph"].empty())
      fail(where + ": \"graph\" must be a non-empty array of nodes");
    block.graph = b["graph"];
    if (b.contains("params")) {
      if (!b["params"].is_array())
        fail(where + ": \"params\" must be an array of names, got " + describe(b["params"]));
      for (const Json &p : b["params"]) {
        if (!p.is_string() || p.get<std::string>().empty())
          fail(where + ": \"params\" must be an array of names, got " + describe(p));
        block.params.push_back(p.get<std::string>());
      }
    }
    defined.emplace(it.key(), std::move(block));
  }
  if (!graph.is_array())
    return graph; // the graph reader reports it
  Expander expander(std::move(defined));
  Json out = Json::array();
  expander.expand(graph, "graph", "", "input", 0, out);
  if (output) {
    auto alias = expander.aliases.find(*output);
    if (alias != expander.aliases.end())
      *output = alias->second;
  }
  return out;
}

} // namespace tcc::frontend::detail
