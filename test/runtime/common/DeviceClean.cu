//===- DeviceClean.cu - runtime/common compiles as device code ------------===//
//
// Every header of runtime/common/ is used from a __global__ kernel, so nvcc
// must accept each function as __host__ __device__ code (no standard library
// containers, no host-only calls). Compiled, never run (the test machines
// have no GPU): test/runtime/common/CMakeLists.txt.
//
//===----------------------------------------------------------------------===//

#include "runtime/common/Batch.h"
#include "runtime/common/CounterRng.h"
#include "runtime/common/DropoutMask.h"
#include "runtime/common/Float16.h"
#include "runtime/common/HostDevice.h"
#include "runtime/common/Philox.h"
#include "runtime/common/Schedule.h"

using namespace tcc::rt;

__global__ void useEveryCommonFunction(const uint8_t *pixels, const ScheduleDesc *schedule,
                                       float *out, uint64_t *bits) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  // The data path: shuffle, augmentation draws, one augmented pixel.
  const int64_t row = rng::shuffledRow(7, 1, i, 60000);
  AugmentConfig config;
  config.cropPadding = 2;
  config.flip = true;
  config.cutout = 4;
  const rng::AugmentDraw draw = rng::drawAugment(7, 1, uint64_t(i), 28, 28, 2, true, 1, 4);
  out[i] = batch::samplePixel(pixels, false, row, 1, 28, 28, &draw, config, 0, 3, 5,
                              0.5f, 0.25f) +
           float(batch::trainPosition(3, i, 256, 60000));
  // Random numbers and dropout.
  const philox::Words w = philox::randomBlock(1, 2, uint64_t(i));
  bits[i] = w.w[0] ^ uint64_t(dropout::keep(0.5, 1, 2, uint64_t(i))) ^
            uint64_t(dropout::mixSeed(3, i));
  // 16-bit conversions.
  out[i] += half::bf16ToFloat(half::floatToBf16(out[i])) +
            half::f16ToFloat(half::floatToF16(out[i]));
  // The schedule.
  out[i] += float(lrFactor(*schedule, i, 100, 1000));
}
