//===- PassReport.cpp - What each optimization pass did -------------------===//

#include "passes/PassReport.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tcc;

void mlir::tcc::recordPassResult(ModuleOp module, StringRef pass, StringRef key,
                                 Attribute value) {
  Builder b(module.getContext());
  NamedAttrList passes(module->getAttrOfType<DictionaryAttr>(kPassReportAttr));
  NamedAttrList results(passes.get(pass) ? cast<DictionaryAttr>(passes.get(pass))
                                         : DictionaryAttr());
  results.set(key, value);
  passes.set(pass, results.getDictionary(module.getContext()));
  module->setAttr(kPassReportAttr, passes.getDictionary(module.getContext()));
}
