// TaintHooks: taint builds' value-returning hooks, which stand in for the checked results so
// that the runtime decides the labels DataFlowSanitizer gives them.

#include "numfuzz-pass.h"

namespace numfuzz_pass {

void TaintHooks::emit(Function &F, CheckPlan P) {
  // Operands that an earlier hook replaced are read through it (their labels are the
  // runtime's, not DataFlowSanitizer's plain union).
  for (Value *&V : P.Floats)
    if (auto It = Replaced.find(V); It != Replaced.end())
      V = It->second;
  if (P.Int)
    if (auto It = Replaced.find(P.Int); It != Replaced.end())
      P.Int = It->second;
  GlobalVariable *Site = Records.checkSite(F, P);
  Instruction *After = P.Inst->getNextNode();
  if (!After)
    return;
  Value *Produced = isConversion(P) ? P.Inst : P.Result;
  if (!Produced)
    return;
  // The uses to redirect, taken before the hooks add their own.
  SmallVector<Use *, 8> Uses;
  for (Use &U : Produced->uses())
    Uses.push_back(&U);
  IRBuilder<> B(After);
  B.SetCurrentDebugLocation(P.Inst->getDebugLoc());
  B.setIsFPConstrained(F.hasFnAttribute(Attribute::StrictFP));
  FunctionCallee Hook = hook(P.FloatTy, isConversion(P));
  if (P.FloatTy->isX86_FP80Ty())
    F80.of(F, P.FloatTy);
  // The hooked lanes, put together as Produced was.
  auto *VT = dyn_cast<FixedVectorType>(Produced->getType());
  unsigned Lanes = VT ? VT->getNumElements() : 1;
  Value *New = VT ? static_cast<Value *>(PoisonValue::get(VT)) : nullptr;
  for (unsigned K = 0; K < Lanes; ++K) {
    Value *Out = hookedLane(B, P, Hook, Site, Produced, K);
    New = VT ? B.CreateInsertElement(New, Out, K) : Out;
  }
  for (Use *U : Uses)
    U->set(New);
  Replaced[Produced] = New;
}

// The hook of a result of type FloatTy, or (ToInt) of a conversion from it to an integer.
FunctionCallee TaintHooks::hook(Type *FT, bool ToInt) {
  bool F80 = FT->isX86_FP80Ty();
  const char *Name = FT->isFloatTy() ? (ToInt ? NUMFUZZ_SYM_TAINT_INT_F32 : NUMFUZZ_SYM_TAINT_F32)
                     : FT->isDoubleTy() ? (ToInt ? NUMFUZZ_SYM_TAINT_INT_F64 : NUMFUZZ_SYM_TAINT_F64)
                                        : (ToInt ? NUMFUZZ_SYM_TAINT_INT_F80 : NUMFUZZ_SYM_TAINT_F80);
  FunctionType *HookTy;
  if (ToInt)
    HookTy = FunctionType::get(IR.I64, {IR.PtrTy, F80 ? IR.PtrTy : FT, IR.I64}, false);
  else if (F80)
    HookTy = FunctionType::get(Type::getVoidTy(IR.Ctx), {IR.PtrTy, IR.PtrTy, IR.I64}, false);
  else
    HookTy = FunctionType::get(FT, {IR.PtrTy, FT, FT, FT, IR.I64, FT}, false);
  return IR.M.getOrInsertFunction(Name, HookTy, IR.hookAttributes());
}

// Lane K of Produced (P's result, or a conversion's integer) as the hook returns it. An f80
// hook takes its operands, and returns a float result, through the function's slots.
Value *TaintHooks::hookedLane(IRBuilder<> &B, const CheckPlan &P, FunctionCallee Hook, GlobalVariable *Site,
                              Value *Produced, unsigned K) {
  bool F80Hook = P.FloatTy->isX86_FP80Ty();
  Type *LaneTy = Produced->getType()->getScalarType();
  Value *Ops[3];
  laneFloats(B, P, K, Ops);
  if (isConversion(P)) {
    Value *RI = lane(B, Produced, K);
    RI = P.Op == NUMFUZZ_OP_FPTOSI ? B.CreateSExtOrTrunc(RI, IR.I64) : B.CreateZExtOrTrunc(RI, IR.I64);
    Value *A = Ops[0];
    if (F80Hook) {
      B.CreateStore(A, F80.slot(B, 0));
      A = F80.slot(B, 0);
    }
    return B.CreateTrunc(B.CreateCall(Hook, {Site, A, RI}), LaneTy);
  }
  Value *R = laneResult(B, P, Produced, K);
  Value *Int = laneInt(B, P, K);
  Value *Out;
  if (F80Hook) {
    Value *Vals[4] = {Ops[0], Ops[1], Ops[2], R};
    for (unsigned J = 0; J < 4; ++J)
      B.CreateStore(Vals[J], F80.slot(B, J));
    B.CreateCall(Hook, {Site, F80.array(), Int});
    Out = B.CreateLoad(P.FloatTy, F80.slot(B, 3));
  } else {
    Out = B.CreateCall(Hook, {Site, Ops[0], Ops[1], Ops[2], Int, R});
  }
  // A narrowed result travelled widened; narrowing it back is exact.
  if (P.ResultInSourceType)
    Out = B.CreateFPTrunc(Out, LaneTy);
  return Out;
}

} // namespace numfuzz_pass
