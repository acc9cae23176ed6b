//===- CompileReport.cpp - The JSON report of `tcc compile --report` ------===//

#include "tools/tcc/CompileOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <map>
#include <nlohmann/json.hpp>

using namespace mlir;

std::string tcc::compileReport(ModuleOp module, const CompileOptions &options) {
  nlohmann::json report;
  report["model"] = options.model;
  if (auto name = module->getAttrOfType<StringAttr>("tcc.model"))
    report["name"] = name.str();
  report["emit"] = options.emit;
  report["target"] = options.target;
  if (auto train = module->getAttrOfType<DictionaryAttr>("tcc.train"))
    if (auto precision = train.getAs<StringAttr>("precision"))
      report["precision"] = precision.str();

  int64_t parameters = 0, trainable = 0, buffers = 0;
  std::map<std::string, int64_t> ops;
  module.walk([&](func::FuncOp fn) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      int64_t n = cast<ShapedType>(fn.getArgument(i).getType()).getNumElements();
      if (fn.getArgAttr(i, "tcc.param")) {
        parameters += n;
        if (auto t = fn.getArgAttrOfType<BoolAttr>(i, "tcc.trainable");
            t && t.getValue())
          trainable += n;
      } else if (fn.getArgAttr(i, "tcc.buffer")) {
        buffers += n;
      }
    }
    fn.walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "tcc")
        ++ops[op->getName().getStringRef().str()];
    });
  });
  report["parameters"] = parameters;
  report["trainable_parameters"] = trainable;
  report["buffer_elements"] = buffers;
  report["ops"] = ops;
  report["passes"] = nlohmann::json::array();
  return report.dump(2) + "\n";
}
