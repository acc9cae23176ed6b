//===- KernelInstances.cpp - Kernels every cpu trainer shares -------------===//
//
// Their one instantiation (KernelInstances.h). Compiled with the trainer's
// flags (-O3, its -march) by `tcc compile`, and kept in its object cache.
//
//===----------------------------------------------------------------------===//

#define TCC_KERNEL_INSTANCE
#include "runtime/cpu/KernelInstances.h"
