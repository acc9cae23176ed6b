//===- TccPlanAttrs.td - The memory plan as attributes -----*- tablegen -*-===//
//
// What tcc-plan-memory records (the state and scratch arenas, each op's
// placement) and what a target asks of it (an op's library workspace), as
// typed attributes (ir/TccPlan.h reads and writes them). Each verifier
// checks what it can see alone; TccDialect::verifyOperationAttribute
// (ir/TccPlanAttrs.cpp) checks a plan against the IR it is on: offsets and
// sizes within their arena, one entry per result or state argument.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PLAN_ATTRS_TD
#define TCC_PLAN_ATTRS_TD

include "ir/TccDialect.td"
include "mlir/IR/AttrTypeBase.td"

// Byte offsets and slots, printed as `[0, 64, -1]` so that a struct
// parameter after them parses.
def Tcc_I64ArrayParam : ArrayRefParameter<"int64_t", "integers"> {
  let parser = "::mlir::tcc::parseI64ArrayParam($_parser)";
  let printer = "$_printer << '[' << $_self << ']'";
}
def Tcc_OptionalI64ArrayParam : OptionalArrayRefParameter<"int64_t", "integers or none"> {
  let parser = "::mlir::tcc::parseI64ArrayParam($_parser)";
  let printer = "$_printer << '[' << $_self << ']'";
}

class Tcc_PlanAttr<string name, string attrMnemonic> : AttrDef<Tcc_Dialect, name> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Tcc_StateArenaAttr : Tcc_PlanAttr<"StateArena", "state_arena"> {
  let summary = "The state arena: where each state tensor lives";
  let description = [{
    On the module as `tcc.state_arena`, set by tcc-plan-memory: the arena's
    size in bytes and the offset of each `tcc.state` argument of
    `@train_step` (the same slots as `@eval_step`'s), in argument order.
    Offsets are 64-byte aligned and increasing, and each tensor ends before
    the next starts (or the arena ends).

    ```mlir
    module attributes {tcc.state_arena = #tcc.state_arena<bytes = 192, offsets = [0, 64, 128]>}
    ```
  }];
  let parameters = (ins "int64_t":$bytes, Tcc_I64ArrayParam:$offsets);
  let extraClassDeclaration = [{
    /// The bytes of state slot `slot`: up to the next slot or the end.
    int64_t getSlotBytes(size_t slot) const {
      return (slot + 1 < getOffsets().size() ? getOffsets()[slot + 1] : getBytes()) -
             getOffsets()[slot];
    }
  }];
}

def Tcc_ScratchArenaAttr : Tcc_PlanAttr<"ScratchArena", "scratch_arena"> {
  let summary = "A step function's scratch arena";
  let description = [{
    On each planned function as `tcc.scratch_arena`, set by tcc-plan-memory:
    the bytes of scratch the function's values and workspaces take at their
    peak, 64-byte aligned. The placements and workspaces of its ops lie
    within it.

    ```mlir
    func.func @train_step(...) attributes {tcc.scratch_arena = #tcc.scratch_arena<bytes = 4096>}
    ```
  }];
  let parameters = (ins "int64_t":$bytes);
}

def Tcc_PlacementAttr : Tcc_PlanAttr<"Placement", "placement"> {
  let summary = "Where each result of a planned op lives";
  let description = [{
    On each op of a planned function (in its block or a `tcc.micro_batches`
    body) as `tcc.placement`, set by tcc-plan-memory. One entry per result
    in each list: `scratch` is the result's offset in the function's scratch
    arena (64-byte aligned), or -1 for a result that `state` puts in a state
    slot: the slot it updates in place, an index into the module's
    `tcc.state_arena`. `state` is left out when no result is in a slot.
    Every result has exactly one place. A `tcc.flatten` or `tcc.reshape`
    whose scratch offset equals its input's is a view of the input's bytes.

    ```mlir
    %0:2 = tcc.fusion_group "norm_epilogue" {tcc.placement = #tcc.placement<scratch = [0, -1], state = [-1, 3]>} ...
    ```
  }];
  let parameters = (ins Tcc_I64ArrayParam:$scratch, Tcc_OptionalI64ArrayParam:$state);
  let extraClassDeclaration = [{
    /// Result `r`'s offset in scratch, or -1 when it is in a state slot.
    int64_t getScratchOffset(unsigned r) const { return getScratch()[r]; }
    /// The state slot result `r` is updated in place in, or -1.
    int64_t getStateSlot(unsigned r) const { return getState().empty() ? -1 : getState()[r]; }
  }];
}

def Tcc_WorkspaceAttr : Tcc_PlanAttr<"Workspace", "workspace"> {
  let summary = "The scratch an op needs for itself while it runs";
  let description = [{
    On an op or fusion group as `tcc.workspace`: a target's library call
    (a cuDNN or cuBLASLt workspace, a split reduction's partial sums) asks
    for `bytes` (at most 2^48) before planning; tcc-plan-memory adds the
    `offset` in the function's scratch arena (64-byte aligned) where the
    workspace lives while the op runs. In a planned function every
    workspace has its offset, within the arena.

    ```mlir
    %y = tcc.linear %x, %w, %b {tcc.workspace = #tcc.workspace<bytes = 4096, offset = 128>} ...
    ```
  }];
  let parameters = (ins "int64_t":$bytes, OptionalParameter<"std::optional<int64_t>">:$offset);
  let builders = [AttrBuilder<(ins "int64_t":$bytes), [{
    return $_get($_ctxt, bytes, std::nullopt);
  }]>];
}

#endif // TCC_PLAN_ATTRS_TD
