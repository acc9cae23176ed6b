//===- DeviceClean.cu - runtime/common compiles as device code ------------===//
//
// Every header of runtime/common/ is included and every TCC_HOST_DEVICE
// function of them called from a __global__ kernel, so nvcc must accept each
// one as device code (nvcc only diagnoses a host-only call inside a
// __host__ __device__ function when device code uses it). Compiled, never
// run: CheckDeviceClean.cmake also fails when a header or a function is
// missing here.
//
//===----------------------------------------------------------------------===//

#include "runtime/common/Batch.h"
#include "runtime/common/CounterRng.h"
#include "runtime/common/DropoutMask.h"
#include "runtime/common/FastDivide.h"
#include "runtime/common/Float16.h"
#include "runtime/common/HostDevice.h"
#include "runtime/common/LossScale.h"
#include "runtime/common/Philox.h"
#include "runtime/common/Schedule.h"

using namespace tcc::rt;

__global__ void useEveryCommonFunction(const uint8_t *pixels,
                                       const ScheduleDesc *schedule,
                                       FastDivide by961, float *out, uint64_t *bits) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const uint64_t u = uint64_t(i);

  // CounterRng.h: the data path's counter-based stream.
  const uint64_t key = rng::streamKey(7, rng::kAugmentStream, 1);
  uint64_t r = rng::splitmix64(u) ^ rng::counterRandom(key, u, 3) ^
               rng::mulHigh64(key, u) ^ rng::uniformBelow(key ^ u, 10);
  const int64_t row = (rng::shuffledRow(7, 1, i, 60000) ^ rng::permute(key, i, 60000) ^
                       rng::balancedOption(7, 1, 0, i, 60000, 25)) % 60000;
  const rng::AugmentDraw draw =
      rng::drawAugment(7, 1, u, 28, 28, 2, true, 1, 4, /*alternateFlip=*/i % 3 == 0,
                       uint64_t(row), /*balanced=*/i % 2 == 0, 60000);

  // Batch.h: one augmented, normalised element of a training slot.
  AugmentConfig config;
  config.cropPadding = 2;
  config.flip = true;
  config.translate = 1;
  config.cutout = 4;
  config.reflect = i % 2 == 0;
  int64_t sy = 0, sx = 0;
  const bool inside =
      batch::augmentedSource(draw, config, 28, 28, i % 28, 5, sy, sx);
  float v = batch::samplePixel(pixels, false, row, 1, 28, 28, &draw, config,
                               0, 3, 5, 0.5f, 0.25f) +
            batch::normalizedPixel(pixels, false, sy * 28 + sx, 0.5f, 0.25f) *
                float(inside) +
            float(batch::trainPosition(3, batch::globalSlot(i, 256, 1, 2, 2), 512, 60000)) +
            float(batch::reflectIndex(i % 40 - 5, 28));

  // Philox.h and DropoutMask.h.
  const philox::Words block = philox::randomBlock(1, 2, u);
  const philox::Words raw = philox::philox4x32_10(block, 3, 4);
  const uint32_t r32 = philox::randomU32(1, 2, u) ^ raw.w[1];
  v += philox::u32ToUniform(r32) * float(dropout::keptScale(0.25));
  r ^= uint64_t(dropout::keep(0.5, 1, 2, u)) ^
       uint64_t(dropout::keeps(r32, 0.25f)) ^
       uint64_t(dropout::mixSeed(3, i)) ^ block.w[0];

  // Float16.h.
  v += half::bitsFloat(half::floatBits(v) & ~1u);
  v += half::bf16ToFloat(half::floatToBf16(v)) +
       half::f16ToFloat(half::floatToF16(v));

  // Schedule.h.
  v += float(lrFactor(*schedule, i, 100, 1000));

  // FastDivide.h: built on the host (128-bit arithmetic), used here.
  r ^= by961.div(u) + by961.rem(u, 7u);

  // LossScale.h.
  float scale = loss_scale::inverse(v);
  int64_t tracker = i;
  loss_scale::update(2.0, 0.5, 2000, !loss_scale::isFinite(v), scale, tracker);
  v += scale + float(tracker);

  out[i] = v;
  bits[i] = r;
}
