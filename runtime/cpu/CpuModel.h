//===- CpuModel.h - The step contract on host memory -------------*- C++ -*-===//
//
// The base of every CompiledModel of the cpu target (the generated one and
// the trainer tests' hand-written one): on the host, the bound StepControl
// block is ordinary memory, so the totals are read and reset in place. A
// model defines trainStep() and evalStep() on the bound buffers.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CPU_CPUMODEL_H
#define TCC_RUNTIME_CPU_CPUMODEL_H

#include "runtime/CompiledModel.h"

namespace tcc::rt {

class CpuModel : public CompiledModel {
public:
  void bind(const StepBuffers &buffers) override { bound = buffers; }
  StepTotals readTotals() override { return bound.control->totals; }
  void resetTotals() override {
    bound.control->totals = StepTotals();
    bound.control->evalBatch = 0;
  }

protected:
  const StepBuffers &buffers() const { return bound; }

private:
  StepBuffers bound;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_CPUMODEL_H
