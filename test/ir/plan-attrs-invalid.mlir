// RUN: tcc-opt %s -split-input-file -verify-diagnostics

// A memory plan the planner could not have written (ir/TccPlanAttrs.td):
// each attribute's own verifier, then the plan against the IR it is on
// (TccDialect::verifyOperationAttribute).

//===----------------------------------------------------------------------===//
// #tcc.placement
//===----------------------------------------------------------------------===//

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>} {
  // expected-error @+1 {{scratch offset of result 0 must be -1 or a non-negative multiple of 64, got -64}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [-64]>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>} {
  // expected-error @+1 {{scratch offset of result 0 must be -1 or a non-negative multiple of 64, got 32}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [32]>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

// 64 bytes at 64 end at 128, past an arena of 64.
func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 64>} {
  // expected-error @+1 {{result 0 (64 bytes at 64) ends past the scratch arena of 64 bytes}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [64]>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'tcc.placement' needs the function's scratch arena ('tcc.scratch_arena')}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [0]>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>} {
  // expected-error @+1 {{'tcc.placement' must have an entry per result (1), got 2}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [0, 64]>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>} {
  // expected-error @+1 {{result 0 must have one place: a scratch offset or a state slot}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [-1]>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>} {
  // expected-error @+1 {{result 0 must have one place: a scratch offset or a state slot}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [0], state = [1]>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>} {
  // expected-error @+1 {{state must have an entry per result as scratch has (1), got 2}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [-1], state = [0, 1]>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>} {
  // expected-error @+1 {{'tcc.placement' must be a #tcc.placement, got array<i64: 0>}}
  %a = tcc.relu %x {tcc.placement = array<i64: 0>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

// A state slot the module's arena does not have, and one too small.
module attributes {tcc.state_arena = #tcc.state_arena<bytes = 128, offsets = [0, 64]>} {
func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>} {
  // expected-error @+1 {{result 0 is in state slot 2, which the module's 'tcc.state_arena' does not have}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [-1], state = [2]>} : tensor<16xf32>
  return %a : tensor<16xf32>
}
}

// -----

module attributes {tcc.state_arena = #tcc.state_arena<bytes = 128, offsets = [0, 64]>} {
func.func @f(%x: tensor<32xf32>) -> tensor<32xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 128>} {
  // expected-error @+1 {{result 0 (128 bytes) does not fit state slot 1 (64 bytes)}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [-1], state = [1]>} : tensor<32xf32>
  return %a : tensor<32xf32>
}
}

//===----------------------------------------------------------------------===//
// #tcc.state_arena and #tcc.scratch_arena
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{offset of state slot 1 must be a non-negative multiple of 64, got -64}}
module attributes {tcc.state_arena = #tcc.state_arena<bytes = 128, offsets = [0, -64]>} {
}

// -----

// expected-error @+1 {{state slot 1 at 0 must start after slot 0 at 0}}
module attributes {tcc.state_arena = #tcc.state_arena<bytes = 128, offsets = [0, 0]>} {
}

// -----

// expected-error @+1 {{state slot 1 at 128 is outside the arena of 128 bytes}}
module attributes {tcc.state_arena = #tcc.state_arena<bytes = 128, offsets = [0, 128]>} {
}

// -----

// expected-error @+1 {{bytes must be a non-negative multiple of 64, got 100}}
module attributes {tcc.state_arena = #tcc.state_arena<bytes = 100, offsets = [0]>} {
}

// -----

// Slot 0 of 64 bytes cannot hold @train_step's 128-byte weight.
// expected-error @+1 {{'tcc.state_arena' gives state slot 0 64 bytes at 0, but @train_step's argument 0 takes 128}}
module attributes {tcc.state_arena = #tcc.state_arena<bytes = 128, offsets = [0, 64]>} {
func.func @train_step(%w: tensor<32xf32> {tcc.state = "w"}, %step: tensor<i64> {tcc.state = "step"}) {
  return
}
}

// -----

// expected-error @+1 {{'tcc.state_arena' has 1 offsets for the 2 state arguments of @train_step}}
module attributes {tcc.state_arena = #tcc.state_arena<bytes = 192, offsets = [0]>} {
func.func @train_step(%w: tensor<32xf32> {tcc.state = "w"}, %step: tensor<i64> {tcc.state = "step"}) {
  return
}
}

// -----

// expected-error @+1 {{bytes must be a non-negative multiple of 64, got -64}}
func.func @f() attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = -64>} {
  return
}

//===----------------------------------------------------------------------===//
// #tcc.workspace
//===----------------------------------------------------------------------===//

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>} {
  // expected-error @+1 {{workspace (128 bytes at 192) ends past the scratch arena of 256 bytes}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [0]>, tcc.workspace = #tcc.workspace<bytes = 128, offset = 192>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>} {
  // expected-error @+1 {{offset must be a non-negative multiple of 64, got -64}}
  %a = tcc.relu %x {tcc.workspace = #tcc.workspace<bytes = 128, offset = -64>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

// A planned function places every workspace.
func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 256>} {
  // expected-error @+1 {{'tcc.workspace' of 128 bytes has no offset in the planned function}}
  %a = tcc.relu %x {tcc.placement = #tcc.placement<scratch = [0]>, tcc.workspace = #tcc.workspace<bytes = 128>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'tcc.workspace' has an offset but the function has no scratch arena ('tcc.scratch_arena')}}
  %a = tcc.relu %x {tcc.workspace = #tcc.workspace<bytes = 128, offset = 0>} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{bytes must be in [0, 2^48], got 281474976710657}}
  %a = tcc.relu %x {tcc.workspace = #tcc.workspace<bytes = 281474976710657>} : tensor<16xf32>
  return %a : tensor<16xf32>
}
