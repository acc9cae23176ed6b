//===- Init.h - Initial values of the state tensors -----------*- C++ -*-===//
//
// Every state tensor starts from its InitDesc:
//
//   constant         every element = a
//   uniform          U[a, b)
//   normal           N(mean a, std b)
//   dirac            U[a, b), then torch.nn.init.dirac_ on the first
//                    min(O, I) filters of [O, I, k...]: filter i is zero
//                    except w[i, i, k/2...] = 1 (airbench's identity init;
//                    filters i >= I keep their uniform values)
//   patch_whitening  airbench's init_whitening_conv (InitWhitening.h)
//   copy             the tensor named `source`, after all the others
//
// Random numbers: a counter-based generator, Philox4x32-10 (Salmon et al.,
// SC'11; the generator of cuRAND and of PyTorch's CUDA RNG; written once in
// runtime/common/Philox.h), so element i of a tensor is a pure function of
// (seed, tensor name, i):
//
//   key     = (seed & 0xffffffff, seed >> 32)
//   counter = (i & 0xffffffff, i >> 32, h & 0xffffffff, h >> 32),
//             h = FNV-1a 64-bit hash of the tensor's name
//   block   = Philox4x32_10(counter, key) = (w0, w1, w2, w3)
//   uniform = ((w0 << 32 | w1) >> 11) * 2^-53                  in [0, 1)
//   normal  = sqrt(-2 ln u1) * cos(2 pi u2) (Box-Muller), with
//             u1 = (((w0 << 32 | w1) >> 11) + 1) * 2^-53       in (0, 1]
//             u2 = ((w2 << 32 | w3) >> 11) * 2^-53
//
// so adding, removing or reordering tensors never changes another tensor's
// values, and the GPU can draw the same numbers in parallel. Values are
// computed in double and rounded once to the tensor's dtype (round to
// nearest even for F16/BF16).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_TRAINER_INIT_H
#define TCC_RUNTIME_TRAINER_INIT_H

#include "runtime/CompiledModel.h"
#include "runtime/trainer/InitWhitening.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tcc::rt {

/// Philox4x32 with 10 rounds (Random123's philox4x32_10).
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter,
                                      std::array<uint32_t, 2> key);

/// FNV-1a, 64 bits.
uint64_t fnv1a64(std::string_view text);

/// The random stream of one tensor (see the file comment).
class TensorRandom {
public:
  TensorRandom(uint64_t seed, std::string_view tensorName);
  /// Element i's uniform number in [0, 1).
  double uniform(uint64_t i) const;
  /// Element i's standard normal number.
  double normal(uint64_t i) const;

private:
  std::array<uint32_t, 2> key;
  uint64_t nameHash;
};

/// Element conversions (F16/BF16: round to nearest even; I64: round to
/// nearest; U8: round and clamp to [0, 255]).
void storeValue(DType dtype, void *dst, double value);
double loadValue(DType dtype, const void *src);
/// `count` elements of `from` stored as `to`, element by element.
void convertValues(DType to, void *dst, DType from, const void *src, int64_t count);
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);

/// The most training images a patch_whitening init reads (0: none has one).
int64_t whiteningImagesNeeded(const ModelInfo &info);

/// Fills every state tensor of the host arena `state` from its InitDesc
/// (copies last). `whitening` may be null when no tensor needs it.
bool initializeState(const ModelInfo &info, void *state, uint64_t seed,
                     const WhiteningData *whitening, std::string &error);

/// Re-applies only the "copy" inits (after --init replaced the sources, so
/// that EMA weights start as the loaded parameters).
bool applyCopyInits(const ModelInfo &info, void *state, std::string &error);

/// Folds every loaded nonzero bias that the step does not use
/// (StateTensor::foldedInto, tcc-bn-bias-elimination) into the running mean
/// of the batch norm that cancels it: running_mean -= bias, then bias = 0,
/// which keeps what the model computes in training and in evaluation.
/// Returns one line per folded bias, for a note.
std::vector<std::string> foldRemovedBiases(const ModelInfo &info, void *state);

} // namespace tcc::rt

#endif // TCC_RUNTIME_TRAINER_INIT_H
