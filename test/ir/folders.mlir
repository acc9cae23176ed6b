// Folders of tcc ops (ir/TccOpFolders.cpp), through the canonicalizer.
// RUN: tcc-opt %s -canonicalize | FileCheck %s

// scale(x, 1) is x.
// CHECK-LABEL: func.func @scale_by_one
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: tcc.scale
// CHECK: return %[[X]] : tensor<8x16xf32>
func.func @scale_by_one(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = tcc.scale %x {factor = 1.0 : f64} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// Also in a low-precision type.
// CHECK-LABEL: func.func @scale_by_one_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xbf16>)
// CHECK-NOT: tcc.scale
// CHECK: return %[[X]] : tensor<4x4xbf16>
func.func @scale_by_one_bf16(%x: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  %0 = tcc.scale %x {factor = 1.0 : f64} : tensor<4x4xbf16>
  return %0 : tensor<4x4xbf16>
}

// scale(x, 0.5) stays.
// CHECK-LABEL: func.func @scale_by_half
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[Y:.*]] = tcc.scale %[[X]] {factor = 5.000000e-01 : f64} : tensor<8x16xf32>
// CHECK: return %[[Y]] : tensor<8x16xf32>
func.func @scale_by_half(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = tcc.scale %x {factor = 0.5 : f64} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// scale(x, -1) stays: only the factor 1 is an identity.
// CHECK-LABEL: func.func @scale_by_minus_one
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[Y:.*]] = tcc.scale %[[X]] {factor = -1.000000e+00 : f64} : tensor<8x16xf32>
// CHECK: return %[[Y]] : tensor<8x16xf32>
func.func @scale_by_minus_one(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = tcc.scale %x {factor = -1.0 : f64} : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// In a chain only the scale by 1 goes; the scale by 0.5 now reads x directly.
// CHECK-LABEL: func.func @scale_chain
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[Y:.*]] = tcc.scale %[[X]] {factor = 5.000000e-01 : f64} : tensor<8x16xf32>
// CHECK-NOT: tcc.scale
// CHECK: return %[[Y]] : tensor<8x16xf32>
func.func @scale_chain(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = tcc.scale %x {factor = 1.0 : f64} : tensor<8x16xf32>
  %1 = tcc.scale %0 {factor = 0.5 : f64} : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// A cast to the element type the value already has is the value.
// CHECK-LABEL: func.func @cast_to_same_type
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK-NOT: tcc.cast
// CHECK: return %[[X]] : tensor<8x16xf32>
func.func @cast_to_same_type(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = tcc.cast %x to f32 : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// Also for integer element types.
// CHECK-LABEL: func.func @cast_ui8_to_ui8
// CHECK-SAME: (%[[X:.*]]: tensor<8x3x2x2xui8>)
// CHECK-NOT: tcc.cast
// CHECK: return %[[X]] : tensor<8x3x2x2xui8>
func.func @cast_ui8_to_ui8(%x: tensor<8x3x2x2xui8>) -> tensor<8x3x2x2xui8> {
  %0 = tcc.cast %x to ui8 : (tensor<8x3x2x2xui8>) -> tensor<8x3x2x2xui8>
  return %0 : tensor<8x3x2x2xui8>
}

// f32 -> bf16 changes the values: it stays.
// CHECK-LABEL: func.func @cast_f32_to_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[Y:.*]] = tcc.cast %[[X]] to bf16 : (tensor<8x16xf32>) -> tensor<8x16xbf16>
// CHECK: return %[[Y]] : tensor<8x16xbf16>
func.func @cast_f32_to_bf16(%x: tensor<8x16xf32>) -> tensor<8x16xbf16> {
  %0 = tcc.cast %x to bf16 : (tensor<8x16xf32>) -> tensor<8x16xbf16>
  return %0 : tensor<8x16xbf16>
}

// A round trip f32 -> bf16 -> f32 loses precision: neither cast folds.
// CHECK-LABEL: func.func @cast_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
// CHECK: %[[H:.*]] = tcc.cast %[[X]] to bf16 : (tensor<8x16xf32>) -> tensor<8x16xbf16>
// CHECK: %[[Y:.*]] = tcc.cast %[[H]] to f32 : (tensor<8x16xbf16>) -> tensor<8x16xf32>
// CHECK: return %[[Y]] : tensor<8x16xf32>
func.func @cast_round_trip(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = tcc.cast %x to bf16 : (tensor<8x16xf32>) -> tensor<8x16xbf16>
  %1 = tcc.cast %0 to f32 : (tensor<8x16xbf16>) -> tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}
