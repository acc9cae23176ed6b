//===- DataCheck.h - The model's data, looked at when it is compiled -*- C++ -*-===//
#ifndef TCC_TOOLS_TCC_DATACHECK_H
#define TCC_TOOLS_TCC_DATACHECK_H

#include "frontend/ModelSpec.h"

#include <string>
#include <vector>

namespace tcc {

/// What would stop the trainer at start that can be seen now: data.path
/// missing, a file of its format missing, images of another shape than
/// input.shape (where a header says so). Warnings, not errors: the data may
/// be produced later or given with ./train --data.
std::vector<std::string> checkDataAtCompile(const ::tcc::frontend::ModelSpec &spec);

} // namespace tcc

#endif // TCC_TOOLS_TCC_DATACHECK_H
