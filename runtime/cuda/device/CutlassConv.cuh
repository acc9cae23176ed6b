//===- CutlassConv.cuh - A convolution as CUTLASS's Hopper kernel ---------===//
//
// A second source of convolution kernels beside cuDNN's engines (issue 36,
// docs/tuning.md "CUTLASS"): CUTLASS 3's implicit-GEMM convolutions for
// sm_90a (TMA im2col loads, warp-specialized GMMA), one kernel per
// direction, element type, tile and cluster shape. Activations are NHWC and
// the weight KRSC (CUTLASS takes no other layout), accumulated in f32 and
// rounded once to the element type, as cuDNN's 16-bit engines do. tcc's
// weight is KCRS (the checkpoint's): bind() moves it to KRSC and back in its
// workspace (WeightLayout.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CUDA_DEVICE_CUTLASSCONV_CUH
#define TCC_RUNTIME_CUDA_DEVICE_CUTLASSCONV_CUH

#include "runtime/cuda/ConvProblem.h"
#include "runtime/cuda/device/WeightLayout.cuh"

// In the order of CUTLASS's own tests: the headers are not independent.
#include <cutlass/cutlass.h>
#include <cute/tensor.hpp>
#include <cutlass/numeric_types.h>
#include <cutlass/conv/device/conv_universal_adapter.hpp>
#include <cutlass/conv/kernel/conv_universal.hpp>
#include <cutlass/conv/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/util/packed_stride.hpp>

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <type_traits>

namespace tcc::cuda::cutlass_conv {

/// The element type of a 16-bit problem, as CUTLASS names it.
template <ConvDataType T>
using Element = std::conditional_t<T == ConvDataType::Float16, cutlass::half_t,
                                   cutlass::bfloat16_t>;

template <ConvDirection D>
constexpr cutlass::conv::Operator kOperator =
    D == ConvDirection::Forward        ? cutlass::conv::Operator::kFprop
    : D == ConvDirection::BackwardData ? cutlass::conv::Operator::kDgrad
                                       : cutlass::conv::Operator::kWgrad;

/// Enqueues the weight's move between KCRS and KRSC (WeightLayout.cuh).
inline void transposeWeight(const ConvProblem &p, const void *from, void *to,
                            bool toChannelsLast, cudaStream_t stream) {
  const auto *source = static_cast<const uint16_t *>(from);
  auto *target = static_cast<uint16_t *>(to);
  if (toChannelsLast)
    rt::cuda::weight_to_krsc(stream, p.k, p.c / p.groups, p.r * p.s, source, target);
  else
    rt::cuda::weight_from_krsc(stream, p.k, p.c / p.groups, p.r * p.s, source, target);
}

/// One kernel: direction D on elements of type T, a TileM x TileN x TileK
/// tile per CTA (M: output pixels, or output channels for the filter
/// gradient; K: the reduction), ClusterM CTAs per cluster along M.
template <ConvDirection D, ConvDataType T, int TileM, int TileN, int TileK, int ClusterM>
struct Kernel {
  using E = Element<T>;
  static constexpr cutlass::conv::Operator Op = kOperator<D>;
  // The filter gradient's N mode is (C, S, R): nested, as CUTLASS's wgrad
  // tests write it.
  using TileShape = std::conditional_t<
      D == ConvDirection::BackwardFilter,
      cute::Shape<cute::Int<TileM>, cute::Shape<cute::Int<TileN>>, cute::Shape<cute::Int<TileK>>>,
      cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Shape<cute::Int<TileK>>>>;
  using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::_1, cute::_1>;
  // What the kernel writes: an activation (NHWC), or the weight (KRSC,
  // which CUTLASS's layout tag for a filter output calls TensorKCSR).
  using OutputLayout = std::conditional_t<D == ConvDirection::BackwardFilter,
                                          cutlass::layout::TensorKCSR,
                                          cutlass::layout::TensorNHWC>;
  using EpilogueSchedule = std::conditional_t<D == ConvDirection::BackwardFilter,
                                              cutlass::epilogue::NoSmemWarpSpecialized,
                                              cutlass::epilogue::TmaWarpSpecialized>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, OutputLayout, 8, E,
      OutputLayout, 8, EpilogueSchedule>::CollectiveOp;
  using Mainloop = typename cutlass::conv::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Op, E, cutlass::layout::TensorNHWC,
      8, E, cutlass::layout::TensorNHWC, 8, float, TileShape, ClusterShape,
      cutlass::conv::collective::StageCountAutoCarveout<
          static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      cutlass::conv::collective::KernelScheduleAuto>::CollectiveOp;
  using ProblemShape = cutlass::conv::ConvProblemShape<Op, 2>;
  using Conv = cutlass::conv::device::ConvUniversalAdapter<
      cutlass::conv::kernel::ConvUniversal<ProblemShape, Mainloop, Epilogue>>;

  /// CUTLASS's arguments: x, the weight (KRSC) and y, whatever the
  /// direction; the direction says which is written.
  static typename Conv::Arguments arguments(const ConvProblem &p, const void *x,
                                            const void *weight, const void *y) {
    ProblemShape shape(cutlass::conv::Mode::kCrossCorrelation,
                       {int(p.n), int(p.h), int(p.w), int(p.c)},
                       {int(p.k), int(p.r), int(p.s), int(p.c / p.groups)},
                       {int(p.padH), int(p.padW)}, {int(p.padH), int(p.padW)},
                       {int(p.strideH), int(p.strideW)}, {int(p.dilationH), int(p.dilationW)},
                       int(p.groups));
    // The output's strides: an activation's ((W, H, N), 1, 0) as CUTLASS's
    // sm90 tests set them, the filter gradient's (KRSC) through its helper.
    using ConvKernel = typename Conv::ConvKernel;
    typename ConvKernel::StrideC strideC;
    typename ConvKernel::StrideD strideD;
    if constexpr (D == ConvDirection::BackwardFilter) {
      strideC = cutlass::make_cute_packed_stride(strideC, shape.shape_C, shape.stride_C, Op);
      strideD = cutlass::make_cute_packed_stride(strideD, shape.shape_C, shape.stride_C, Op);
    } else {
      cute::for_each(cute::make_seq<cute::rank<0>(typename ConvKernel::StrideC{})>{},
                     [&](auto i) {
                       cute::get<0, i>(strideC) = shape.stride_C[ProblemShape::RankT - 2 - i];
                       cute::get<0, i>(strideD) = shape.stride_C[ProblemShape::RankT - 2 - i];
                     });
    }
    const E *a, *b;
    E *d;
    if constexpr (D == ConvDirection::Forward) {
      a = static_cast<const E *>(x), b = static_cast<const E *>(weight);
      d = static_cast<E *>(const_cast<void *>(y));
    } else if constexpr (D == ConvDirection::BackwardData) {
      a = static_cast<const E *>(y), b = static_cast<const E *>(weight);
      d = static_cast<E *>(const_cast<void *>(x));
    } else {
      a = static_cast<const E *>(y), b = static_cast<const E *>(x);
      d = static_cast<E *>(const_cast<void *>(weight));
    }
    return typename Conv::Arguments{shape, {a, b}, {{1.0f, 0.0f}, nullptr, strideC, d, strideD}};
  }

  /// Why this kernel cannot compute `p` ("" when it can): CUTLASS's own
  /// can_implement (alignment, TMA's limits), no GPU needed.
  static std::string unsupported(const ConvProblem &p) {
    if (p.dtype != T || p.direction != D || p.layout != ConvLayout::NHWC ||
        p.epilogue != ConvEpilogue::None)
      return "not a plain NHWC " + std::string(directionName(D)) + " convolution of its type";
    if (Conv::can_implement(arguments(p, nullptr, nullptr, nullptr)) !=
        cutlass::Status::kSuccess)
      return "CUTLASS cannot implement it (can_implement: alignment, TMA limits)";
    return "";
  }

  /// The workspace bind() needs: the weight in KRSC (256-byte aligned),
  /// then CUTLASS's own.
  static int64_t workspaceBytes(const ConvProblem &p) {
    return weightBytes(p) +
           int64_t(Conv::get_workspace_size(arguments(p, nullptr, nullptr, nullptr)));
  }

  /// Binds the convolution to ConvRunner's operands: x, the weight (KCRS,
  /// as tcc keeps it) and y whatever the direction (CUTLASS's initialize:
  /// its TMA descriptors, once). What it returns enqueues it on a stream:
  /// the weight moved to KRSC in `workspace` before the forward and the
  /// data gradient, back from there after the filter gradient. Empty when
  /// CUTLASS refuses the problem.
  static std::function<bool(cudaStream_t)> bind(const ConvProblem &p, const void *x,
                                                const void *weight, const void *y,
                                                void *workspace, cudaStream_t stream) {
    void *krsc = workspace;
    void *own = static_cast<char *>(workspace) + weightBytes(p);
    auto conv = std::make_shared<Conv>();
    if (conv->initialize(arguments(p, x, krsc, y), own, stream) != cutlass::Status::kSuccess)
      return {};
    return [=](cudaStream_t s) {
      const bool filterGradient = D == ConvDirection::BackwardFilter;
      if (!filterGradient)
        transposeWeight(p, weight, krsc, /*toChannelsLast=*/true, s);
      if (conv->run(s) != cutlass::Status::kSuccess)
        return false;
      if (filterGradient)
        transposeWeight(p, krsc, const_cast<void *>(weight), /*toChannelsLast=*/false, s);
      return cudaPeekAtLastError() == cudaSuccess;
    };
  }

private:
  static int64_t weightBytes(const ConvProblem &p) {
    return (p.k * (p.c / p.groups) * p.r * p.s * 2 + 255) / 256 * 256;
  }
};

/// Kernel K as a trainer's ConvRunner binds it (BakedTarget.h, CutlassBind):
/// the problem by its key, the stream as a void pointer.
template <class K>
std::function<bool(void *)> bindForRunner(const char *problem, const void *x,
                                          const void *weight, const void *y, void *workspace,
                                          void *stream) {
  ConvProblem p;
  if (!ConvProblem::fromKey(problem, p) || !K::unsupported(p).empty())
    return {};
  auto run = K::bind(p, x, weight, y, workspace, static_cast<cudaStream_t>(stream));
  if (!run)
    return {};
  return [run](void *s) { return run(static_cast<cudaStream_t>(s)); };
}

} // namespace tcc::cuda::cutlass_conv

#endif // TCC_RUNTIME_CUDA_DEVICE_CUTLASSCONV_CUH
