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

/// The sharded tensors are f32 (the targets refuse to shard others).
void checkFloat(const StateTensor &t) {
  if (t.dtype != DType::F32)
    throw std::runtime_error("internal error: sharded state tensor '" + t.name +
                             "' is not f32");
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
  // One message: every sharded tensor's chunks at their ranks' places,
  // zero elsewhere, summed over the ranks.
  const int64_t ranks = comm.size(), rank = comm.rank();
  // The tensors `whole` lays out whole (the others stay chunks).
  auto gathered = [&](size_t i) {
    return !info.state[i].shardOf.empty() && whole.state[i].shardOf.empty();
  };
  int64_t total = 0;
  for (size_t i = 0; i < info.state.size(); ++i)
    if (gathered(i))
      total += info.state[i].numElements() * ranks;
  std::vector<float> message(size_t(total), 0.0f);
  int64_t at = 0;
  for (size_t i = 0; i < info.state.size(); ++i) {
    const StateTensor &t = info.state[i];
    if (!gathered(i))
      continue;
    checkFloat(t);
    const int64_t chunk = t.numElements();
    std::memcpy(message.data() + at + rank * chunk,
                static_cast<const uint8_t *>(state) + t.offset, size_t(chunk) * sizeof(float));
    at += chunk * ranks;
  }
  comm.allReduceSum(message.data(), total);
  at = 0;
  for (size_t i = 0; i < info.state.size(); ++i) {
    const StateTensor &t = info.state[i];
    if (!gathered(i))
      continue;
    const int64_t n = elementsOf(t.shardOf);
    std::memcpy(out.data() + whole.state[i].offset, message.data() + at,
                size_t(n) * sizeof(float));
    at += t.numElements() * ranks;
  }
}

void scatterWholeState(const ModelInfo &info, const ModelInfo &whole, const void *wholeState,
                       void *state, int rank) {
  std::memcpy(state, wholeState, info.stateBytes);
  for (size_t i = 0; i < info.state.size(); ++i) {
    const StateTensor &t = info.state[i];
    if (t.shardOf.empty() || !whole.state[i].shardOf.empty())
      continue;
    checkFloat(t);
    const int64_t chunk = t.numElements(), n = elementsOf(t.shardOf);
    const int64_t first = std::min<int64_t>(n, int64_t(rank) * chunk);
    const int64_t count = std::min<int64_t>(chunk, n - first);
    const auto *from = reinterpret_cast<const float *>(
        static_cast<const uint8_t *>(wholeState) + whole.state[i].offset);
    auto *to = reinterpret_cast<float *>(static_cast<uint8_t *>(state) + t.offset);
    std::fill(to, to + chunk, 0.0f);
    std::copy(from + first, from + first + count, to);
  }
}

} // namespace tcc::rt
