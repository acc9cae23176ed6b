//===- ShardedStateTest.cpp - The evaluation's whole state, gathered in place -===//
//
// CompiledModel::gatherWholeState gathers each sharded tensor's chunks in
// place, at the offsets wholeStateInfo(info, evaluated) gives, in the order
// gatheredTensors() lists them. Here the gathers of N ranks are played in
// one process as NCCL's in-place all-gathers write (every rank's chunk,
// padding included, one after the other) and the result must hold every
// tensor whole, in a buffer of wholeStateRoom() bytes.
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/ShardedState.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tcc::rt;

namespace {

struct Spec {
  const char *name;
  int64_t n;
  DType dtype;
  StateRole role;
  bool sharded;
};

/// The arena of `ranks` ranks: each sharded tensor as its chunk
/// ceil(n / ranks), laid out one after the other at 64-byte offsets.
ModelInfo arenaOf(const std::vector<Spec> &specs, int64_t ranks) {
  ModelInfo info;
  size_t end = 0;
  for (const Spec &s : specs) {
    StateTensor t;
    t.name = s.name, t.dtype = s.dtype, t.role = s.role;
    t.shape = {s.sharded ? (s.n + ranks - 1) / ranks : s.n};
    if (s.sharded)
      t.shardOf = {s.n};
    end = (end + 63) / 64 * 64;
    t.offset = end;
    end += t.numBytes();
    info.state.push_back(t);
  }
  info.stateBytes = end;
  return info;
}

/// Byte i of tensor k's whole (distinct per tensor and element).
uint8_t wholeByte(size_t k, int64_t i) { return uint8_t(1 + 37 * k + 11 * i); }

/// Rank r's arena: its chunk of each sharded tensor (zero past n), the
/// others whole; the same on every rank but for the chunks.
std::vector<uint8_t> rankArena(const ModelInfo &info, int64_t r) {
  std::vector<uint8_t> arena(info.stateBytes, 0);
  for (size_t k = 0; k < info.state.size(); ++k) {
    const StateTensor &t = info.state[k];
    const int64_t size = int64_t(dtypeSize(t.dtype));
    const int64_t n = t.shardOf.empty() ? t.numElements() : t.shardOf[0];
    const int64_t first = t.shardOf.empty() ? 0 : r * t.numElements();
    for (int64_t i = 0; i < t.numElements() && first + i < n; ++i)
      for (int64_t b = 0; b < size; ++b)
        arena[t.offset + size_t(i * size + b)] = wholeByte(k, (first + i) * size + b);
  }
  return arena;
}

/// The whole state as the cuda model gathers it: rank 0's arena copied,
/// then every tensor's chunks from each rank, in place, in the listed order.
std::vector<uint8_t> gatherInPlace(const ModelInfo &info, const ModelInfo &whole,
                                   int64_t ranks) {
  const std::vector<GatheredTensor> tensors = gatheredTensors(info, whole);
  std::vector<uint8_t> out(wholeStateRoom(whole, tensors, ranks), 0xee);
  std::vector<std::vector<uint8_t>> arenas;
  for (int64_t r = 0; r < ranks; ++r)
    arenas.push_back(rankArena(info, r));
  std::memcpy(out.data(), arenas[0].data(), info.stateBytes);
  for (const GatheredTensor &t : tensors)
    for (int64_t r = 0; r < ranks; ++r) {
      const size_t at = t.wholeOffset + size_t(r) * t.chunkBytes;
      EXPECT_LE(at + t.chunkBytes, out.size()) << "a gather writes past the room";
      if (at + t.chunkBytes <= out.size())
        std::memcpy(out.data() + at, arenas[size_t(r)].data() + t.chunkOffset, t.chunkBytes);
    }
  return out;
}

/// A conv weight and bias, an optimizer slot, a running mean, a one-element
/// parameter (zero chunks on the later ranks), a 16-bit EMA copy and a
/// 16-bit last parameter whose chunks pad it.
const std::vector<Spec> kSpecs = {
    {"conv.weight", 15, DType::F32, StateRole::Parameter, true},
    {"conv.bias", 1, DType::F32, StateRole::Parameter, true},
    {"optimizer.conv.weight.momentum_buffer", 15, DType::F32, StateRole::OptimizerState, true},
    {"bn.running_mean", 4, DType::F32, StateRole::Buffer, false},
    {"ema.conv.weight", 7, DType::F16, StateRole::Ema, true},
    {"fc.weight", 5, DType::BF16, StateRole::Parameter, true},
};

} // namespace

TEST(ShardedState, GatheredTensorsAreTheEvaluatedChunksInWholeOrder) {
  const ModelInfo info = arenaOf(kSpecs, 3);
  const ModelInfo whole = wholeStateInfo(info, /*evaluated=*/true);
  const std::vector<GatheredTensor> tensors = gatheredTensors(info, whole);
  // Not the optimizer slot, not the unsharded buffer.
  ASSERT_EQ(tensors.size(), 4u);
  const size_t gathered[] = {0, 1, 4, 5};
  for (size_t j = 0; j < tensors.size(); ++j) {
    const size_t k = gathered[j];
    EXPECT_EQ(tensors[j].chunkOffset, info.state[k].offset);
    EXPECT_EQ(tensors[j].chunkBytes, info.state[k].numBytes());
    EXPECT_EQ(tensors[j].wholeOffset, whole.state[k].offset);
    EXPECT_GE(tensors[j].wholeOffset, info.stateBytes);
    if (j > 0) {
      EXPECT_GT(tensors[j].wholeOffset, tensors[j - 1].wholeOffset);
    }
  }
  // fc.weight's 3 chunks of 2 bf16 pad its 5 elements by one.
  EXPECT_EQ(whole.stateBytes, whole.state[5].offset + 10);
  EXPECT_EQ(wholeStateRoom(whole, tensors, 3), whole.stateBytes + 2);
}

TEST(ShardedState, GatheredInPlaceHoldsEveryTensorWhole) {
  for (int64_t ranks : {2, 3, 4, 16}) {
    const ModelInfo info = arenaOf(kSpecs, ranks);
    const ModelInfo whole = wholeStateInfo(info, /*evaluated=*/true);
    const std::vector<uint8_t> out = gatherInPlace(info, whole, ranks);
    const std::vector<uint8_t> rank0 = rankArena(info, 0);
    EXPECT_EQ(0, std::memcmp(out.data(), rank0.data(), info.stateBytes))
        << "the arena's bytes, " << ranks << " ranks";
    for (size_t k = 0; k < whole.state.size(); ++k) {
      const StateTensor &t = whole.state[k];
      if (!t.shardOf.empty() || t.offset < info.stateBytes)
        continue; // read from the arena's bytes
      for (size_t b = 0; b < t.numBytes(); ++b)
        ASSERT_EQ(out[t.offset + b], wholeByte(k, int64_t(b)))
            << t.name << " byte " << b << ", " << ranks << " ranks";
    }
  }
}

TEST(ShardedState, NoRoomBeyondTheWholeStateWithoutPadding) {
  const ModelInfo info = arenaOf({{"w", 12, DType::F32, StateRole::Parameter, true},
                                  {"ema.w", 12, DType::BF16, StateRole::Ema, true}},
                                 4);
  const ModelInfo whole = wholeStateInfo(info, /*evaluated=*/true);
  EXPECT_EQ(wholeStateRoom(whole, gatheredTensors(info, whole), 4), whole.stateBytes);
}
