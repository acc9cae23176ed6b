//===- CompiledModel.cpp - Out-of-line parts of the model contract ---------===//

#include "runtime/CompiledModel.h"

namespace tcc::rt {

void CompiledModel::predictStep() {
  throw ModelSetupError("this " + info().target +
                        " trainer has no predict step: only a token model compiled for the "
                        "cpu target has one (tcc sample builds it)");
}

size_t dtypeSize(DType type) {
  switch (type) {
  case DType::F32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I64:
    return 8;
  case DType::U8:
    return 1;
  }
  return 0;
}

const char *dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::I64:
    return "I64";
  case DType::U8:
    return "U8";
  }
  return "?";
}

} // namespace tcc::rt
