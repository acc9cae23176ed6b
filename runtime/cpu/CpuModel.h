//===- CpuModel.h - The step contract on host memory -------------*- C++ -*-===//
//
// The base of every CompiledModel of the cpu target (the generated one and
// the trainer tests' hand-written one): on the host, the bound StepControl
// block is ordinary memory, so the totals are read and reset in place. A
// model defines trainStep() and evalStep() on the bound buffers; a generated
// one also its training step's op sites, for ./train --profile.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CPU_CPUMODEL_H
#define TCC_RUNTIME_CPU_CPUMODEL_H

#include "runtime/CompiledModel.h"

#include <memory>
#include <vector>

namespace tcc::rt {

class CpuModel : public CompiledModel {
public:
  void bind(const StepBuffers &buffers) override { bound = buffers; }
  void bindWholeState(void *wholeState) override { bound.wholeState = wholeState; }
  StepTotals readTotals() override { return bound.control->totals; }
  void resetTotals() override {
    bound.control->totals = StepTotals();
    bound.control->evalBatch = 0;
  }

  bool startProfiling() override {
    std::vector<OpSite> sites = trainSites();
    if (sites.empty())
      return false;
    clock = std::make_unique<HostOpClock>(sites);
    return true;
  }
  std::vector<OpTime> profile() const override {
    return clock ? clock->totals() : std::vector<OpTime>();
  }

protected:
  const StepBuffers &buffers() const { return bound; }

  /// The generated training step's sites (StepProfile.h); none in a
  /// hand-written model.
  virtual std::vector<OpSite> trainSites() const { return {}; }
  /// The clock a profiled step marks, else null.
  OpClock *opClock() const { return clock.get(); }
  /// Called at the end of every training step.
  void endProfiledStep() {
    if (clock)
      clock->endStep();
  }

private:
  StepBuffers bound;
  std::unique_ptr<HostOpClock> clock;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_CPUMODEL_H
