//===- StepTable.h - A generated step as a table of calls -------*- C++ -*-===//
//
// tcc prints a step as rows (the function of a distinct op, the buffers it
// runs on) and a loop over them, not as one statement per op: a model of
// 1,000 identical layers is 1,000 short rows and one function per kind of
// layer, so the generated source and the C++ compiler's time grow slowly
// with depth (codegen/common/StepWalker.cpp). Host code of both targets.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_STEPTABLE_H
#define TCC_RUNTIME_STEPTABLE_H

#include <cstdint>

namespace tcc::rt {

/// A buffer of the step: an offset into the state or the scratch arena,
/// moved by `microBytes` per micro-batch inside a tcc.micro_batches loop
/// (the slice of a batched value; 0 elsewhere).
struct StepRef {
  int64_t offset;
  int64_t microBytes;
  bool scratch; ///< the scratch arena; false: the state arena
};

/// `Args` is the generated StepArgs: the arenas, the micro-batch index and
/// the profiling clock (runtime/StepProfile.h).
template <class T, class Args> T *step_ref(const Args &args, const StepRef &ref) {
  char *arena = ref.scratch ? args.scratch : args.state;
  return reinterpret_cast<T *>(arena + ref.offset + args.micro * ref.microBytes);
}

/// One call of the step: `fn` with the buffers `refs[first...]`, marked as
/// profiling site `site` first (-1: no mark).
template <class Args> struct StepRow {
  void (*fn)(const Args &, const StepRef *);
  int site;
  int first;
};

/// Runs `rows[begin, end)` in order.
template <class Args>
void run_step_rows(const Args &args, const StepRow<Args> *rows, int begin, int end,
                   const StepRef *refs) {
  for (int i = begin; i < end; ++i) {
    const StepRow<Args> &row = rows[i];
    if (row.site >= 0 && args.clock)
      args.clock->at(row.site);
    row.fn(args, refs + row.first);
  }
}

} // namespace tcc::rt

#endif // TCC_RUNTIME_STEPTABLE_H
