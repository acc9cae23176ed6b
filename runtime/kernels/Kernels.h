//===- Kernels.h - All CPU reference kernels --------------------*- C++ -*-===//
//
// Convenience umbrella: includes every header of runtime/kernels/.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_KERNELS_KERNELS_H
#define TCC_RUNTIME_KERNELS_KERNELS_H

#include "runtime/kernels/Activation.h"
#include "runtime/kernels/Attention.h"
#include "runtime/kernels/ChannelMul.h"
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Dropout.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Embedding.h"
#include "runtime/kernels/Linear.h"
#include "runtime/kernels/Loss.h"
#include "runtime/kernels/Matmul.h"
#include "runtime/kernels/Metrics.h"
#include "runtime/kernels/Norm.h"
#include "runtime/kernels/Optimizer.h"
#include "runtime/kernels/Pool.h"
#include "runtime/kernels/Random.h"
#include "runtime/kernels/Softmax.h"
#include "runtime/kernels/SyncNorm.h"
#include "runtime/kernels/TokenLoss.h"

#endif // TCC_RUNTIME_KERNELS_KERNELS_H
