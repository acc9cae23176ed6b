//===- TccAttrs.td - Every attribute of the tcc dialect ----*- tablegen -*-===//
//
// One tablegen run over all of the dialect's attributes: it writes the
// dialect's one attribute parser and printer, which two runs would define
// twice.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_ATTRS_TD
#define TCC_ATTRS_TD

include "ir/TccRecipeAttrs.td"
include "ir/TccPlanAttrs.td"

#endif // TCC_ATTRS_TD
