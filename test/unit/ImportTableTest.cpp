//===- ImportTableTest.cpp - Every op model.json accepts is imported ------===//
//
// An op is added to the frontend in two tables: its fields (OpSpecs.cpp) and
// its import (ImportOps.cpp). An op in one and not the other would be
// accepted and then fail as an internal error, or never be reachable.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportOps.h"
#include "frontend/SpecSections.h"

#include <gtest/gtest.h>

#include <algorithm>

TEST(ImportTable, EveryOpWithFieldsIsImportedAndNoOther) {
  std::vector<std::string> specified = tcc::frontend::detail::opNames();
  std::vector<std::string> imported = mlir::tcc::importedOps();
  std::sort(specified.begin(), specified.end());
  std::sort(imported.begin(), imported.end());
  EXPECT_EQ(specified, imported);
  EXPECT_GE(imported.size(), 26u);
}
