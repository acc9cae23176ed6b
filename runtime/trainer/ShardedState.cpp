//===- ShardedState.cpp - A sharded state as one process holds it --------===//

#include "runtime/trainer/ShardedState.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace tcc::rt {

namespace {

int64_t elementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// The sharded tensors are floating point: f32, or 16-bit where the
/// precision is pure fp16 or bf16 (a chunk's zeros are all-zero bits).
size_t elementBytes(const StateTensor &t) {
  if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16)
    throw std::runtime_error("internal error: sharded state tensor '" + t.name +
                             "' is not f32, f16 or bf16");
  return dtypeSize(t.dtype);
}

} // namespace

bool hasShardedState(const ModelInfo &info) {
  return std::any_of(info.state.begin(), info.state.end(),
                     [](const StateTensor &t) { return !t.shardOf.empty(); });
}

ModelInfo wholeStateInfo(const ModelInfo &info, bool evaluated) {
  ModelInfo whole = info;
  size_t end = info.stateBytes;
  for (StateTensor &t : whole.state) {
    if (t.shardOf.empty() ||
        (evaluated && t.role != StateRole::Parameter && t.role != StateRole::Ema))
      continue;
    t.shape = t.shardOf;
    t.shardOf.clear();
    end = (end + 63) / 64 * 64;
    t.offset = end;
    end += t.numBytes();
  }
  whole.stateBytes = end;
  return whole;
}

void gatherWholeState(const ModelInfo &info, const ModelInfo &whole, const void *state,
                      std::vector<uint8_t> &out, Communicator &comm) {
  out.assign(whole.stateBytes, 0);
  std::memcpy(out.data(), state, info.stateBytes);
  // One all-gather of this rank's chunks, one after the other: half the
  // traffic of an all-reduce of the chunks at their places (zero
  // elsewhere), and on NCCL (1 + N) / 2N of its device staging.
  const int64_t ranks = comm.size();
  // The tensors `whole` lays out whole (the others stay chunks).
  auto gathered = [&](size_t i) {
    return !info.state[i].shardOf.empty() && whole.state[i].shardOf.empty();
  };
  int64_t per = 0; // this rank's bytes in the message
  for (size_t i = 0; i < info.state.size(); ++i)
    if (gathered(i))
      per += int64_t(info.state[i].numBytes());
  std::vector<uint8_t> mine(static_cast<size_t>(per)), all(static_cast<size_t>(per * ranks));
  int64_t at = 0;
  for (size_t i = 0; i < info.state.size(); ++i) {
    const StateTensor &t = info.state[i];
    if (!gathered(i))
      continue;
    elementBytes(t);
    std::memcpy(mine.data() + at, static_cast<const uint8_t *>(state) + t.offset, t.numBytes());
    at += int64_t(t.numBytes());
  }
  allGatherBytes(comm, mine.data(), all.data(), per);
  at = 0;
  for (size_t i = 0; i < info.state.size(); ++i) {
    const StateTensor &t = info.state[i];
    if (!gathered(i))
      continue;
    // Rank r's chunk holds elements [r·c, r·c + c) of the whole, zero past n.
    const int64_t chunk = t.numElements(), n = elementsOf(t.shardOf);
    const int64_t size = int64_t(elementBytes(t));
    uint8_t *to = out.data() + whole.state[i].offset;
    for (int64_t r = 0; r < ranks && r * chunk < n; ++r)
      std::memcpy(to + r * chunk * size, all.data() + r * per + at,
                  size_t(std::min(chunk, n - r * chunk) * size));
    at += chunk * size;
  }
}

std::vector<GatheredTensor> gatheredTensors(const ModelInfo &info, const ModelInfo &whole) {
  std::vector<GatheredTensor> tensors;
  for (size_t i = 0; i < info.state.size(); ++i) {
    const StateTensor &t = info.state[i];
    if (t.shardOf.empty() || !whole.state[i].shardOf.empty())
      continue;
    elementBytes(t);
    tensors.push_back({t.offset, t.numBytes(), whole.state[i].offset});
  }
  return tensors;
}

size_t wholeStateRoom(const ModelInfo &whole, const std::vector<GatheredTensor> &tensors,
                      int64_t ranks) {
  size_t room = whole.stateBytes;
  for (const GatheredTensor &t : tensors)
    room = std::max(room, t.wholeOffset + size_t(ranks) * t.chunkBytes);
  return room;
}

void scatterWholeState(const ModelInfo &info, const ModelInfo &whole, const void *wholeState,
                       void *state, int rank) {
  std::memcpy(state, wholeState, info.stateBytes);
  for (size_t i = 0; i < info.state.size(); ++i) {
    const StateTensor &t = info.state[i];
    if (t.shardOf.empty() || !whole.state[i].shardOf.empty())
      continue;
    const int64_t size = int64_t(elementBytes(t));
    const int64_t chunk = t.numElements(), n = elementsOf(t.shardOf);
    const int64_t first = std::min<int64_t>(n, int64_t(rank) * chunk);
    const int64_t count = std::min<int64_t>(chunk, n - first);
    const auto *from = static_cast<const uint8_t *>(wholeState) + whole.state[i].offset;
    auto *to = static_cast<uint8_t *>(state) + t.offset;
    std::memset(to, 0, size_t(chunk * size));
    std::memcpy(to, from + first * size, size_t(count * size));
  }
}

} // namespace tcc::rt
