// RUN: tcc-opt %s -split-input-file -verify-diagnostics

// Invalid forms of every tcc op. Shape errors come from inferReturnTypes
// (TccShapeInference.cpp), which reports the specific message followed by the
// generic "failed to infer returned types"; type-constraint errors come from
// the ODS-generated verifiers.

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

// Input is rank 3, not [N, C, H, W].
func.func @conv2d_input_rank(%x: tensor<3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{input must be [N, C, H, W], got [3, 32, 32]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<64x30x30xf32>
  return
}

// -----

// Weight is rank 2, not [O, C/groups, kH, kW].
func.func @conv2d_weight_rank(%x: tensor<8x3x32x32xf32>, %w: tensor<64x27xf32>) {
  // expected-error @+2 {{weight must be [O, C/groups, kH, kW], got [64, 27]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x27xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// Negative stride.
func.func @conv2d_negative_stride(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{'stride' must be positive and at most 16777216, got [-1, 1]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: -1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// Zero stride.
func.func @conv2d_zero_stride(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{'stride' must be positive and at most 16777216, got [1, 0]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 0>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// Stride has 1 entry instead of [h, w].
func.func @conv2d_stride_entries(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{'stride' must have 2 entries [h, w], got 1}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// Negative padding.
func.func @conv2d_negative_padding(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{'padding' must be non-negative and at most 16777216, got [0, -1]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, -1>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x30x28xf32>
  return
}

// -----

// Padding has 4 entries instead of [h, w].
func.func @conv2d_padding_entries(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{'padding' must have 2 entries [h, w], got 4}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x32x32xf32>
  return
}

// -----

// Zero dilation.
func.func @conv2d_zero_dilation(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{'dilation' must be positive and at most 16777216, got [0, 1]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 0, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x32x30xf32>
  return
}

// -----

// Dilation 2^62: dilation * (kH - 1) would overflow int64 when sizing the window.
func.func @conv2d_huge_dilation(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{'dilation' must be positive and at most 16777216, got [4611686018427387904, 1]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 4611686018427387904, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// Stride one past the 2^24 bound on window attributes.
func.func @conv2d_stride_over_limit(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{'stride' must be positive and at most 16777216, got [1, 16777217]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 16777217>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x30x1xf32>
  return
}

// -----

// groups must be positive.
func.func @conv2d_zero_groups(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{groups must be positive, got 0}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 0 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// groups (2) does not divide the input channels (3).
func.func @conv2d_groups_input_channels(%x: tensor<8x3x32x32xf32>, %w: tensor<64x1x3x3xf32>) {
  // expected-error @+2 {{groups 2 must divide both the input channels (3) and the output channels (64)}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x1x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// groups (4) does not divide the output channels (6).
func.func @conv2d_groups_output_channels(%x: tensor<8x8x32x32xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+2 {{groups 4 must divide both the input channels (8) and the output channels (6)}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 4 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x8x32x32xf32>, tensor<6x2x3x3xf32>) -> tensor<8x6x30x30xf32>
  return
}

// -----

// Weight expects 4 input channels, input has 3.
func.func @conv2d_channel_mismatch(%x: tensor<8x3x32x32xf32>, %w: tensor<64x4x3x3xf32>) {
  // expected-error @+2 {{weight [64, 4, 3, 3] with groups 1 expects 4 input channels, got input [8, 3, 32, 32]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x4x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// With groups = 2 the weight [64, 3, ...] expects 6 input channels, input has 3.
func.func @conv2d_grouped_channel_mismatch(%x: tensor<8x4x32x32xf32>, %w: tensor<64x4x3x3xf32>) {
  // expected-error @+2 {{weight [64, 4, 3, 3] with groups 2 expects 8 input channels, got input [8, 4, 32, 32]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x4x32x32xf32>, tensor<64x4x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// 5x5 kernel on a 3x3 input without padding.
func.func @conv2d_kernel_too_large(%x: tensor<8x3x3x3xf32>, %w: tensor<64x3x5x5xf32>) {
  // expected-error @+2 {{kernel [5, 5] (dilated extent 5) is larger than the padded input (input [8, 3, 3, 3], padding [0, 0])}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x3x3xf32>, tensor<64x3x5x5xf32>) -> tensor<8x64x1x1xf32>
  return
}

// -----

// 3x3 kernel dilated by 3 spans 7 > 6 input rows.
func.func @conv2d_dilated_kernel_too_large(%x: tensor<8x3x6x6xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{kernel [3, 3] (dilated extent 7) is larger than the padded input (input [8, 3, 6, 6], padding [0, 0])}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 3, 3>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x6x6xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x1x1xf32>
  return
}

// -----

// Bias has the input channel count, not the output channel count.
func.func @conv2d_bias_shape(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{bias must have shape [64], got [3]}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>, tensor<3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// Bias f16 for an f32 input and weight.
func.func @conv2d_bias_element_type(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>, %b: tensor<64xf16>) {
  // expected-error @+2 {{bias element type 'f16' differs from the input's 'f32'}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>, tensor<64xf16>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// Input f32, weight bf16.
func.func @conv2d_element_types(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xbf16>) {
  // expected-error @+2 {{input and weight element types differ: 'f32' vs 'bf16'}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xbf16>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// Result spatial size ignores the padding: inferred 32x32.
func.func @conv2d_result_type(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+2 {{'tcc.conv2d' op inferred type(s) 'tensor<8x64x32x32xf32>' are incompatible with return type(s) of operation 'tensor<8x64x30x30xf32>'}}
  // expected-error @+1 {{'tcc.conv2d' op failed to infer returned types}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// f64 is not a tcc float type.
func.func @conv2d_f64(%x: tensor<8x3x32x32xf64>, %w: tensor<64x3x3x3xf64>) {
  // expected-error @+1 {{'tcc.conv2d' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x3x32x32xf64>'}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf64>, tensor<64x3x3x3xf64>) -> tensor<8x64x30x30xf64>
  return
}

// -----

// Dynamic batch size.
func.func @conv2d_dynamic(%x: tensor<?x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+1 {{'tcc.conv2d' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<?x3x32x32xf32>'}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<?x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<?x64x30x30xf32>
  return
}

// -----

// Zero-sized kernel dim: tcc tensors have no empty dims.
func.func @conv2d_zero_kernel_dim(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x0x3xf32>) {
  // expected-error @+1 {{'tcc.conv2d' op operand #1 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<64x3x0x3xf32>'}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x0x3xf32>) -> tensor<8x64x33x30xf32>
  return
}

// -----

// Input with zero channels.
func.func @conv2d_zero_channels(%x: tensor<8x0x32x32xf32>, %w: tensor<64x0x3x3xf32>) {
  // expected-error @+1 {{'tcc.conv2d' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x0x32x32xf32>'}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x0x32x32xf32>, tensor<64x0x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

// groups attribute missing.
func.func @conv2d_missing_groups(%x: tensor<8x3x32x32xf32>, %w: tensor<64x3x3x3xf32>) {
  // expected-error @+1 {{'tcc.conv2d' op requires attribute 'groups'}}
  %0 = tcc.conv2d %x, %w {dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x3x32x32xf32>, tensor<64x3x3x3xf32>) -> tensor<8x64x30x30xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

// Input is rank 1: there is no batch dim.
func.func @linear_input_rank(%x: tensor<256xf32>, %w: tensor<10x256xf32>) {
  // expected-error @+2 {{input must be [N, ..., in_features], got [256]}}
  // expected-error @+1 {{'tcc.linear' op failed to infer returned types}}
  %0 = tcc.linear %x, %w : (tensor<256xf32>, tensor<10x256xf32>) -> tensor<10xf32>
  return
}

// -----

// Weight is rank 3.
func.func @linear_weight_rank(%x: tensor<8x256xf32>, %w: tensor<10x16x16xf32>) {
  // expected-error @+2 {{weight must be [out_features, in_features], got [10, 16, 16]}}
  // expected-error @+1 {{'tcc.linear' op failed to infer returned types}}
  %0 = tcc.linear %x, %w : (tensor<8x256xf32>, tensor<10x16x16xf32>) -> tensor<8x10xf32>
  return
}

// -----

// Weight is [in, out] instead of PyTorch's [out, in].
func.func @linear_features(%x: tensor<8x256xf32>, %w: tensor<256x10xf32>) {
  // expected-error @+2 {{weight [256, 10] expects 10 input features, got input [8, 256]}}
  // expected-error @+1 {{'tcc.linear' op failed to infer returned types}}
  %0 = tcc.linear %x, %w : (tensor<8x256xf32>, tensor<256x10xf32>) -> tensor<8x10xf32>
  return
}

// -----

// Input bf16, weight f32.
func.func @linear_element_types(%x: tensor<8x256xbf16>, %w: tensor<10x256xf32>) {
  // expected-error @+2 {{input and weight element types differ: 'bf16' vs 'f32'}}
  // expected-error @+1 {{'tcc.linear' op failed to infer returned types}}
  %0 = tcc.linear %x, %w : (tensor<8x256xbf16>, tensor<10x256xf32>) -> tensor<8x10xbf16>
  return
}

// -----

// Bias has the input feature count.
func.func @linear_bias_shape(%x: tensor<8x256xf32>, %w: tensor<10x256xf32>, %b: tensor<256xf32>) {
  // expected-error @+2 {{bias must have shape [10], got [256]}}
  // expected-error @+1 {{'tcc.linear' op failed to infer returned types}}
  %0 = tcc.linear %x, %w, %b : (tensor<8x256xf32>, tensor<10x256xf32>, tensor<256xf32>) -> tensor<8x10xf32>
  return
}

// -----

// Bias is [1, 10], not [10].
func.func @linear_bias_rank(%x: tensor<8x256xf32>, %w: tensor<10x256xf32>, %b: tensor<1x10xf32>) {
  // expected-error @+2 {{bias must have shape [10], got [1, 10]}}
  // expected-error @+1 {{'tcc.linear' op failed to infer returned types}}
  %0 = tcc.linear %x, %w, %b : (tensor<8x256xf32>, tensor<10x256xf32>, tensor<1x10xf32>) -> tensor<8x10xf32>
  return
}

// -----

// Bias f16 for an f32 input and weight.
func.func @linear_bias_element_type(%x: tensor<8x256xf32>, %w: tensor<10x256xf32>, %b: tensor<10xf16>) {
  // expected-error @+2 {{bias element type 'f16' differs from the input's 'f32'}}
  // expected-error @+1 {{'tcc.linear' op failed to infer returned types}}
  %0 = tcc.linear %x, %w, %b : (tensor<8x256xf32>, tensor<10x256xf32>, tensor<10xf16>) -> tensor<8x10xf32>
  return
}

// -----

// Result has the input feature count instead of the output one.
func.func @linear_result_type(%x: tensor<8x256xf32>, %w: tensor<10x256xf32>) {
  // expected-error @+2 {{'tcc.linear' op inferred type(s) 'tensor<8x10xf32>' are incompatible with return type(s) of operation 'tensor<8x256xf32>'}}
  // expected-error @+1 {{'tcc.linear' op failed to infer returned types}}
  %0 = tcc.linear %x, %w : (tensor<8x256xf32>, tensor<10x256xf32>) -> tensor<8x256xf32>
  return
}

// -----

// i32 is not a tcc float type.
func.func @linear_i32(%x: tensor<8x256xi32>, %w: tensor<10x256xi32>) {
  // expected-error @+1 {{'tcc.linear' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x256xi32>'}}
  %0 = tcc.linear %x, %w : (tensor<8x256xi32>, tensor<10x256xi32>) -> tensor<8x10xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

// Input is rank 3 ([N, C, L] is not supported).
func.func @batch_norm_input_rank(%x: tensor<8x16x4xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{input must be [N, C] or [N, C, H, W], got [8, 16, 4]}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// running_mean has 8 entries for 16 channels.
func.func @batch_norm_running_mean_shape(%x: tensor<8x16x4x4xf32>, %m: tensor<8xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{running_mean must have shape [16], got [8]}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16x4x4xf32>, tensor<8xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// running_var is f16: running statistics are always f32.
func.func @batch_norm_running_var_f16(%x: tensor<8x16x4x4xf16>, %m: tensor<16xf32>, %v: tensor<16xf16>) {
  // expected-error @+2 {{running_var must be f32, got 'tensor<16xf16>'}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16x4x4xf16>, tensor<16xf32>, tensor<16xf16>) -> (tensor<8x16x4x4xf16>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// weight has the spatial shape instead of [C].
func.func @batch_norm_weight_shape(%x: tensor<8x16x4x4xf32>, %g: tensor<4x4xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{weight must have shape [16], got [4, 4]}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x weight %g running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16x4x4xf32>, tensor<4x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// bias is bf16: affine parameters are f32.
func.func @batch_norm_bias_bf16(%x: tensor<8x16xbf16>, %b: tensor<16xbf16>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{bias must be f32, got 'tensor<16xbf16>'}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x bias %b running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16xbf16>, tensor<16xbf16>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xbf16>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// eps = 0.
func.func @batch_norm_zero_eps(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{eps must be positive and finite, got 0.000000e+00}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 0.0 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Negative eps.
func.func @batch_norm_negative_eps(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{eps must be positive and finite, got -1.000000e-05}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = -1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Infinite eps.
func.func @batch_norm_infinite_eps(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{eps must be positive and finite, got INF}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 0x7FF0000000000000 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// momentum above 1.
func.func @batch_norm_momentum_above_one(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{momentum must be in [0, 1], got 1.500000e+00}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.5 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Negative momentum.
func.func @batch_norm_negative_momentum(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{momentum must be in [0, 1], got -1.000000e-01}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = -0.1 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// ghost_batch 3 does not divide the batch of 8.
func.func @batch_norm_ghost_batch_divides(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{ghost_batch 3 must be 0 (whole batch) or divide the batch size 8}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 3 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Negative ghost_batch.
func.func @batch_norm_negative_ghost_batch(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{ghost_batch -2 must be 0 (whole batch) or divide the batch size 8}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = -2 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// A batch of one [1, C]: one value per channel, no variance.
func.func @batch_norm_one_value_per_channel(%x: tensor<1x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{needs more than one value per channel in each (ghost) batch to compute a variance, got input [1, 16]}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Ghost batches of one sample of [N, C]: one value per channel in each.
func.func @batch_norm_ghost_batch_of_one(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{needs more than one value per channel in each (ghost) batch to compute a variance, got input [8, 16] with ghost_batch 1}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 1 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// saved_mean is [C] but must be [N/G, C] = [1, 16].
func.func @batch_norm_result_type(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{'tcc.batch_norm' op inferred type(s) 'tensor<8x16xf32>', 'tensor<1x16xf32>', 'tensor<1x16xf32>', 'tensor<16xf32>', 'tensor<16xf32>' are incompatible with return type(s) of operation 'tensor<8x16xf32>', 'tensor<16xf32>', 'tensor<1x16xf32>', 'tensor<16xf32>', 'tensor<16xf32>'}}
  // expected-error @+1 {{'tcc.batch_norm' op failed to infer returned types}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// i64 input: not a tcc float type.
func.func @batch_norm_i64(%x: tensor<8x16xi64>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+1 {{'tcc.batch_norm' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x16xi64>'}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64} : (tensor<8x16xi64>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xi64>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// momentum given as an integer attribute.
func.func @batch_norm_momentum_attr_type(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+1 {{custom op 'tcc.batch_norm' 'tcc.batch_norm' op attribute 'momentum' failed to satisfy constraint: 64-bit float attribute}}
  %y:5 = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1 : i64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// batch_norm_inference
//===----------------------------------------------------------------------===//

// Input is rank 1.
func.func @batch_norm_inference_input_rank(%x: tensor<16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{input must be [N, C] or [N, C, H, W], got [16]}}
  // expected-error @+1 {{'tcc.batch_norm_inference' op failed to infer returned types}}
  %0 = tcc.batch_norm_inference %x running %m, %v {eps = 1.0e-05 : f64} : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return
}

// -----

// running_var has 32 entries for 16 channels.
func.func @batch_norm_inference_running_var_shape(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<32xf32>) {
  // expected-error @+2 {{running_var must have shape [16], got [32]}}
  // expected-error @+1 {{'tcc.batch_norm_inference' op failed to infer returned types}}
  %0 = tcc.batch_norm_inference %x running %m, %v {eps = 1.0e-05 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<32xf32>) -> tensor<8x16xf32>
  return
}

// -----

// running_mean is bf16: running statistics are always f32.
func.func @batch_norm_inference_running_mean_bf16(%x: tensor<8x16xbf16>, %m: tensor<16xbf16>, %v: tensor<16xf32>) {
  // expected-error @+2 {{running_mean must be f32, got 'tensor<16xbf16>'}}
  // expected-error @+1 {{'tcc.batch_norm_inference' op failed to infer returned types}}
  %0 = tcc.batch_norm_inference %x running %m, %v {eps = 1.0e-05 : f64} : (tensor<8x16xbf16>, tensor<16xbf16>, tensor<16xf32>) -> tensor<8x16xbf16>
  return
}

// -----

// weight has the wrong channel count.
func.func @batch_norm_inference_weight_shape(%x: tensor<8x16x4x4xf32>, %g: tensor<4xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{weight must have shape [16], got [4]}}
  // expected-error @+1 {{'tcc.batch_norm_inference' op failed to infer returned types}}
  %0 = tcc.batch_norm_inference %x weight %g running %m, %v {eps = 1.0e-05 : f64} : (tensor<8x16x4x4xf32>, tensor<4xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  return
}

// -----

// eps = 0.
func.func @batch_norm_inference_zero_eps(%x: tensor<8x16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{eps must be positive and finite, got 0.000000e+00}}
  // expected-error @+1 {{'tcc.batch_norm_inference' op failed to infer returned types}}
  %0 = tcc.batch_norm_inference %x running %m, %v {eps = 0.0 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Result element type differs from the input's.
func.func @batch_norm_inference_result_type(%x: tensor<8x16xbf16>, %m: tensor<16xf32>, %v: tensor<16xf32>) {
  // expected-error @+2 {{'tcc.batch_norm_inference' op inferred type(s) 'tensor<8x16xbf16>' are incompatible with return type(s) of operation 'tensor<8x16xf32>'}}
  // expected-error @+1 {{'tcc.batch_norm_inference' op failed to infer returned types}}
  %0 = tcc.batch_norm_inference %x running %m, %v {eps = 1.0e-05 : f64} : (tensor<8x16xbf16>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

// normalized_dims = 0 normalises nothing.
func.func @layer_norm_zero_dims(%x: tensor<8x64xf32>) {
  // expected-error @+2 {{normalized_dims must be in [1, 1] for input [8, 64], got 0}}
  // expected-error @+1 {{'tcc.layer_norm' op failed to infer returned types}}
  %0:3 = tcc.layer_norm %x {eps = 1.0e-05 : f64, normalized_dims = 0 : i64} : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>)
  return
}

// -----

// normalized_dims = rank would normalise the batch dim too.
func.func @layer_norm_dims_out_of_range(%x: tensor<8x64xf32>) {
  // expected-error @+2 {{normalized_dims must be in [1, 1] for input [8, 64], got 2}}
  // expected-error @+1 {{'tcc.layer_norm' op failed to infer returned types}}
  %0:3 = tcc.layer_norm %x {eps = 1.0e-05 : f64, normalized_dims = 2 : i64} : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<f32>, tensor<f32>)
  return
}

// -----

// A rank-1 input has no leading dim left to keep.
func.func @layer_norm_rank1(%x: tensor<64xf32>) {
  // expected-error @+2 {{input must be [N, ...] with at least one dim to normalise, got [64]}}
  // expected-error @+1 {{'tcc.layer_norm' op failed to infer returned types}}
  %0:3 = tcc.layer_norm %x {eps = 1.0e-05 : f64, normalized_dims = 1 : i64} : (tensor<64xf32>) -> (tensor<64xf32>, tensor<f32>, tensor<f32>)
  return
}

// -----

// weight covers only the last dim of the 2 normalised ones.
func.func @layer_norm_weight_shape(%x: tensor<8x4x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+2 {{weight must have shape [4, 16], got [16]}}
  // expected-error @+1 {{'tcc.layer_norm' op failed to infer returned types}}
  %0:3 = tcc.layer_norm %x weight %g {eps = 1.0e-05 : f64, normalized_dims = 2 : i64} : (tensor<8x4x16xf32>, tensor<16xf32>) -> (tensor<8x4x16xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// bias is f16: affine parameters are f32.
func.func @layer_norm_bias_f16(%x: tensor<8x64xf16>, %b: tensor<64xf16>) {
  // expected-error @+2 {{bias must be f32, got 'tensor<64xf16>'}}
  // expected-error @+1 {{'tcc.layer_norm' op failed to infer returned types}}
  %0:3 = tcc.layer_norm %x bias %b {eps = 1.0e-05 : f64, normalized_dims = 1 : i64} : (tensor<8x64xf16>, tensor<64xf16>) -> (tensor<8x64xf16>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// Negative eps.
func.func @layer_norm_negative_eps(%x: tensor<8x64xf32>) {
  // expected-error @+2 {{eps must be positive and finite, got -1.000000e-05}}
  // expected-error @+1 {{'tcc.layer_norm' op failed to infer returned types}}
  %0:3 = tcc.layer_norm %x {eps = -1.0e-05 : f64, normalized_dims = 1 : i64} : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// NaN eps.
func.func @layer_norm_nan_eps(%x: tensor<8x64xf32>) {
  // expected-error @+2 {{eps must be positive and finite, got nan}}
  // expected-error @+1 {{'tcc.layer_norm' op failed to infer returned types}}
  %0:3 = tcc.layer_norm %x {eps = 0x7FF8000000000000 : f64, normalized_dims = 1 : i64} : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// saved_invstd in the input's bf16: statistics are always f32.
func.func @layer_norm_result_type(%x: tensor<8x64xbf16>) {
  // expected-error @+2 {{'tcc.layer_norm' op inferred type(s) 'tensor<8x64xbf16>', 'tensor<8xf32>', 'tensor<8xf32>' are incompatible with return type(s) of operation 'tensor<8x64xbf16>', 'tensor<8xf32>', 'tensor<8xbf16>'}}
  // expected-error @+1 {{'tcc.layer_norm' op failed to infer returned types}}
  %0:3 = tcc.layer_norm %x {eps = 1.0e-05 : f64, normalized_dims = 1 : i64} : (tensor<8x64xbf16>) -> (tensor<8x64xbf16>, tensor<8xf32>, tensor<8xbf16>)
  return
}

// -----

// Dynamic feature dim.
func.func @layer_norm_dynamic(%x: tensor<8x?xf32>) {
  // expected-error @+1 {{'tcc.layer_norm' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x?xf32>'}}
  %0:3 = tcc.layer_norm %x {eps = 1.0e-05 : f64, normalized_dims = 1 : i64} : (tensor<8x?xf32>) -> (tensor<8x?xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

// Dynamic shape.
func.func @relu_dynamic(%x: tensor<?x16xf32>) {
  // expected-error @+1 {{'tcc.relu' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<?x16xf32>'}}
  %0 = tcc.relu %x : tensor<?x16xf32>
  return
}

// -----

// f64 is not a tcc float type.
func.func @relu_f64(%x: tensor<8x16xf64>) {
  // expected-error @+1 {{'tcc.relu' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x16xf64>'}}
  %0 = tcc.relu %x : tensor<8x16xf64>
  return
}

// -----

// Result shape differs from the operand's (generic form).
func.func @relu_result_type(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.relu' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "tcc.relu"(%x) : (tensor<8x16xf32>) -> tensor<16x8xf32>
  return
}

// -----

// Unranked tensor.
func.func @relu_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{'tcc.relu' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<*xf32>'}}
  %0 = tcc.relu %x : tensor<*xf32>
  return
}

// -----

// i32 elements.
func.func @leaky_relu_i32(%x: tensor<8x16xi32>) {
  // expected-error @+1 {{'tcc.leaky_relu' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x16xi32>'}}
  %0 = tcc.leaky_relu %x {negative_slope = 1.0e-02 : f64} : tensor<8x16xi32>
  return
}

// -----

// negative_slope missing.
func.func @leaky_relu_missing_slope(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.leaky_relu' op requires attribute 'negative_slope'}}
  %0 = tcc.leaky_relu %x : tensor<8x16xf32>
  return
}

// -----

// Result element type differs from the operand's (generic form).
func.func @leaky_relu_result_type(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.leaky_relu' op requires the same type for all operands and results}}
  %0 = "tcc.leaky_relu"(%x) {negative_slope = 1.0e-02 : f64} : (tensor<8x16xf32>) -> tensor<8x16xbf16>
  return
}

// -----

// NaN negative_slope.
func.func @leaky_relu_nan_slope(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.leaky_relu' op negative_slope must be finite}}
  %0 = tcc.leaky_relu %x {negative_slope = 0x7FF8000000000000 : f64} : tensor<8x16xf32>
  return
}

// -----

// f64 elements.
func.func @elu_f64(%x: tensor<8x16xf64>) {
  // expected-error @+1 {{'tcc.elu' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x16xf64>'}}
  %0 = tcc.elu %x {alpha = 1.0 : f64} : tensor<8x16xf64>
  return
}

// -----

// alpha given as f32 rather than f64.
func.func @elu_alpha_f32(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{custom op 'tcc.elu' 'tcc.elu' op attribute 'alpha' failed to satisfy constraint: 64-bit float attribute}}
  %0 = tcc.elu %x {alpha = 1.0 : f32} : tensor<8x16xf32>
  return
}

// -----

// alpha = -inf.
func.func @elu_infinite_alpha(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.elu' op alpha must be finite}}
  %0 = tcc.elu %x {alpha = 0xFFF0000000000000 : f64} : tensor<8x16xf32>
  return
}

// -----

// alpha = 0 divides by zero in exp(x / alpha).
func.func @celu_zero_alpha(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.celu' op alpha must be non-zero}}
  %0 = tcc.celu %x {alpha = 0.0 : f64} : tensor<8x16xf32>
  return
}

// -----

// alpha = -0.0 is zero too.
func.func @celu_negative_zero_alpha(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.celu' op alpha must be non-zero}}
  %0 = tcc.celu %x {alpha = -0.0 : f64} : tensor<8x16xf32>
  return
}

// -----

// alpha = +inf.
func.func @celu_infinite_alpha(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.celu' op alpha must be finite}}
  %0 = tcc.celu %x {alpha = 0x7FF0000000000000 : f64} : tensor<8x16xf32>
  return
}

// -----

// Dynamic shape.
func.func @celu_dynamic(%x: tensor<8x?xf32>) {
  // expected-error @+1 {{'tcc.celu' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x?xf32>'}}
  %0 = tcc.celu %x {alpha = 1.0 : f64} : tensor<8x?xf32>
  return
}

// -----

// approximate is "none" or "tanh".
func.func @gelu_bad_approximate(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.gelu' op approximate must be "none" or "tanh", got "sigmoid"}}
  %0 = tcc.gelu %x {approximate = "sigmoid"} : tensor<8x16xf32>
  return
}

// -----

// approximate is a string, not a bool.
func.func @gelu_approximate_not_string(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{custom op 'tcc.gelu' 'tcc.gelu' op attribute 'approximate' failed to satisfy constraint: string attribute}}
  %0 = tcc.gelu %x {approximate = true} : tensor<8x16xf32>
  return
}

// -----

// i64 elements.
func.func @silu_i64(%x: tensor<8x16xi64>) {
  // expected-error @+1 {{'tcc.silu' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x16xi64>'}}
  %0 = tcc.silu %x : tensor<8x16xi64>
  return
}

// -----

// Dynamic shape.
func.func @sigmoid_dynamic(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{'tcc.sigmoid' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<?x?xf32>'}}
  %0 = tcc.sigmoid %x : tensor<?x?xf32>
  return
}

// -----

// ui8 elements.
func.func @tanh_ui8(%x: tensor<8x16xui8>) {
  // expected-error @+1 {{'tcc.tanh' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x16xui8>'}}
  %0 = tcc.tanh %x : tensor<8x16xui8>
  return
}

// -----

// factor given as an integer.
func.func @scale_integer_factor(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{custom op 'tcc.scale' 'tcc.scale' op attribute 'factor' failed to satisfy constraint: 64-bit float attribute}}
  %0 = tcc.scale %x {factor = 2 : i64} : tensor<8x16xf32>
  return
}

// -----

// Result shape differs from the operand's (generic form).
func.func @scale_result_type(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.scale' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "tcc.scale"(%x) {factor = 2.0 : f64} : (tensor<8x16xf32>) -> tensor<8x8xf32>
  return
}

// -----

// NaN factor.
func.func @scale_nan_factor(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.scale' op factor must be finite}}
  %0 = tcc.scale %x {factor = 0x7FF8000000000000 : f64} : tensor<8x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// Input is rank 3.
func.func @max_pool2d_input_rank(%x: tensor<16x32x32xf32>) {
  // expected-error @+2 {{input must be [N, C, H, W], got [16, 32, 32]}}
  // expected-error @+1 {{'tcc.max_pool2d' op failed to infer returned types}}
  %0 = tcc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<16x32x32xf32>) -> tensor<16x16x16xf32>
  return
}

// -----

// Kernel has 1 entry instead of [h, w].
func.func @max_pool2d_kernel_entries(%x: tensor<8x16x32x32xf32>) {
  // expected-error @+2 {{'kernel' must have 2 entries [h, w], got 1}}
  // expected-error @+1 {{'tcc.max_pool2d' op failed to infer returned types}}
  %0 = tcc.max_pool2d %x {kernel = array<i64: 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
  return
}

// -----

// Zero kernel.
func.func @max_pool2d_zero_kernel(%x: tensor<8x16x32x32xf32>) {
  // expected-error @+2 {{'kernel' must be positive and at most 16777216, got [0, 2]}}
  // expected-error @+1 {{'tcc.max_pool2d' op failed to infer returned types}}
  %0 = tcc.max_pool2d %x {kernel = array<i64: 0, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
  return
}

// -----

// Negative stride.
func.func @max_pool2d_negative_stride(%x: tensor<8x16x32x32xf32>) {
  // expected-error @+2 {{'stride' must be positive and at most 16777216, got [2, -2]}}
  // expected-error @+1 {{'tcc.max_pool2d' op failed to infer returned types}}
  %0 = tcc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, -2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
  return
}

// -----

// Negative padding.
func.func @max_pool2d_negative_padding(%x: tensor<8x16x32x32xf32>) {
  // expected-error @+2 {{'padding' must be non-negative and at most 16777216, got [-1, 0]}}
  // expected-error @+1 {{'tcc.max_pool2d' op failed to infer returned types}}
  %0 = tcc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: -1, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x15x16xf32>
  return
}

// -----

// Padding 2^62: 2 * padding would overflow int64.
func.func @max_pool2d_huge_padding(%x: tensor<8x16x32x32xf32>) {
  // expected-error @+2 {{'padding' must be non-negative and at most 16777216, got [4611686018427387904, 0]}}
  // expected-error @+1 {{'tcc.max_pool2d' op failed to infer returned types}}
  %0 = tcc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 4611686018427387904, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
  return
}

// -----

// Padding 2 is more than half the kernel 3.
func.func @max_pool2d_padding_over_half_kernel(%x: tensor<8x16x32x32xf32>) {
  // expected-error @+2 {{padding [2, 2] must be at most half the kernel [3, 3]}}
  // expected-error @+1 {{'tcc.max_pool2d' op failed to infer returned types}}
  %0 = tcc.max_pool2d %x {kernel = array<i64: 3, 3>, padding = array<i64: 2, 2>, stride = array<i64: 1, 1>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x34x34xf32>
  return
}

// -----

// Kernel 5x5 on a 4x4 input.
func.func @max_pool2d_kernel_too_large(%x: tensor<8x16x4x4xf32>) {
  // expected-error @+2 {{kernel [5, 5] is larger than the padded input (input [8, 16, 4, 4], padding [0, 0])}}
  // expected-error @+1 {{'tcc.max_pool2d' op failed to infer returned types}}
  %0 = tcc.max_pool2d %x {kernel = array<i64: 5, 5>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<8x16x4x4xf32>) -> tensor<8x16x1x1xf32>
  return
}

// -----

// Result uses ceil mode: floor((7 - 2) / 2) + 1 = 3, not 4.
func.func @max_pool2d_result_type(%x: tensor<8x16x7x7xf32>) {
  // expected-error @+2 {{'tcc.max_pool2d' op inferred type(s) 'tensor<8x16x3x3xf32>' are incompatible with return type(s) of operation 'tensor<8x16x4x4xf32>'}}
  // expected-error @+1 {{'tcc.max_pool2d' op failed to infer returned types}}
  %0 = tcc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x7x7xf32>) -> tensor<8x16x4x4xf32>
  return
}

// -----

// i64 elements.
func.func @max_pool2d_i64(%x: tensor<8x16x32x32xi64>) {
  // expected-error @+1 {{'tcc.max_pool2d' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x16x32x32xi64>'}}
  %0 = tcc.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x32x32xi64>) -> tensor<8x16x16x16xi64>
  return
}

// -----

// Input is rank 2.
func.func @avg_pool2d_input_rank(%x: tensor<8x16xf32>) {
  // expected-error @+2 {{input must be [N, C, H, W], got [8, 16]}}
  // expected-error @+1 {{'tcc.avg_pool2d' op failed to infer returned types}}
  %0 = tcc.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Padding 1 is more than half the kernel 1.
func.func @avg_pool2d_padding_over_half_kernel(%x: tensor<8x16x32x32xf32>) {
  // expected-error @+2 {{padding [1, 0] must be at most half the kernel [1, 1]}}
  // expected-error @+1 {{'tcc.avg_pool2d' op failed to infer returned types}}
  %0 = tcc.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 1, 1>, padding = array<i64: 1, 0>, stride = array<i64: 1, 1>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x34x32xf32>
  return
}

// -----

// Kernel 4 wider than the padded input width 1 + 2 * 1.
func.func @avg_pool2d_kernel_too_large(%x: tensor<8x16x8x1xf32>) {
  // expected-error @+2 {{kernel [4, 4] is larger than the padded input (input [8, 16, 8, 1], padding [1, 1])}}
  // expected-error @+1 {{'tcc.avg_pool2d' op failed to infer returned types}}
  %0 = tcc.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 4, 4>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<8x16x8x1xf32>) -> tensor<8x16x7x1xf32>
  return
}

// -----

// Zero stride.
func.func @avg_pool2d_zero_stride(%x: tensor<8x16x32x32xf32>) {
  // expected-error @+2 {{'stride' must be positive and at most 16777216, got [0, 0]}}
  // expected-error @+1 {{'tcc.avg_pool2d' op failed to infer returned types}}
  %0 = tcc.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 0, 0>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
  return
}

// -----

// count_include_pad missing.
func.func @avg_pool2d_missing_count_include_pad(%x: tensor<8x16x32x32xf32>) {
  // expected-error @+1 {{'tcc.avg_pool2d' op requires attribute 'count_include_pad'}}
  %0 = tcc.avg_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32>
  return
}

// -----

// Result element type differs from the input's.
func.func @avg_pool2d_result_type(%x: tensor<8x16x32x32xf16>) {
  // expected-error @+2 {{'tcc.avg_pool2d' op inferred type(s) 'tensor<8x16x16x16xf16>' are incompatible with return type(s) of operation 'tensor<8x16x16x16xf32>'}}
  // expected-error @+1 {{'tcc.avg_pool2d' op failed to infer returned types}}
  %0 = tcc.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<8x16x32x32xf16>) -> tensor<8x16x16x16xf32>
  return
}

// -----

// Input is already flat.
func.func @global_avg_pool_input_rank(%x: tensor<8x64xf32>) {
  // expected-error @+2 {{input must be [N, C, H, W], got [8, 64]}}
  // expected-error @+1 {{'tcc.global_avg_pool' op failed to infer returned types}}
  %0 = tcc.global_avg_pool %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return
}

// -----

// Result keeps the 1x1 spatial dims; tcc's is flat [N, C].
func.func @global_avg_pool_result_type(%x: tensor<8x64x7x7xf32>) {
  // expected-error @+2 {{'tcc.global_avg_pool' op inferred type(s) 'tensor<8x64xf32>' are incompatible with return type(s) of operation 'tensor<8x64x1x1xf32>'}}
  // expected-error @+1 {{'tcc.global_avg_pool' op failed to infer returned types}}
  %0 = tcc.global_avg_pool %x : (tensor<8x64x7x7xf32>) -> tensor<8x64x1x1xf32>
  return
}

// -----

// Input is rank 5.
func.func @global_max_pool_input_rank(%x: tensor<8x64x4x7x7xf32>) {
  // expected-error @+2 {{input must be [N, C, H, W], got [8, 64, 4, 7, 7]}}
  // expected-error @+1 {{'tcc.global_max_pool' op failed to infer returned types}}
  %0 = tcc.global_max_pool %x : (tensor<8x64x4x7x7xf32>) -> tensor<8x64xf32>
  return
}

// -----

// Dynamic spatial dims.
func.func @global_max_pool_dynamic(%x: tensor<8x64x?x?xf32>) {
  // expected-error @+1 {{'tcc.global_max_pool' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x64x?x?xf32>'}}
  %0 = tcc.global_max_pool %x : (tensor<8x64x?x?xf32>) -> tensor<8x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Binary elementwise
//===----------------------------------------------------------------------===//

// Shapes differ (no broadcasting).
func.func @add_shape_mismatch(%a: tensor<8x16xf32>, %b: tensor<1x16xf32>) {
  // expected-error @+1 {{operands must have the same shape and element type, got 'tensor<8x16xf32>' ([8, 16]) and 'tensor<1x16xf32>' ([1, 16])}}
  %0 = tcc.add %a, %b : tensor<8x16xf32>, tensor<1x16xf32>
  return
}

// -----

// Element types differ.
func.func @add_element_types(%a: tensor<8x16xf32>, %b: tensor<8x16xbf16>) {
  // expected-error @+1 {{operands must have the same shape and element type, got 'tensor<8x16xf32>' ([8, 16]) and 'tensor<8x16xbf16>' ([8, 16])}}
  %0 = tcc.add %a, %b : tensor<8x16xf32>, tensor<8x16xbf16>
  return
}

// -----

// i64 operands: not a tcc float type.
func.func @add_i64(%a: tensor<8x16xi64>, %b: tensor<8x16xi64>) {
  // expected-error @+1 {{'tcc.add' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x16xi64>'}}
  %0 = tcc.add %a, %b : tensor<8x16xi64>, tensor<8x16xi64>
  return
}

// -----

// Result type disagrees with the operands' (generic form).
func.func @add_result_type(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{'tcc.add' op inferred type(s) 'tensor<8x16xf32>' are incompatible with return type(s) of operation 'tensor<8x16xf16>'}}
  // expected-error @+1 {{'tcc.add' op failed to infer returned types}}
  %0 = "tcc.add"(%a, %b) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf16>
  return
}

// -----

// Ranks differ.
func.func @mul_rank_mismatch(%a: tensor<8x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{operands must have the same shape and element type, got 'tensor<8x16xf32>' ([8, 16]) and 'tensor<16xf32>' ([16])}}
  %0 = tcc.mul %a, %b : tensor<8x16xf32>, tensor<16xf32>
  return
}

// -----

// Dynamic shapes.
func.func @mul_dynamic(%a: tensor<?x16xf32>, %b: tensor<?x16xf32>) {
  // expected-error @+1 {{'tcc.mul' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<?x16xf32>'}}
  %0 = tcc.mul %a, %b : tensor<?x16xf32>, tensor<?x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

// A single input.
func.func @concat_one_input(%a: tensor<8x16xf32>) {
  // expected-error @+2 {{needs at least 2 inputs, got 1}}
  // expected-error @+1 {{'tcc.concat' op failed to infer returned types}}
  %0 = tcc.concat %a {axis = 1 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// axis 2 is out of range for rank 2.
func.func @concat_axis_out_of_range(%a: tensor<8x16xf32>, %b: tensor<8x8xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{'tcc.concat' op failed to infer returned types}}
  %0 = tcc.concat %a, %b {axis = 2 : i64} : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<8x24xf32>
  return
}

// -----

// Negative axis (the frontend normalises PyTorch's -1).
func.func @concat_negative_axis(%a: tensor<8x16xf32>, %b: tensor<8x8xf32>) {
  // expected-error @+2 {{axis -1 is out of range for rank 2}}
  // expected-error @+1 {{'tcc.concat' op failed to infer returned types}}
  %0 = tcc.concat %a, %b {axis = -1 : i64} : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<8x24xf32>
  return
}

// -----

// Inputs disagree on dim 0, which is not the axis.
func.func @concat_dims_disagree(%a: tensor<8x16xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+2 {{inputs must agree on every dim but axis 1 and on the element type, got 'tensor<8x16xf32>' and 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'tcc.concat' op failed to infer returned types}}
  %0 = tcc.concat %a, %b {axis = 1 : i64} : (tensor<8x16xf32>, tensor<4x8xf32>) -> tensor<8x24xf32>
  return
}

// -----

// Inputs have different ranks.
func.func @concat_ranks_disagree(%a: tensor<8x16xf32>, %b: tensor<8x8x1xf32>) {
  // expected-error @+2 {{inputs must agree on every dim but axis 1 and on the element type, got 'tensor<8x16xf32>' and 'tensor<8x8x1xf32>'}}
  // expected-error @+1 {{'tcc.concat' op failed to infer returned types}}
  %0 = tcc.concat %a, %b {axis = 1 : i64} : (tensor<8x16xf32>, tensor<8x8x1xf32>) -> tensor<8x24xf32>
  return
}

// -----

// Inputs have different element types.
func.func @concat_element_types(%a: tensor<8x16xf32>, %b: tensor<8x8xf16>) {
  // expected-error @+2 {{inputs must agree on every dim but axis 1 and on the element type, got 'tensor<8x16xf32>' and 'tensor<8x8xf16>'}}
  // expected-error @+1 {{'tcc.concat' op failed to infer returned types}}
  %0 = tcc.concat %a, %b {axis = 1 : i64} : (tensor<8x16xf32>, tensor<8x8xf16>) -> tensor<8x24xf32>
  return
}

// -----

// Result concatenates along the wrong axis.
func.func @concat_result_type(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{'tcc.concat' op inferred type(s) 'tensor<8x32xf32>' are incompatible with return type(s) of operation 'tensor<16x16xf32>'}}
  // expected-error @+1 {{'tcc.concat' op failed to infer returned types}}
  %0 = tcc.concat %a, %b {axis = 1 : i64} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  return
}

// -----

// i32 is not a tcc element type.
func.func @concat_i32(%a: tensor<8x16xi32>, %b: tensor<8x16xi32>) {
  // expected-error @+1 {{'tcc.concat' op operand #0 must be variadic of statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 8-bit unsigned integer, but got 'tensor<8x16xi32>'}}
  %0 = tcc.concat %a, %b {axis = 1 : i64} : (tensor<8x16xi32>, tensor<8x16xi32>) -> tensor<8x32xi32>
  return
}

// -----

// A scalar has no batch dim.
func.func @flatten_scalar(%x: tensor<f32>) {
  // expected-error @+2 {{input must be [N, ...] with at least one dim after the batch, got []}}
  // expected-error @+1 {{'tcc.flatten' op failed to infer returned types}}
  %0 = tcc.flatten %x : (tensor<f32>) -> tensor<1xf32>
  return
}

// -----

// A rank-1 input has no dim after the batch to flatten.
func.func @flatten_rank1(%x: tensor<8xf32>) {
  // expected-error @+2 {{input must be [N, ...] with at least one dim after the batch, got [8]}}
  // expected-error @+1 {{'tcc.flatten' op failed to infer returned types}}
  %0 = tcc.flatten %x : (tensor<8xf32>) -> tensor<8x1xf32>
  return
}

// -----

// flatten keeps the batch dim: the result is [8, 64], not [512].
func.func @flatten_result_type(%x: tensor<8x16x2x2xf32>) {
  // expected-error @+2 {{'tcc.flatten' op inferred type(s) 'tensor<8x64xf32>' are incompatible with return type(s) of operation 'tensor<512xf32>'}}
  // expected-error @+1 {{'tcc.flatten' op failed to infer returned types}}
  %0 = tcc.flatten %x : (tensor<8x16x2x2xf32>) -> tensor<512xf32>
  return
}

// -----

// Dynamic shape.
func.func @flatten_dynamic(%x: tensor<8x?x2x2xf32>) {
  // expected-error @+1 {{'tcc.flatten' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 8-bit unsigned integer, but got 'tensor<8x?x2x2xf32>'}}
  %0 = tcc.flatten %x : (tensor<8x?x2x2xf32>) -> tensor<8x?xf32>
  return
}

// -----

// 512 elements cannot become 500.
func.func @reshape_element_count(%x: tensor<8x64xf32>) {
  // expected-error @+2 {{cannot reshape [8, 64] (512 elements) to [8, 4, 16, 2] (1024 elements)}}
  // expected-error @+1 {{'tcc.reshape' op failed to infer returned types}}
  %0 = tcc.reshape %x {shape = array<i64: 8, 4, 16, 2>} : (tensor<8x64xf32>) -> tensor<8x4x16x2xf32>
  return
}

// -----

// No -1 placeholder: every dim is explicit and positive.
func.func @reshape_minus_one(%x: tensor<8x64xf32>) {
  // expected-error @+2 {{shape [8, -1] must have positive dims and fit in 64 bits}}
  // expected-error @+1 {{'tcc.reshape' op failed to infer returned types}}
  %0 = tcc.reshape %x {shape = array<i64: 8, -1>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return
}

// -----

// 2^32 * 2^32 elements do not fit in 64 bits (would wrap to 0).
func.func @reshape_count_overflow(%x: tensor<8x64xf32>) {
  // expected-error @+2 {{shape [4294967296, 4294967296] must have positive dims and fit in 64 bits}}
  // expected-error @+1 {{'tcc.reshape' op failed to infer returned types}}
  %0 = tcc.reshape %x {shape = array<i64: 4294967296, 4294967296>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return
}

// -----

// Result differs from the shape attribute.
func.func @reshape_result_type(%x: tensor<8x64xf32>) {
  // expected-error @+2 {{'tcc.reshape' op inferred type(s) 'tensor<8x4x16xf32>' are incompatible with return type(s) of operation 'tensor<8x16x4xf32>'}}
  // expected-error @+1 {{'tcc.reshape' op failed to infer returned types}}
  %0 = tcc.reshape %x {shape = array<i64: 8, 4, 16>} : (tensor<8x64xf32>) -> tensor<8x16x4xf32>
  return
}

// -----

// f64 elements.
func.func @reshape_f64(%x: tensor<8x64xf64>) {
  // expected-error @+1 {{'tcc.reshape' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 8-bit unsigned integer, but got 'tensor<8x64xf64>'}}
  %0 = tcc.reshape %x {shape = array<i64: 512>} : (tensor<8x64xf64>) -> tensor<512xf64>
  return
}

// -----

// perm repeats dim 1.
func.func @transpose_repeated_dim(%x: tensor<8x16x4x5xf32>) {
  // expected-error @+2 {{perm [0, 1, 1, 3] is not a permutation of the 4 dims of [8, 16, 4, 5]}}
  // expected-error @+1 {{'tcc.transpose' op failed to infer returned types}}
  %0 = tcc.transpose %x {perm = array<i64: 0, 1, 1, 3>} : (tensor<8x16x4x5xf32>) -> tensor<8x16x16x5xf32>
  return
}

// -----

// perm has 3 entries for a rank-4 input.
func.func @transpose_short_perm(%x: tensor<8x16x4x5xf32>) {
  // expected-error @+2 {{perm [0, 2, 1] must have one entry per dim of [8, 16, 4, 5]}}
  // expected-error @+1 {{'tcc.transpose' op failed to infer returned types}}
  %0 = tcc.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<8x16x4x5xf32>) -> tensor<8x4x16xf32>
  return
}

// -----

// Empty perm for a rank-2 input.
func.func @transpose_empty_perm(%x: tensor<8x16xf32>) {
  // expected-error @+2 {{perm [] must have one entry per dim of [8, 16]}}
  // expected-error @+1 {{'tcc.transpose' op failed to infer returned types}}
  %0 = tcc.transpose %x {perm = array<i64>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  return
}

// -----

// perm names dim 4 of a rank-4 input.
func.func @transpose_out_of_range(%x: tensor<8x16x4x5xf32>) {
  // expected-error @+2 {{perm [0, 2, 4, 1] is not a permutation of the 4 dims of [8, 16, 4, 5]}}
  // expected-error @+1 {{'tcc.transpose' op failed to infer returned types}}
  %0 = tcc.transpose %x {perm = array<i64: 0, 2, 4, 1>} : (tensor<8x16x4x5xf32>) -> tensor<8x4x5x16xf32>
  return
}

// -----

// Negative entry.
func.func @transpose_negative(%x: tensor<8x16xf32>) {
  // expected-error @+2 {{perm [-1, 0] is not a permutation of the 2 dims of [8, 16]}}
  // expected-error @+1 {{'tcc.transpose' op failed to infer returned types}}
  %0 = tcc.transpose %x {perm = array<i64: -1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  return
}

// -----

// Result uses the inverse permutation.
func.func @transpose_result_type(%x: tensor<8x16x4x5xf32>) {
  // expected-error @+2 {{'tcc.transpose' op inferred type(s) 'tensor<8x4x5x16xf32>' are incompatible with return type(s) of operation 'tensor<8x5x16x4xf32>'}}
  // expected-error @+1 {{'tcc.transpose' op failed to infer returned types}}
  %0 = tcc.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<8x16x4x5xf32>) -> tensor<8x5x16x4xf32>
  return
}

// -----

// f64 is not a tcc element type.
func.func @cast_to_f64(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.cast' op result #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 8-bit unsigned integer, but got 'tensor<8x16xf64>'}}
  %0 = tcc.cast %x to f64 : (tensor<8x16xf32>) -> tensor<8x16xf64>
  return
}

// -----

// f64 is rejected by cast itself even when the declared result is legal.
func.func @cast_to_f64_element_type(%x: tensor<8x16xf32>) {
  // expected-error @+2 {{element_type must be f32, f16, bf16, i64 or ui8, got 'f64'}}
  // expected-error @+1 {{'tcc.cast' op failed to infer returned types}}
  %0 = tcc.cast %x to f64 : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// i32 is not a tcc element type.
func.func @cast_to_i32(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'tcc.cast' op result #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 8-bit unsigned integer, but got 'tensor<8x16xi32>'}}
  %0 = tcc.cast %x to i32 : (tensor<8x16xf32>) -> tensor<8x16xi32>
  return
}

// -----

// The target must be an element type, not a tensor type.
func.func @cast_to_tensor_type(%x: tensor<8x16xf32>) {
  // expected-error @+2 {{element_type must be f32, f16, bf16, i64 or ui8, got 'tensor<8x16xf16>'}}
  // expected-error @+1 {{'tcc.cast' op failed to infer returned types}}
  %0 = tcc.cast %x to tensor<8x16xf16> : (tensor<8x16xf32>) -> tensor<8x16xf16>
  return
}

// -----

// Result element type disagrees with element_type.
func.func @cast_result_type(%x: tensor<8x16xf32>) {
  // expected-error @+2 {{'tcc.cast' op inferred type(s) 'tensor<8x16xbf16>' are incompatible with return type(s) of operation 'tensor<8x16xf16>'}}
  // expected-error @+1 {{'tcc.cast' op failed to infer returned types}}
  %0 = tcc.cast %x to bf16 : (tensor<8x16xf32>) -> tensor<8x16xf16>
  return
}

// -----

// Input is f64.
func.func @cast_from_f64(%x: tensor<8x16xf64>) {
  // expected-error @+1 {{'tcc.cast' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type or 64-bit signless integer or 8-bit unsigned integer, but got 'tensor<8x16xf64>'}}
  %0 = tcc.cast %x to f32 : (tensor<8x16xf64>) -> tensor<8x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Regularisation and probabilities
//===----------------------------------------------------------------------===//

// p = 1 drops everything and divides by zero.
func.func @dropout_p_one(%x: tensor<8x16xf32>, %seed: tensor<i64>) {
  // expected-error @+2 {{p must be in [0, 1), got 1.000000e+00}}
  // expected-error @+1 {{'tcc.dropout' op failed to infer returned types}}
  %0 = tcc.dropout %x, %seed {p = 1.0 : f64, stream = 0 : i64} : (tensor<8x16xf32>, tensor<i64>) -> tensor<8x16xf32>
  return
}

// -----

// Negative p.
func.func @dropout_negative_p(%x: tensor<8x16xf32>, %seed: tensor<i64>) {
  // expected-error @+2 {{p must be in [0, 1), got -1.000000e-01}}
  // expected-error @+1 {{'tcc.dropout' op failed to infer returned types}}
  %0 = tcc.dropout %x, %seed {p = -0.1 : f64, stream = 0 : i64} : (tensor<8x16xf32>, tensor<i64>) -> tensor<8x16xf32>
  return
}

// -----

// The seed is a 0-d i64 tensor, not [1].
func.func @dropout_seed_shape(%x: tensor<8x16xf32>, %seed: tensor<1xi64>) {
  // expected-error @+1 {{'tcc.dropout' op operand #1 must be 0D tensor of 64-bit signless integer values, but got 'tensor<1xi64>'}}
  %0 = tcc.dropout %x, %seed {p = 0.5 : f64, stream = 0 : i64} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x16xf32>
  return
}

// -----

// The seed is i64, not i32.
func.func @dropout_seed_i32(%x: tensor<8x16xf32>, %seed: tensor<i32>) {
  // expected-error @+1 {{'tcc.dropout' op operand #1 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %0 = tcc.dropout %x, %seed {p = 0.5 : f64, stream = 0 : i64} : (tensor<8x16xf32>, tensor<i32>) -> tensor<8x16xf32>
  return
}

// -----

// Result shape differs from the input's.
func.func @dropout_result_type(%x: tensor<8x16xf32>, %seed: tensor<i64>) {
  // expected-error @+2 {{'tcc.dropout' op inferred type(s) 'tensor<8x16xf32>' are incompatible with return type(s) of operation 'tensor<16x8xf32>'}}
  // expected-error @+1 {{'tcc.dropout' op failed to infer returned types}}
  %0 = tcc.dropout %x, %seed {p = 0.5 : f64, stream = 0 : i64} : (tensor<8x16xf32>, tensor<i64>) -> tensor<16x8xf32>
  return
}

// -----

// axis 2 is out of range for rank 2.
func.func @softmax_axis_out_of_range(%x: tensor<8x10xf32>) {
  // expected-error @+2 {{axis 2 is out of range for input [8, 10]}}
  // expected-error @+1 {{'tcc.softmax' op failed to infer returned types}}
  %0 = tcc.softmax %x {axis = 2 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  return
}

// -----

// Negative axis (the frontend normalises PyTorch's -1).
func.func @softmax_negative_axis(%x: tensor<8x10xf32>) {
  // expected-error @+2 {{axis -1 is out of range for input [8, 10]}}
  // expected-error @+1 {{'tcc.softmax' op failed to infer returned types}}
  %0 = tcc.softmax %x {axis = -1 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  return
}

// -----

// Result element type differs.
func.func @softmax_result_type(%x: tensor<8x10xbf16>) {
  // expected-error @+2 {{'tcc.softmax' op inferred type(s) 'tensor<8x10xbf16>' are incompatible with return type(s) of operation 'tensor<8x10xf32>'}}
  // expected-error @+1 {{'tcc.softmax' op failed to infer returned types}}
  %0 = tcc.softmax %x {axis = 1 : i64} : (tensor<8x10xbf16>) -> tensor<8x10xf32>
  return
}

// -----

// axis 5 is out of range for rank 2.
func.func @log_softmax_axis_out_of_range(%x: tensor<8x10xf32>) {
  // expected-error @+2 {{axis 5 is out of range for input [8, 10]}}
  // expected-error @+1 {{'tcc.log_softmax' op failed to infer returned types}}
  %0 = tcc.log_softmax %x {axis = 5 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  return
}

// -----

// f64 elements.
func.func @log_softmax_f64(%x: tensor<8x10xf64>) {
  // expected-error @+1 {{'tcc.log_softmax' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x10xf64>'}}
  %0 = tcc.log_softmax %x {axis = 1 : i64} : (tensor<8x10xf64>) -> tensor<8x10xf64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// Logits are rank 3.
func.func @cross_entropy_logits_rank(%x: tensor<8x10x2xf32>, %labels: tensor<8xi64>) {
  // expected-error @+2 {{logits must be [N, classes], got [8, 10, 2]}}
  // expected-error @+1 {{'tcc.cross_entropy' op failed to infer returned types}}
  %0 = tcc.cross_entropy %x, %labels {label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<8x10x2xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

// 4 labels for a batch of 8.
func.func @cross_entropy_labels_count(%x: tensor<8x10xf32>, %labels: tensor<4xi64>) {
  // expected-error @+2 {{labels must be [8] to match logits [8, 10], got [4]}}
  // expected-error @+1 {{'tcc.cross_entropy' op failed to infer returned types}}
  %0 = tcc.cross_entropy %x, %labels {label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<8x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

// Labels are one-hot [N, K] rather than class indices [N].
func.func @cross_entropy_labels_one_hot(%x: tensor<8x10xf32>, %labels: tensor<8x10xi64>) {
  // expected-error @+2 {{labels must be [8] to match logits [8, 10], got [8, 10]}}
  // expected-error @+1 {{'tcc.cross_entropy' op failed to infer returned types}}
  %0 = tcc.cross_entropy %x, %labels {label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<8x10xf32>, tensor<8x10xi64>) -> tensor<f32>
  return
}

// -----

// Labels are i32, not i64.
func.func @cross_entropy_labels_i32(%x: tensor<8x10xf32>, %labels: tensor<8xi32>) {
  // expected-error @+1 {{'tcc.cross_entropy' op operand #1 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 64-bit signless integer, but got 'tensor<8xi32>'}}
  %0 = tcc.cross_entropy %x, %labels {label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return
}

// -----

// Logits with 0 classes.
func.func @cross_entropy_zero_classes(%x: tensor<8x0xf32>, %labels: tensor<8xi64>) {
  // expected-error @+1 {{'tcc.cross_entropy' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8x0xf32>'}}
  %0 = tcc.cross_entropy %x, %labels {label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<8x0xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

// label_smoothing = 1 leaves no signal.
func.func @cross_entropy_smoothing_one(%x: tensor<8x10xf32>, %labels: tensor<8xi64>) {
  // expected-error @+2 {{label_smoothing must be in [0, 1), got 1.000000e+00}}
  // expected-error @+1 {{'tcc.cross_entropy' op failed to infer returned types}}
  %0 = tcc.cross_entropy %x, %labels {label_smoothing = 1.0 : f64, reduction = "mean"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

// Negative label_smoothing.
func.func @cross_entropy_negative_smoothing(%x: tensor<8x10xf32>, %labels: tensor<8xi64>) {
  // expected-error @+2 {{label_smoothing must be in [0, 1), got -1.000000e-01}}
  // expected-error @+1 {{'tcc.cross_entropy' op failed to infer returned types}}
  %0 = tcc.cross_entropy %x, %labels {label_smoothing = -0.1 : f64, reduction = "mean"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

// reduction "none" (per-sample losses) is not supported.
func.func @cross_entropy_reduction_none(%x: tensor<8x10xf32>, %labels: tensor<8xi64>) {
  // expected-error @+2 {{reduction must be "mean" or "sum", got "none"}}
  // expected-error @+1 {{'tcc.cross_entropy' op failed to infer returned types}}
  %0 = tcc.cross_entropy %x, %labels {label_smoothing = 0.0 : f64, reduction = "none"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

// The loss is an f32 scalar even for bf16 logits.
func.func @cross_entropy_result_bf16(%x: tensor<8x10xbf16>, %labels: tensor<8xi64>) {
  // expected-error @+1 {{'tcc.cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %0 = tcc.cross_entropy %x, %labels {label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<8x10xbf16>, tensor<8xi64>) -> tensor<bf16>
  return
}

// -----

// The loss is a 0-d tensor, not [1].
func.func @cross_entropy_result_shape(%x: tensor<8x10xf32>, %labels: tensor<8xi64>) {
  // expected-error @+1 {{'tcc.cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = tcc.cross_entropy %x, %labels {label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<1xf32>
  return
}

// -----

// input and target shapes differ.
func.func @mse_loss_shape_mismatch(%x: tensor<8x10xf32>, %t: tensor<8x1xf32>) {
  // expected-error @+2 {{input and target must have one type, got 'tensor<8x10xf32>' and 'tensor<8x1xf32>'}}
  // expected-error @+1 {{'tcc.mse_loss' op failed to infer returned types}}
  %0 = tcc.mse_loss %x, %t {reduction = "mean"} : (tensor<8x10xf32>, tensor<8x1xf32>) -> tensor<f32>
  return
}

// -----

// input and target element types differ.
func.func @mse_loss_element_types(%x: tensor<8x10xbf16>, %t: tensor<8x10xf32>) {
  // expected-error @+2 {{input and target must have one type, got 'tensor<8x10xbf16>' and 'tensor<8x10xf32>'}}
  // expected-error @+1 {{'tcc.mse_loss' op failed to infer returned types}}
  %0 = tcc.mse_loss %x, %t {reduction = "mean"} : (tensor<8x10xbf16>, tensor<8x10xf32>) -> tensor<f32>
  return
}

// -----

// reduction "avg" is not "mean".
func.func @mse_loss_bad_reduction(%x: tensor<8x10xf32>, %t: tensor<8x10xf32>) {
  // expected-error @+2 {{reduction must be "mean" or "sum", got "avg"}}
  // expected-error @+1 {{'tcc.mse_loss' op failed to infer returned types}}
  %0 = tcc.mse_loss %x, %t {reduction = "avg"} : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<f32>
  return
}

// -----

// Integer target (class indices) instead of a float tensor.
func.func @mse_loss_i64_target(%x: tensor<8xf32>, %t: tensor<8xi64>) {
  // expected-error @+1 {{'tcc.mse_loss' op operand #1 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 32-bit float or 16-bit float or bfloat16 type, but got 'tensor<8xi64>'}}
  %0 = tcc.mse_loss %x, %t {reduction = "mean"} : (tensor<8xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

// The loss is a scalar, not elementwise.
func.func @mse_loss_result_type(%x: tensor<8x10xf32>, %t: tensor<8x10xf32>) {
  // expected-error @+1 {{'tcc.mse_loss' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<8x10xf32>'}}
  %0 = tcc.mse_loss %x, %t {reduction = "sum"} : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
  return
}

// -----

// classes = 0 (the declared result is non-empty, so the attribute is what fails).
func.func @one_hot_zero_classes(%labels: tensor<8xi64>) {
  // expected-error @+2 {{classes must be in [1, 2147483648], got 0}}
  // expected-error @+1 {{'tcc.one_hot' op failed to infer returned types}}
  %0 = tcc.one_hot %labels {classes = 0 : i64} : (tensor<8xi64>) -> tensor<8x10xf32>
  return
}

// -----

// Negative classes.
func.func @one_hot_negative_classes(%labels: tensor<8xi64>) {
  // expected-error @+2 {{classes must be in [1, 2147483648], got -10}}
  // expected-error @+1 {{'tcc.one_hot' op failed to infer returned types}}
  %0 = tcc.one_hot %labels {classes = -10 : i64} : (tensor<8xi64>) -> tensor<8x10xf32>
  return
}

// -----

// Labels are rank 2.
func.func @one_hot_labels_rank(%labels: tensor<8x1xi64>) {
  // expected-error @+2 {{labels must be [N], got [8, 1]}}
  // expected-error @+1 {{'tcc.one_hot' op failed to infer returned types}}
  %0 = tcc.one_hot %labels {classes = 10 : i64} : (tensor<8x1xi64>) -> tensor<8x10xf32>
  return
}

// -----

// Float labels.
func.func @one_hot_float_labels(%labels: tensor<8xf32>) {
  // expected-error @+1 {{'tcc.one_hot' op operand #0 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 64-bit signless integer, but got 'tensor<8xf32>'}}
  %0 = tcc.one_hot %labels {classes = 10 : i64} : (tensor<8xf32>) -> tensor<8x10xf32>
  return
}

// -----

// Result in the logits' bf16: one_hot is always f32.
func.func @one_hot_result_type(%labels: tensor<8xi64>) {
  // expected-error @+2 {{'tcc.one_hot' op inferred type(s) 'tensor<8x10xf32>' are incompatible with return type(s) of operation 'tensor<8x10xbf16>'}}
  // expected-error @+1 {{'tcc.one_hot' op failed to infer returned types}}
  %0 = tcc.one_hot %labels {classes = 10 : i64} : (tensor<8xi64>) -> tensor<8x10xbf16>
  return
}

// -----

func.func @lr_schedule_too_many_points(%step: tensor<i64>, %n: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{a piecewise_linear schedule needs 2 to 64 points, got 1}}
  %lr = tcc.lr_schedule %step, %n, %n {base_lr = 0.1 : f64, schedule = #tcc.schedule<type = piecewise_linear, unit = step, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [0.0], factors = [1.0]>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<f32>
  return %lr : tensor<f32>
}

// -----

func.func @lr_schedule_points_not_increasing(%step: tensor<i64>, %n: tensor<i64>) -> tensor<f32> {
  // expected-error @+1 {{schedule point 2 must have t starting at 0 and increasing, and a factor >= 0}}
  %lr = tcc.lr_schedule %step, %n, %n {base_lr = 0.1 : f64, schedule = #tcc.schedule<type = piecewise_linear, unit = step, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [0.0, 2.0, 1.0], factors = [1.0, 0.5, 0.0]>} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<f32>
  return %lr : tensor<f32>
}

// -----

func.func @all_reduce_unknown_reduction(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tcc.all_reduce' op reduction must be "sum" or "mean", got "max"}}
  %0 = tcc.all_reduce "max" %g : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The ranks share the global batch evenly.
// expected-error @+1 {{ranks must be >= 1 and divide batch_size, got 3}}
module attributes {tcc.train = #tcc.train<batch_size = 8, epochs = 1.0, seed = 0, drop_last = true,
    optimizer = <type = sgd, lr = 0.1, weight_decay = 0.0, momentum = 0.0, dampening = 0.0, nesterov = false, momentum_of = gradient,
      beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08>,
    schedule = <type = constant, unit = epoch, count_from = 0, step_size = 1.0, gamma = 0.1, warmup = 0.0, min_factor = 0.0, pct_start = 0.3, div_factor = 25.0, final_div_factor = 10000.0, anneal = cos, times = [], factors = []>,
    precision = <kind = fp32, storage = pure>, accumulate = 1, deterministic = false, ranks = 3>} {
}

// -----

// A synchronised batch norm's statistics come as a pair.
func.func @sync_bn_one_sum(%x: tensor<8x4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %s: tensor<4xf64>) {
  // expected-error @+2 {{statistics need both the sum and the squared deviations}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %a, %b, %c, %d = "tcc.batch_norm"(%x, %m, %v, %s) {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64, ranks = 2 : i64, operandSegmentSizes = array<i32: 1, 0, 0, 1, 1, 1, 0>} : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>) -> (tensor<8x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Ghost batches stay within a rank: no statistics over the ranks.
func.func @sync_bn_ghost(%x: tensor<8x4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %s: tensor<4xf64>) {
  // expected-error @+2 {{statistics over the ranks need ghost_batch 0 (a ghost batch stays within a rank), got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %a, %b, %c, %d = tcc.batch_norm %x running %m, %v statistics %s, %s {eps = 1.0e-05 : f64, ghost_batch = 2 : i64, momentum = 1.0e-01 : f64, ranks = 2 : i64} : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xf64>) -> (tensor<8x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// ranks without the ranks' statistics would be ignored.
func.func @sync_bn_ranks_alone(%x: tensor<8x4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  // expected-error @+2 {{ranks 2 needs the statistics of those ranks}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %a, %b, %c, %d = tcc.batch_norm %x running %m, %v {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64, ranks = 2 : i64} : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<8x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @sync_bn_statistics_shape(%x: tensor<8x4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %s: tensor<5xf64>) {
  // expected-error @+2 {{statistics must have shape [4], got [5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %a, %b, %c, %d = tcc.batch_norm %x running %m, %v statistics %s, %s {eps = 1.0e-05 : f64, ghost_batch = 0 : i64, momentum = 1.0e-01 : f64, ranks = 2 : i64} : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<5xf64>, tensor<5xf64>) -> (tensor<8x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// The sums are f64, as the kernels accumulate them.
func.func @sync_bn_f32_sums(%x: tensor<8x4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{operand #1 must be statically shaped non-empty tensor (dims <= 2^31, elements <= 2^48) of 64-bit float}}
  %q = tcc.batch_norm_sums %x centered %s {ranks = 2 : i64} : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<4xf64>
  return
}

// -----

func.func @sync_bn_sums_ranks(%x: tensor<8x4xf32>) {
  // expected-error @+2 {{ranks must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %q = tcc.batch_norm_sums %x {ranks = 0 : i64} : (tensor<8x4xf32>) -> tensor<4xf64>
  return
}

// -----

func.func @sync_bn_backward_sums_shape(%dy: tensor<8x4xf32>, %x: tensor<8x4xf32>, %m: tensor<1x4xf32>, %t: tensor<4x2xf64>) {
  // expected-error @+2 {{sums must have shape [2, 4], got [4, 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %dx = tcc.batch_norm_backward_input %dy, %x saved %m, %m sums %t {ranks = 2 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<4x2xf64>) -> tensor<8x4xf32>
  return
}

// -----

// A rank's chunk of 30 values over 4 ranks is 8 values.
func.func @shard_wrong_chunk(%w: tensor<10x3xf32>) {
  // expected-error @+1 {{'tcc.shard' op the chunk of 'tensor<10x3xf32>' over 4 ranks must be 'tensor<8xf32>', got 'tensor<7xf32>'}}
  %s = tcc.shard %w {ranks = 4 : i64} : tensor<10x3xf32> -> tensor<7xf32>
  return
}

// -----

func.func @all_gather_wrong_whole(%s: tensor<8xf32>) {
  // expected-error @+1 {{'tcc.all_gather' op the chunk of 'tensor<40xf32>' over 4 ranks must be 'tensor<10xf32>', got 'tensor<8xf32>'}}
  %w = tcc.all_gather %s {ranks = 4 : i64} : tensor<8xf32> -> tensor<40xf32>
  return
}

// -----

func.func @reduce_scatter_ranks(%g: tensor<8xf32>) {
  // expected-error @+1 {{'tcc.reduce_scatter' op ranks must be >= 1, got 0}}
  %s = tcc.reduce_scatter %g {ranks = 0 : i64} : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reduce_scatter_counts(%g: tensor<8xf32>, %h: tensor<8xf32>) {
  // expected-error @+1 {{'tcc.reduce_scatter' op needs one result per operand, and at least one}}
  %s = tcc.reduce_scatter %g, %h {ranks = 2 : i64} : tensor<8xf32>, tensor<8xf32> -> tensor<4xf32>
  return
}
