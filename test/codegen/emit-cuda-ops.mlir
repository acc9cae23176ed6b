// RUN: tcc-translate --emit-cuda %s | FileCheck %s

// The cuda target's printers (codegen/cuda/ops/): every op is launched on
// the model's stream (args.stream) with the cpu target's element math; a
// matmul goes to cuBLASLt (args.matmul), posed on row-major tensors; scalar
// constants live in __device__ arrays whose address the step takes.

// CHECK: __device__ float tccConstant0[1] = {float(1)};

// CHECK-LABEL: // @mlp
// CHECK: float *c0 = cuda::symbol_address(tccConstant0);
// CHECK: // tcc.linear
// CHECK-NEXT: args.matmul->linear_forward(args.stream, cuda::Matmul::Type::f32, 4, 3, 2, a0, a1, a2, r0, nullptr, 0);
// CHECK: // tcc.relu
// CHECK-NEXT: cuda::map_forward(args.stream, 8, Relu<float>{}, r0, r1);
// Backward ops read (grad, value); their functors take (value, grad).
// CHECK: // tcc.relu_backward
// CHECK-NEXT: cuda::map_backward(args.stream, 8, ReluBackward<float>{}, r1, a3, r2);
// CHECK: // tcc.linear_backward_data
// CHECK-NEXT: args.matmul->linear_backward_data(args.stream, cuda::Matmul::Type::f32, 4, 3, 2, r2, a1, r3, nullptr, 0);
// CHECK: // tcc.linear_backward_weight
// CHECK-NEXT: args.matmul->linear_backward_weight(args.stream, cuda::Matmul::Type::f32, 4, 3, 2, r2, a0, r4, nullptr, 0);
// CHECK: // tcc.reduce_sum
// CHECK-NEXT: cuda::reduce_sum_keep<float>(args.stream, nullptr, 0, 4, 2, 1, r2, r5);
// CHECK: // tcc.cross_entropy_backward
// CHECK-NEXT: cuda::cross_entropy_backward(args.stream, 4, 2, r0, a4, 0, Reduction::Mean, c0, r6);
func.func @mlp(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>, %b: tensor<2xf32>, %dy: tensor<4x2xf32>,
               %labels: tensor<4xi64>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %y = tcc.linear %x, %w, %b : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %a = tcc.relu %y : tensor<4x2xf32>
  %da = tcc.relu_backward %dy, %a : tensor<4x2xf32>
  %dx = tcc.linear_backward_data %da, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %dw = tcc.linear_backward_weight %da, %x : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %db = tcc.reduce_sum %da {axes = array<i64: 0>} : (tensor<4x2xf32>) -> tensor<2xf32>
  %dl = tcc.cross_entropy_backward %one, %y, %labels {label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<f32>, tensor<4x2xf32>, tensor<4xi64>) -> tensor<4x2xf32>
  return
}

// 16-bit linear layers run in their type on cuBLASLt (f32 accumulation);
// a 16-bit bias gradient sums the stored 16-bit elements (half::F16 widens
// them as it loads them; the sum is rounded through f32 to 16 bits).
// CHECK-LABEL: // @mlp16
// CHECK: // tcc.linear
// CHECK-NEXT: args.matmul->linear_forward(args.stream, cuda::Matmul::Type::bf16, 4, 3, 2, a0, a1, a2, r0, nullptr, 0);
// CHECK: // tcc.linear_backward_weight
// CHECK-NEXT: args.matmul->linear_backward_weight(args.stream, cuda::Matmul::Type::f16, 4, 3, 2, a3, a4, r1, nullptr, 0);
// CHECK: // tcc.reduce_sum
// CHECK-NEXT: cuda::reduce_sum_keep<tcc::rt::half::F16>(args.stream, nullptr, 0, 4, 2, 1, reinterpret_cast<tcc::rt::half::F16 *>(a3), reinterpret_cast<tcc::rt::half::F16 *>(r2));
func.func @mlp16(%x: tensor<4x3xbf16>, %w: tensor<2x3xbf16>, %b: tensor<2xbf16>, %dy: tensor<4x2xf16>,
                 %xh: tensor<4x3xf16>) {
  %y = tcc.linear %x, %w, %b : (tensor<4x3xbf16>, tensor<2x3xbf16>, tensor<2xbf16>) -> tensor<4x2xbf16>
  %dw = tcc.linear_backward_weight %dy, %xh : (tensor<4x2xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  %db = tcc.reduce_sum %dy {axes = array<i64: 0>} : (tensor<4x2xf16>) -> tensor<2xf16>
  return
}

// A multi_tensor_cast group: one launch converts every tensor into the
// group's result that yields it.
// CHECK-LABEL: // @casts
// CHECK: // tcc.fusion_group
// CHECK-NEXT: { cuda::CastTable<2> table{{[{][{]}}
// CHECK-NEXT: {cuda::TensorCast::FloatToBf16, a0, r0, 12},
// CHECK-NEXT: {cuda::TensorCast::F16ToFloat, a1, r1, 6},
// CHECK-NEXT: }, {}};
// CHECK-NEXT: cuda::multi_tensor_cast(args.stream, table); }
func.func @casts(%w: tensor<4x3xf32>, %g: tensor<6xf16>) {
  %0:2 = tcc.fusion_group "multi_tensor_cast" -> (tensor<4x3xbf16>, tensor<6xf32>) {
    %a = tcc.cast %w to bf16 : (tensor<4x3xf32>) -> tensor<4x3xbf16>
    %b = tcc.cast %g to f32 : (tensor<6xf16>) -> tensor<6xf32>
    tcc.yield %a, %b : tensor<4x3xbf16>, tensor<6xf32>
  }
  return
}

// An elementwise group: the cpu target's loop body in one device lambda, a
// chunk of elements per thread (runtime/cuda/device/Chunk.cuh): every
// operand loaded whole first, every result stored whole last.
// CHECK-LABEL: // @elementwise
// CHECK: // tcc.fusion_group
// CHECK-NEXT: {
// CHECK-NEXT: const auto f0 = Celu<float>(0.29999999999999999);
// CHECK-NEXT: cuda::for_each_chunk(args.stream, 8, [=] __device__(int64_t i0, int count) {
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(a0)> c0;
// CHECK-NEXT: cuda::load_chunk(a0, i0, count, c0);
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(a1)> c1;
// CHECK-NEXT: cuda::load_chunk(a1, i0, count, c1);
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(r0)> s0;
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (int k = 0; k < cuda::kChunk; ++k) {
// CHECK-NEXT: if (k == count) break;
// CHECK-NEXT: const float t0 = as_stored(f0(c0[k]));
// CHECK-NEXT: const float t1 = as_stored(t0 + c1[k]);
// CHECK-NEXT: s0[k] = t1;
// CHECK-NEXT: }
// CHECK-NEXT: cuda::store_chunk(r0, i0, count, s0);
// CHECK-NEXT: });
// CHECK-NEXT: }
func.func @elementwise(%x: tensor<8xf32>, %r: tensor<8xf32>) {
  %0 = tcc.fusion_group "elementwise" -> (tensor<8xf32>) {
    %a = tcc.celu %x {alpha = 0.3 : f64} : tensor<8xf32>
    %b = tcc.add %a, %r : tensor<8xf32>, tensor<8xf32>
    tcc.yield %b : tensor<8xf32>
  }
  return
}

// An operand read by two ops is loaded once; each result has its chunk; a
// 16-bit result is stored as such (a chunk of uint16_t: 16 bytes).
// CHECK-LABEL: // @elementwise_two_results
// CHECK: cuda::for_each_chunk(args.stream, 20, [=] __device__(int64_t i0, int count) {
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(a0)> c0;
// CHECK-NEXT: cuda::load_chunk(a0, i0, count, c0);
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(r0)> s0;
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(r1)> s1;
// CHECK: const float t0 = as_stored(c0[k] * c0[k]);
// CHECK-NEXT: const uint16_t t1 = float_to_bf16(t0);
// CHECK-NEXT: s0[k] = t0;
// CHECK-NEXT: s1[k] = t1;
// CHECK-NEXT: }
// CHECK-NEXT: cuda::store_chunk(r0, i0, count, s0);
// CHECK-NEXT: cuda::store_chunk(r1, i0, count, s1);
func.func @elementwise_two_results(%x: tensor<20xf32>) {
  %0:2 = tcc.fusion_group "elementwise" -> (tensor<20xf32>, tensor<20xbf16>) {
    %a = tcc.mul %x, %x : tensor<20xf32>, tensor<20xf32>
    %b = tcc.cast %a to bf16 : (tensor<20xf32>) -> tensor<20xbf16>
    tcc.yield %a, %b : tensor<20xf32>, tensor<20xbf16>
  }
  return
}

// The updates of a multi-tensor group: the chains of each element type in
// one launch (runtime/cuda/device/MultiTensor.cuh), the table of stages and
// chains ({elements, first stage, stages}) by value; an update's input from
// outside the group is copied first.
// CHECK-LABEL: // @updates
// CHECK: // tcc.fusion_group
// CHECK-NEXT: cuda::copy<float>(args.stream, 4, a0, r0);
// CHECK-NEXT: { cuda::UpdateTable<float, 1, 1> table{{[{][{]}}
// CHECK-NEXT: cpu::sgd_stage<float>(r0, a1, static_cast<float *>(nullptr), a2, a3, static_cast<float *>(nullptr), 1, 0, 0, 0, false),
// CHECK-NEXT: }, {
// CHECK-NEXT: {4, 0, 1},
// CHECK-NEXT: }, {}};
// CHECK-NEXT: cuda::multi_tensor_update(args.stream, table); }
func.func @updates(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  %0 = tcc.fusion_group "multi_tensor_update" -> (tensor<4xf32>) {
    %p1 = tcc.sgd_update %p, %g, %lr, %step {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
        : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>
    tcc.yield %p1 : tensor<4xf32>
  }
  return
}

// Two chains in f32 (an SGD step and the EMA of its result; a bias) and one
// of 16-bit state (pure fp16): one launch per type, each chain's stages
// together, in the group's order.
// CHECK-LABEL: // @updates_by_type
// CHECK: // tcc.fusion_group
// CHECK-NEXT: cuda::copy<float>(args.stream, 8, a0, r0);
// CHECK-NEXT: cuda::copy<float>(args.stream, 8, a5, r1);
// CHECK-NEXT: cuda::copy<uint16_t>(args.stream, 6, a8, r3);
// CHECK-NEXT: cuda::copy<float>(args.stream, 3, a6, r2);
// CHECK-NEXT: { cuda::UpdateTable<float, 3, 2> table{{[{][{]}}
// CHECK-NEXT: cpu::sgd_stage<float>(r0, a1,
// CHECK-NEXT: cpu::ema_stage<float>(r1, r0, a3, 0.25, 2),
// CHECK-NEXT: cpu::sgd_stage<float>(r2, a7,
// CHECK-NEXT: }, {
// CHECK-NEXT: {8, 0, 2},
// CHECK-NEXT: {3, 2, 1},
// CHECK-NEXT: }, {}};
// CHECK-NEXT: cuda::multi_tensor_update(args.stream, table); }
// CHECK-NEXT: { cuda::UpdateTable<tcc::rt::half::F16, 1, 1> table{{[{][{]}}
// CHECK-NEXT: cpu::sgd_stage<tcc::rt::half::F16>(reinterpret_cast<tcc::rt::half::F16 *>(r3), reinterpret_cast<tcc::rt::half::F16 *>(a9),
// CHECK-NEXT: }, {
// CHECK-NEXT: {6, 0, 1},
// CHECK-NEXT: }, {}};
// CHECK-NEXT: cuda::multi_tensor_update(args.stream, table); }
// CHECK-NOT: multi_tensor_update
func.func @updates_by_type(%w: tensor<8xf32>, %g: tensor<8xf32>, %lr: tensor<f32>, %step: tensor<i64>,
                           %unused: tensor<8xf32>, %ema: tensor<8xf32>, %b: tensor<3xf32>,
                           %gb: tensor<3xf32>, %h: tensor<6xf16>, %gh: tensor<6xf16>) {
  %0:4 = tcc.fusion_group "multi_tensor_update" -> (tensor<8xf32>, tensor<8xf32>, tensor<3xf32>, tensor<6xf16>) {
    %w1 = tcc.sgd_update %w, %g, %lr, %step {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
        : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i64>) -> tensor<8xf32>
    %e = tcc.ema_update %ema, %w1, %step {decay = 0.5 : f64, every = 2 : i64} : (tensor<8xf32>, tensor<8xf32>, tensor<i64>) -> tensor<8xf32>
    %h1 = tcc.sgd_update %h, %gh, %lr, %step {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
        : (tensor<6xf16>, tensor<6xf16>, tensor<f32>, tensor<i64>) -> tensor<6xf16>
    %b1 = tcc.sgd_update %b, %gb, %lr, %step {dampening = 0.0 : f64, lr_scale = 1.0 : f64, momentum = 0.0 : f64, nesterov = false, weight_decay = 0.0 : f64}
        : (tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<i64>) -> tensor<3xf32>
    tcc.yield %w1, %e, %b1, %h1 : tensor<8xf32>, tensor<8xf32>, tensor<3xf32>, tensor<6xf16>
  }
  return
}

// Pooling: the cpu kernels' per-plane functions, one thread per plane
// (runtime/cuda/device/Pool.cuh).
// CHECK-LABEL: // @pools
// CHECK: // tcc.max_pool2d
// CHECK-NEXT: cuda::max_pool2d_forward<float>(args.stream, make_pool2d_shape(2, 3, 4, 4, 2, 2, 2, 2, 0, 0), false, a0, r0);
// CHECK: // tcc.max_pool2d_backward
// CHECK-NEXT: cuda::max_pool2d_backward<float>(args.stream, make_pool2d_shape(2, 3, 4, 4, 2, 2, 2, 2, 0, 0), false, a0, a1, r1);
// CHECK: // tcc.global_max_pool
// CHECK-NEXT: cuda::global_max_pool_forward<float>(args.stream, 2, 3, 16, false, a0, r2);
func.func @pools(%x: tensor<2x3x4x4xf32>, %dy: tensor<2x3x2x2xf32>) {
  %p = tcc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x4x4xf32>) -> tensor<2x3x2x2xf32>
  %dx = tcc.max_pool2d_backward %dy, %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x2x2xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %g = tcc.global_max_pool %x : (tensor<2x3x4x4xf32>) -> tensor<2x3xf32>
  return
}

// Max pools on 16-bit tensors run in their stored type (they select an
// element; the backward sums in f32 and rounds once; other pools on 16-bit
// tensors are refused: emit-cuda-unsupported-16bit.mlir).
// CHECK-LABEL: // @pools_bf16
// CHECK: // tcc.max_pool2d
// CHECK-NEXT: cuda::max_pool2d_forward<tcc::rt::half::BF16>(args.stream, make_pool2d_shape(2, 3, 4, 4, 2, 2, 2, 2, 0, 0), false, reinterpret_cast<tcc::rt::half::BF16 *>(a0), reinterpret_cast<tcc::rt::half::BF16 *>(r0));
// CHECK: // tcc.max_pool2d_backward
// CHECK-NEXT: cuda::max_pool2d_backward<tcc::rt::half::BF16>(args.stream, make_pool2d_shape(2, 3, 4, 4, 2, 2, 2, 2, 0, 0), false, reinterpret_cast<tcc::rt::half::BF16 *>(a0), reinterpret_cast<tcc::rt::half::BF16 *>(a1), reinterpret_cast<tcc::rt::half::BF16 *>(r1));
func.func @pools_bf16(%x: tensor<2x3x4x4xbf16>, %dy: tensor<2x3x2x2xbf16>) {
  %p = tcc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x4x4xbf16>) -> tensor<2x3x2x2xbf16>
  %dx = tcc.max_pool2d_backward %dy, %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x3x2x2xbf16>, tensor<2x3x4x4xbf16>) -> tensor<2x3x4x4xbf16>
  return
}

// Batch norm (runtime/cuda/device/Norm.cuh): the cpu kernels' functions
// behind the `_with` interface, storing through a device lambda.
// CHECK-LABEL: // @norm
// CHECK: // tcc.batch_norm_inference
// CHECK-NEXT: cuda::batch_norm_forward_inference_with<float>(args.stream, BatchNormShape{2, 3, 16, 0}, a0, static_cast<float *>(nullptr), static_cast<float *>(nullptr), a1, a2, 1.0000000000000001e-05, [=] __device__(int64_t i0, int count, const float (&y)[cuda::kChunk]) { cuda::store_chunk(r0, i0, count, y); });
func.func @norm(%x: tensor<2x3x4x4xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) {
  %y = tcc.batch_norm_inference %x running %m, %v {eps = 1.0e-05 : f64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return
}

// Dropout: the step's seed (tcc.mix_seed) in device memory, each element's
// mask bits drawn by its own thread (runtime/common/DropoutMask.h, as the
// cpu kernel draws them).
// CHECK-LABEL: // @dropout
// CHECK: // tcc.mix_seed
// CHECK-NEXT: cuda::mix_seed(args.stream, a1, a2, r0);
// CHECK: // tcc.dropout
// CHECK-NEXT: cuda::apply_dropout<float>(args.stream, 128, 0.25, r0, 3, args.control, a0, r1);
func.func @dropout(%x: tensor<8x16xf32>, %seed: tensor<i64>, %step: tensor<i64>) {
  %s = tcc.mix_seed %seed, %step : tensor<i64>
  %y = tcc.dropout %x, %s {p = 2.5e-01 : f64, stream = 3 : i64} : (tensor<8x16xf32>, tensor<i64>) -> tensor<8x16xf32>
  return
}

// Layout ops: index arithmetic with the sizes as constants (a division by a
// constant is a multiplication on the GPU); concat one launch per input.
// CHECK-LABEL: // @layout
// CHECK: // tcc.transpose
// CHECK-NEXT: cuda::for_each(args.stream, 120, [=] __device__(int64_t i) { r0[i] = a0[((i) % 3) * 20 + ((i / 3) % 5) * 1 + ((i / 15) % 4) * 5 + (i / 60) * 60]; });
// CHECK: // tcc.concat
// CHECK-NEXT: cuda::for_each(args.stream, 120, [=] __device__(int64_t i) { r1[i / 60 * 100 + 0 + i % 60] = a0[i]; });
// CHECK-NEXT: cuda::for_each(args.stream, 80, [=] __device__(int64_t i) { r1[i / 40 * 100 + 60 + i % 40] = a1[i]; });
// CHECK: // tcc.slice
// CHECK-NEXT: cuda::for_each(args.stream, 80, [=] __device__(int64_t i) { r2[i] = r1[i / 40 * 100 + 20 + i % 40]; });
// CHECK: // tcc.layer_norm
// CHECK-NEXT: cuda::layer_norm_forward<float>(args.stream, 6, 20, a0, static_cast<float *>(nullptr), static_cast<float *>(nullptr), 1.0000000000000001e-05, r3, r4, r5);
// CHECK: // tcc.softmax
// CHECK-NEXT: cuda::softmax_forward<false>(args.stream, 6, 4, 5, a0, r6);
func.func @layout(%x: tensor<2x3x4x5xf32>, %z: tensor<2x2x4x5xf32>) {
  %t = tcc.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32>
  %c = tcc.concat %x, %z {axis = 1 : i64} : (tensor<2x3x4x5xf32>, tensor<2x2x4x5xf32>) -> tensor<2x5x4x5xf32>
  %s = tcc.slice %c {axis = 1 : i64, offset = 1 : i64, size = 2 : i64} : (tensor<2x5x4x5xf32>) -> tensor<2x2x4x5xf32>
  %y, %mean, %invstd = tcc.layer_norm %x {normalized_dims = 2 : i64, eps = 1.0e-05 : f64} : (tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  %sm = tcc.softmax %x {axis = 2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return
}

// A matmul_epilogue group (tcc-fusion's cublaslt-linear-activation, the
// cuda target's pattern): the linear through cuBLASLt with its ReLU in the
// epilogue (RELU_BIAS), stored straight into the group's result.
// A matmul_epilogue group: the linear's call with its activation. A GELU
// whose group also yields the linear's result (for the backward) stores it
// through cuBLASLt's aux pointer (GELU_AUX); one that does not, GELU alone.
// CHECK-LABEL: // @epilogue
// CHECK: // tcc.fusion_group
// CHECK-NEXT: args.matmul->linear_forward(args.stream, cuda::Matmul::Type::f32, 8, 4, 16, a0, a1, a2, r0, nullptr, 0, ::tcc::cuda::MatmulActivation::relu, nullptr);
// CHECK: // tcc.fusion_group
// CHECK-NEXT: args.matmul->linear_forward(args.stream, cuda::Matmul::Type::f32, 8, 4, 16, a0, a1, a2, r2, nullptr, 0, ::tcc::cuda::MatmulActivation::gelu_aux, r1);
// CHECK: // tcc.fusion_group
// CHECK-NEXT: args.matmul->linear_forward(args.stream, cuda::Matmul::Type::f32, 8, 4, 16, a0, a1, nullptr, r3, nullptr, 0, ::tcc::cuda::MatmulActivation::gelu, nullptr);
func.func @epilogue(%x: tensor<8x4xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) {
  %g = tcc.fusion_group "matmul_epilogue" -> (tensor<8x16xf32>) {
    %l = tcc.linear %x, %w, %b : (tensor<8x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    %r = tcc.relu %l : tensor<8x16xf32>
    tcc.yield %r : tensor<8x16xf32>
  }
  %h:2 = tcc.fusion_group "matmul_epilogue" -> (tensor<8x16xf32>, tensor<8x16xf32>) {
    %l = tcc.linear %x, %w, %b : (tensor<8x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    %a = tcc.gelu %l {approximate = "tanh"} : tensor<8x16xf32>
    tcc.yield %l, %a : tensor<8x16xf32>, tensor<8x16xf32>
  }
  %e = tcc.fusion_group "matmul_epilogue" -> (tensor<8x16xf32>) {
    %l = tcc.linear %x, %w : (tensor<8x4xf32>, tensor<16x4xf32>) -> tensor<8x16xf32>
    %a = tcc.gelu %l {approximate = "tanh"} : tensor<8x16xf32>
    tcc.yield %a : tensor<8x16xf32>
  }
  return
}

// Elementwise ops outside groups take chunks too; an operand read twice is
// loaded once.
// CHECK-LABEL: // @standalone_elementwise
// CHECK: // tcc.add
// CHECK-NEXT: cuda::for_each_chunk(args.stream, 12, [=] __device__(int64_t i0, int count) {
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(a0)> c0;
// CHECK-NEXT: cuda::load_chunk(a0, i0, count, c0);
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(r0)> s0;
// CHECK: s0[k] = c0[k] + c0[k];
// CHECK: cuda::store_chunk(r0, i0, count, s0);
// CHECK: // tcc.mul
// CHECK: cuda::load_chunk(a0, i0, count, c0);
// CHECK: cuda::load_chunk(r0, i0, count, c1);
// CHECK: s0[k] = c0[k] * c1[k];
// CHECK: cuda::store_chunk(r1, i0, count, s0);
// CHECK: // tcc.cast
// CHECK: cuda::load_chunk(r1, i0, count, c0);
// CHECK: s0[k] = float_to_f16(c0[k]);
// CHECK: cuda::store_chunk(r2, i0, count, s0);
func.func @standalone_elementwise(%x: tensor<12xf32>) {
  %a = tcc.add %x, %x : tensor<12xf32>, tensor<12xf32>
  %b = tcc.mul %x, %a : tensor<12xf32>, tensor<12xf32>
  %c = tcc.cast %b to f16 : (tensor<12xf32>) -> tensor<12xf16>
  return
}

// NHWC tensors (tcc-channels-last marks the ops whose 4-d results are
// stored so): a cast that converts the layout gathers each element from
// where the other layout keeps it (NCHW -> NHWC, then NHWC -> NCHW); the
// pools take channelsLast; a batch norm sees [n*h*w, C] (each sample h*w
// rows) and a bias gradient sums [n*h*w, C, 1]; a cast between two NHWC
// tensors is still a chunked loop.
// CHECK-LABEL: // @channels_last
// CHECK: // tcc.cast
// CHECK-NEXT: cuda::for_each(args.stream, 96, [=] __device__(int64_t i) { r0[i] = float_to_bf16(a0[((i) % 3) * 16 + ((i / 3) % 4) * 1 + ((i / 12) % 4) * 4 + (i / 48) * 48]); });
// CHECK: // tcc.max_pool2d
// CHECK-NEXT: cuda::max_pool2d_forward<tcc::rt::half::BF16>(args.stream, make_pool2d_shape(2, 3, 4, 4, 2, 2, 2, 2, 0, 0), true,
// CHECK: // tcc.cast
// CHECK-NEXT: cuda::for_each_chunk(args.stream, 24,
// CHECK: // tcc.batch_norm_inference
// CHECK-NEXT: cuda::batch_norm_forward_inference_with<float>(args.stream, BatchNormShape{8, 3, 1, 0, false, 4}, r2,
// CHECK: // tcc.reduce_sum
// CHECK-NEXT: cuda::reduce_sum_keep<float>(args.stream, nullptr, 0, 8, 3, 1, r3, r4);
// CHECK: // tcc.global_avg_pool
// CHECK-NEXT: cuda::global_avg_pool_forward<float>(args.stream, 2, 3, 4, true, r3, r5);
// CHECK: // tcc.cast
// CHECK-NEXT: cuda::for_each(args.stream, 24, [=] __device__(int64_t i) { r6[i] = float_to_bf16(r3[((i) % 2) * 3 + ((i / 2) % 2) * 6 + ((i / 4) % 3) * 1 + (i / 12) * 12]); });
func.func @channels_last(%x: tensor<2x3x4x4xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) {
  %h = tcc.cast %x to bf16 {tcc.channels_last} : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xbf16>
  %p = tcc.max_pool2d %h {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>, tcc.channels_last} : (tensor<2x3x4x4xbf16>) -> tensor<2x3x2x2xbf16>
  %w = tcc.cast %p to f32 {tcc.channels_last} : (tensor<2x3x2x2xbf16>) -> tensor<2x3x2x2xf32>
  %y = tcc.batch_norm_inference %w running %m, %v {eps = 1.0e-05 : f64, tcc.channels_last} : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x2x2xf32>
  %s = tcc.reduce_sum %y {axes = array<i64: 0, 2, 3>} : (tensor<2x3x2x2xf32>) -> tensor<3xf32>
  %g = tcc.global_avg_pool %y : (tensor<2x3x2x2xf32>) -> tensor<2x3xf32>
  %b = tcc.cast %y to bf16 : (tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xbf16>
  return
}

// A norm_epilogue: the kernel hands over a chunk of normalised elements
// y[0, count) (runtime/cuda/device/Norm.cuh); the group loads the chunks of
// what else it reads (the residual a3), computes element k of each, and
// stores its results' chunks (the normalised value r0, the sum r5).
// CHECK-LABEL: // @norm_epilogue
// CHECK: // tcc.fusion_group
// CHECK: cuda::batch_norm_forward_train_with<float>(args.stream, nullptr, 0, BatchNormShape{4, 16, 1, 0}, a0, static_cast<float *>(nullptr), static_cast<float *>(nullptr), 1.0000000000000001e-05, 0.10000000000000001, [=] __device__(int64_t i0, int count, const float (&y)[cuda::kChunk]) {
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(a3)> c0;
// CHECK-NEXT: cuda::load_chunk(a3, i0, count, c0);
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(r0)> s0;
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(r5)> s1;
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (int k = 0; k < cuda::kChunk; ++k) {
// CHECK-NEXT: if (k == count) break;
// CHECK-NEXT: s0[k] = y[k];
// CHECK-NEXT: const float t0 = as_stored(f0(y[k]));
// CHECK-NEXT: const float t1 = as_stored(t0 + c0[k]);
// CHECK-NEXT: s1[k] = t1;
// CHECK-NEXT: }
// CHECK-NEXT: cuda::store_chunk(r0, i0, count, s0);
// CHECK-NEXT: cuda::store_chunk(r5, i0, count, s1);
// CHECK-NEXT: }, r1, r2, r3, r4);
func.func @norm_epilogue(%x: tensor<4x16xf32>, %rm: tensor<16xf32>, %rv: tensor<16xf32>, %r: tensor<4x16xf32>) {
  %0:6 = tcc.fusion_group "norm_epilogue" -> (tensor<4x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<4x16xf32>) {
    %y, %m, %i, %nrm, %nrv = tcc.batch_norm %x running %rm, %rv {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64}
        : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
    %a = tcc.relu %y : tensor<4x16xf32>
    %s = tcc.add %a, %r : tensor<4x16xf32>, tensor<4x16xf32>
    tcc.yield %y, %m, %i, %nrm, %nrv, %s : tensor<4x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<4x16xf32>
  }
  return
}

// A norm_backward_prologue recomputing the normalised value: the kernel
// asks for a chunk of gradients dy[0, count), element k's statistics row
// gc0 + k * gcStep.
// CHECK-LABEL: // @prologue_recomputes
// CHECK: cuda::batch_norm_backward_with<float>(args.stream, nullptr, 0, BatchNormShape{4, 16, 1, 2}, [=] __device__(int64_t i0, int count, {{\[\[maybe_unused\]\]}} int64_t gc0, {{\[\[maybe_unused\]\]}} int gcStep, float (&dy)[cuda::kChunk]) {
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(a1)> c0;
// CHECK-NEXT: cuda::load_chunk(a1, i0, count, c0);
// CHECK-NEXT: alignas(16) cuda::ChunkOf<decltype(a0)> c1;
// CHECK-NEXT: cuda::load_chunk(a0, i0, count, c1);
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (int k = 0; k < cuda::kChunk; ++k) {
// CHECK-NEXT: if (k == count) break;
// CHECK-NEXT: {{\[\[maybe_unused\]\]}} const int64_t gc = gc0 + k * gcStep;
// CHECK-NEXT: const float t0 = as_stored(batch_norm_apply_at<float>(c0[k], a3[gc], a4[gc], a2, static_cast<float *>(nullptr), gc % 16));
// CHECK-NEXT: const float t1 = as_stored(f1(t0, c1[k]));
// CHECK-NEXT: dy[k] = t1;
// CHECK-NEXT: }
// CHECK-NEXT: }, a1, a2, a3, a4, r0, r1, r2);
func.func @prologue_recomputes(%g: tensor<4x16xf32>, %x: tensor<4x16xf32>, %w: tensor<16xf32>, %mean: tensor<2x16xf32>, %invstd: tensor<2x16xf32>) {
  %0:3 = tcc.fusion_group "norm_backward_prologue" -> (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) {
    %y = tcc.batch_norm_apply %x weight %w saved %mean, %invstd {ghost_batch = 2 : i64}
        : (tensor<4x16xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<4x16xf32>
    %dy = tcc.celu_backward %g, %y {alpha = 1.0 : f64} : tensor<4x16xf32>
    %dx, %dw, %db = tcc.batch_norm_backward %dy, %x weight %w saved %mean, %invstd {ghost_batch = 2 : i64}
        : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>)
    tcc.yield %dx, %dw, %db : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  }
  return
}

// Channel padding (tcc-pad-channels) on 16-bit bits: NCHW copies each
// sample's 3 planes of 16 pixels and zeros 5 more; NHWC each pixel's 3
// channels and zeros 5 more.
// CHECK-LABEL: // @pad_channels
// CHECK: cuda::for_each(args.stream, 256, [=] __device__(int64_t i) { const int64_t r = i % 128; r1[i] = r < 48 ? a0[i / 128 * 48 + r] : 0; });
// CHECK: cuda::for_each(args.stream, 256, [=] __device__(int64_t i) { const int64_t r = i % 8; r3[i] = r < 3 ? r2[i / 8 * 3 + r] : 0; });
func.func @pad_channels(%x: tensor<2x3x4x4xf16>) {
  %n = tcc.cast %x to f32 {tcc.channels_last} : (tensor<2x3x4x4xf16>) -> tensor<2x3x4x4xf32>
  %a = tcc.pad_channels %x {channels = 8 : i64} : (tensor<2x3x4x4xf16>) -> tensor<2x8x4x4xf16>
  %h = tcc.cast %n to f16 {tcc.channels_last} : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf16>
  %b = tcc.pad_channels %h {channels = 8 : i64, tcc.channels_last} : (tensor<2x3x4x4xf16>) -> tensor<2x8x4x4xf16>
  return
}
