//===- PadChannels.cpp - 16-bit convolutions' few input channels to 8 -----===//
//
// See Passes.td and docs/passes.md. cuDNN's tensor-core engines for 16-bit
// NHWC convolutions read 8 channels (16 bytes) of a pixel at a time; with
// 3 (an RGB image) its heuristics and `tcc tune` found only engines
// without tensor cores (the whitening convolutions of airbench94 and
// ResNet-9 on the H200: about 5 TFLOP/s). The input and the weight are
// padded with zero channels, so the convolution computes the same sums
// plus exact zero products; the gradient of a padded value is a slice.
//
//===----------------------------------------------------------------------===//

#include "passes/PassReport.h"
#include "passes/Passes.h"
#include "passes/SixteenBit.h"

#include "ir/TccOps.h"

namespace mlir::tcc {
#define GEN_PASS_DEF_PADCHANNELS
#include "passes/Passes.h.inc"
} // namespace mlir::tcc

using namespace mlir;
using namespace mlir::tcc;

namespace {

struct PadChannelsPass : mlir::tcc::impl::PadChannelsBase<PadChannelsPass> {
  using PadChannelsBase::PadChannelsBase;

  void runOnOperation() override {
    if (channels < 1) {
      getOperation().emitError("tcc-pad-channels: channels must be at least 1");
      return signalPassFailure();
    }
    int64_t padded = 0;
    getOperation().walk([&](Conv2dOp conv) {
      const int64_t inputChannels = cast<ShapedType>(conv.getInput().getType()).getDimSize(1);
      // Grouped convolutions would need every group padded; f32 ones run
      // engines that read a channel at a time.
      if (!isSixteenBit(conv.getInput()) || conv.getGroups() != 1 || inputChannels >= channels)
        return;
      OpBuilder b(conv);
      auto pad = [&](Value v) {
        return b.create<PadChannelsOp>(conv.getLoc(), v, b.getI64IntegerAttr(channels));
      };
      conv.getInputMutable().assign(pad(conv.getInput()));
      conv.getWeightMutable().assign(pad(conv.getWeight()));
      ++padded;
    });
    recordPassResult(getOperation(), "pad-channels", "padded",
                     Builder(&getContext()).getI64IntegerAttr(padded));
  }
};

} // namespace
