// CheckEmitter: the runtime's checker (and ErrBits hook) after each checked operation.

#include "numfuzz-pass.h"

#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

namespace numfuzz_pass {

void laneFloats(IRBuilder<> &B, const CheckPlan &P, unsigned K, Value *Ops[3]) {
  Constant *Zero = ConstantFP::get(P.FloatTy, 0.0);
  Ops[0] = Ops[1] = Ops[2] = Zero;
  for (unsigned J = 0; J < P.Floats.size(); ++J)
    Ops[J] = lane(B, P.Floats[J], K);
}

Value *laneResult(IRBuilder<> &B, const CheckPlan &P, Value *Result, unsigned K) {
  if (!Result)
    return ConstantFP::get(P.FloatTy, 0.0);
  Value *R = lane(B, Result, K);
  // The narrowed result of an fptrunc widens back exactly (it is never a signalling NaN), so
  // it travels in the source type.
  if (P.ResultInSourceType)
    R = B.CreateFPExt(R, P.FloatTy);
  return R;
}

Value *laneInt(IRBuilder<> &B, const CheckPlan &P, unsigned K) {
  Type *I64 = B.getInt64Ty();
  return P.Int ? B.CreateSExtOrTrunc(lane(B, P.Int, K), I64) : ConstantInt::get(I64, 0);
}

void CheckEmitter::emit(Function &F, const CheckPlan &P) {
  GlobalVariable *Site = Records.checkSite(F, P);
  Instruction *After = P.Inst->getNextNode();
  if (!After)
    return;
  IRBuilder<> B(After);
  B.SetCurrentDebugLocation(P.Inst->getDebugLoc());
  // In a strictfp function every call and FP operation must be strictfp too: the builder
  // then marks the checker calls and emits the fptrunc result's widening as a constrained
  // fpext (exact, it never raises).
  B.setIsFPConstrained(F.hasFnAttribute(Attribute::StrictFP));
  unsigned Lanes = 1;
  if (auto *VT = dyn_cast<FixedVectorType>(P.Floats[0]->getType()))
    Lanes = VT->getNumElements();
  FunctionCallee Check = checker(P.FloatTy);
  for (unsigned K = 0; K < Lanes; ++K) {
    Value *Ops[3];
    laneFloats(B, P, K, Ops);
    Value *R = laneResult(B, P, P.Result, K);
    Value *Int = laneInt(B, P, K);
    if (P.FloatTy->isX86_FP80Ty()) {
      AllocaInst *Slots = F80.of(F, P.FloatTy);
      Value *Vals[4] = {Ops[0], Ops[1], Ops[2], R};
      for (unsigned J = 0; J < 4; ++J)
        B.CreateStore(Vals[J], F80.slot(B, J));
      B.CreateCall(Check, {Site, Slots, Int});
    } else if (Lanes == 1 && !F.hasFnAttribute(Attribute::StrictFP) && inlinable(P.Op)) {
      emitInlineArith(F, B, P, Site, Check, Ops, Int, R);
    } else {
      B.CreateCall(Check, {Site, Ops[0], Ops[1], Ops[2], Int, R});
    }
  }
}

FunctionCallee CheckEmitter::checker(Type *FloatTy) {
  AttributeList Attrs = IR.hookAttributes();
  Type *VoidTy = Type::getVoidTy(IR.Ctx);
  if (FloatTy->isX86_FP80Ty())
    return IR.M.getOrInsertFunction(NUMFUZZ_SYM_CHECK_F80, FunctionType::get(VoidTy, {IR.PtrTy, IR.PtrTy, IR.I64}, false),
                                    Attrs);
  const char *Name = FloatTy->isFloatTy() ? NUMFUZZ_SYM_CHECK_F32 : NUMFUZZ_SYM_CHECK_F64;
  return IR.M.getOrInsertFunction(
      Name, FunctionType::get(VoidTy, {IR.PtrTy, FloatTy, FloatTy, FloatTy, IR.I64, FloatTy}, false), Attrs);
}

bool CheckEmitter::inlinable(unsigned Op) {
  return Op == NUMFUZZ_OP_FADD || Op == NUMFUZZ_OP_FSUB || Op == NUMFUZZ_OP_FMUL || Op == NUMFUZZ_OP_FDIV;
}

// Almost every f32/f64 `+ - * /` result lies strictly between the smallest normal and the
// largest finite value, or is the exact zero of a zero factor or dividend, where no flag can
// be raised (the runtime's own fast path). There the ErrBits update is done inline — the same
// integer arithmetic on the result's bits as the runtime — and the runtime is called for
// everything else.
//
// The inline update has no branch: it is computed for every result and made harmless with
// selects where it does not apply (a non-normal result stores 0xFF under umin, a site
// without a slot in the map stores into a private sink). On x86-64 the runtime is called
// from an inline asm that tests the verdict itself and calls a register-preserving thunk
// (see runtime/src/preserving.rs), so the check adds no block: SanitizerCoverage, which runs
// after this pass and instruments every new edge (it splits critical edges), adds no guard
// call on the hot path, and no FP register is spilled around a call. Elsewhere the call sits
// in a cold block of its own.
void CheckEmitter::emitInlineArith(Function &F, IRBuilder<> &B, const CheckPlan &P, GlobalVariable *Site,
                                   FunctionCallee Check, Value *Ops[3], Value *Int, Value *R) {
  bool Double = P.FloatTy->isDoubleTy();
  unsigned W = Double ? 64 : 32;
  IntegerType *IntTy = IntegerType::get(IR.Ctx, W);
  uint64_t MinNormal = Double ? 0x0010000000000000ULL : 0x00800000ULL;
  uint64_t MaxFinite = Double ? 0x7FEFFFFFFFFFFFFFULL : 0x7F7FFFFFULL;
  uint64_t AbsMask = Double ? 0x7FFFFFFFFFFFFFFFULL : 0x7FFFFFFFULL;
  errBitsMapOf(F);
  auto Abs = [&](Value *V) { return B.CreateAnd(B.CreateBitCast(V, IntTy), ConstantInt::get(IntTy, AbsMask)); };
  Value *AbsR = Abs(R);
  // MinNormal < |r| < MaxFinite, as one unsigned comparison.
  Value *Normal = B.CreateICmpULT(B.CreateSub(AbsR, ConstantInt::get(IntTy, MinNormal + 1)),
                                  ConstantInt::get(IntTy, MaxFinite - MinNormal - 1));
  // An exact zero: a product with a zero factor (the other finite, or the result would be a
  // NaN), a quotient of a zero dividend by a finite divisor (non-zero, or it would be a NaN).
  // It raises nothing, under flush-to-zero too (its operands are zeros, not flushed tinies),
  // and the runtime would measure only its distance to overflow (and a divisor's to zero):
  // a recurrence that went to zero reached the runtime at every such operation of every step.
  Value *Zero = ConstantInt::get(IntTy, 0);
  Value *ExactZero = B.getFalse();
  if (P.Op == NUMFUZZ_OP_FMUL)
    ExactZero = B.CreateAnd(B.CreateICmpEQ(AbsR, Zero),
                            B.CreateOr(B.CreateICmpEQ(Abs(Ops[0]), Zero), B.CreateICmpEQ(Abs(Ops[1]), Zero)));
  else if (P.Op == NUMFUZZ_OP_FDIV)
    ExactZero = B.CreateAnd(B.CreateAnd(B.CreateICmpEQ(AbsR, Zero), B.CreateICmpEQ(Abs(Ops[0]), Zero)),
                            B.CreateICmpULT(Abs(Ops[1]), ConstantInt::get(IntTy, MaxFinite + 1)));
  Value *Quiet = B.CreateOr(Normal, ExactZero);
  ErrBitsTarget T = errBitsTarget(B, Site);
  Constant *Unmeasured = ConstantInt::get(IR.I8, 0xFF);
  // ErrBits = bit length of a (positive) distance in ordered-float positions, measured where
  // `Measured` holds. There the distance is at least 1, so ctlz may treat 0 as poison (a
  // poison operand in select's other arm does not reach its result).
  auto Lower = [&](unsigned Kind, Value *Distance, Value *Measured) {
    Value *Len =
        B.CreateSub(ConstantInt::get(IntTy, W), B.CreateBinaryIntrinsic(Intrinsic::ctlz, Distance, B.getTrue()));
    Value *EB = B.CreateSelect(Measured, B.CreateTrunc(Len, IR.I8), Unmeasured);
    Value *Ptr = B.CreateConstGEP1_64(IR.I8, T.Base, Kind);
    // umin on 32 bits: x86 has a cmov for those, not for bytes.
    Value *Old = B.CreateZExt(B.CreateLoad(IR.I8, Ptr), IR.I32);
    B.CreateStore(B.CreateTrunc(B.CreateBinaryIntrinsic(Intrinsic::umin, Old, B.CreateZExt(EB, IR.I32)), IR.I8), Ptr);
  };
  // A zero is as far from overflowing as a result can be; it has no distance to underflow.
  Lower(NUMFUZZ_KIND_OVERFLOW, B.CreateSub(ConstantInt::get(IntTy, MaxFinite), AbsR), Quiet);
  Lower(NUMFUZZ_KIND_UNDERFLOW, B.CreateSub(AbsR, ConstantInt::get(IntTy, MinNormal)), Normal);
  // A normal quotient, or an exact zero one, means a finite non-zero divisor: its distance to zero.
  if (P.Op == NUMFUZZ_OP_FDIV)
    Lower(NUMFUZZ_KIND_DIVBYZERO, Abs(Ops[1]), Quiet);

  Value *Slow = B.CreateNot(B.CreateAnd(Quiet, T.Fits));
  if (IR.preservingCallsWork(F)) {
    callPreserving(F, B, P, Slow, T.Base, Site, Ops, Int, R);
    return;
  }
  MDNode *Unlikely = MDBuilder(IR.Ctx).createBranchWeights(1, 1000);
  Instruction *SlowTerm = SplitBlockAndInsertIfThen(Slow, &*B.GetInsertPoint(), false, Unlikely);
  IRBuilder<> SlowB(SlowTerm);
  SlowB.SetCurrentDebugLocation(B.getCurrentDebugLocation());
  SlowB.CreateCall(Check, {Site, Ops[0], Ops[1], Ops[2], Int, R});
}

// The site's slot in the ErrBits map.
CheckEmitter::ErrBitsTarget CheckEmitter::errBitsTarget(IRBuilder<> &B, GlobalVariable *Site) {
  // A site's slot is numbered once, by the runtime's constructor, before the program runs.
  LoadInst *SlotNo = B.CreateLoad(IR.I32, Site);
  SlotNo->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(IR.Ctx, {}));
  Value *Slot = B.CreateMul(B.CreateZExt(SlotNo, IR.I64), ConstantInt::get(IR.I64, 4));
  // An unnumbered site (u32::MAX) or a map without room (none, or a probing run) falls to
  // the runtime.
  Value *Fits = B.CreateICmpULT(B.CreateAdd(Slot, ConstantInt::get(IR.I64, 3)), FnErrBitsSlots);
  Value *Base = B.CreateSelect(Fits, B.CreateGEP(IR.I8, FnErrBitsMap, Slot), ErrBitsSink);
  return {Base, Fits};
}

// x86-64: the runtime's register-preserving thunk, called from an inline asm where Slow is set.
void CheckEmitter::callPreserving(Function &F, IRBuilder<> &B, const CheckPlan &P, Value *Slow, Value *Base,
                                  GlobalVariable *Site, Value *Ops[3], Value *Int, Value *R) {
  bool Double = P.FloatTy->isDoubleTy();
  std::string Asm = std::string("testl $1, $1\n\tjz 1f\n\tcall ") +
                    (Double ? NUMFUZZ_SYM_CHECK_F64_PRESERVING : NUMFUZZ_SYM_CHECK_F32_PRESERVING) + "@PLT\n1:";
  noRedZone(F);
  // Operand 0: the site's four ErrBits slots, which the runtime may lower (so that no
  // load of them is moved across the call). Then the verdict and the checker's arguments
  // in their SysV registers.
  // r10 and r11 are clobbered: a call through the PLT from a shared object may go through
  // the dynamic linker's lazy resolver, which uses them.
  std::string Constraints =
      "=*m,r,{rdi},{xmm0},{xmm1},{xmm2},{rsi},{xmm3},~{r10},~{r11},~{dirflag},~{fpsr},~{flags}";
  Type *VoidTy = Type::getVoidTy(IR.Ctx);
  FunctionType *AsmTy =
      FunctionType::get(VoidTy, {IR.PtrTy, IR.I32, IR.PtrTy, P.FloatTy, P.FloatTy, P.FloatTy, IR.I64, P.FloatTy}, false);
  InlineAsm *IA = InlineAsm::get(AsmTy, Asm, Constraints, /*hasSideEffects=*/true);
  CallInst *Call = B.CreateCall(IA, {Base, B.CreateZExt(Slow, IR.I32), Site, Ops[0], Ops[1], Ops[2], Int, R});
  Call->addParamAttr(0, Attribute::get(IR.Ctx, Attribute::ElementType, ArrayType::get(IR.I8, 4)));
}

// The ErrBits map and its slot count, loaded once at the function's entry (they change only
// between runs), and the module's sink for updates that have no slot.
void CheckEmitter::errBitsMapOf(Function &F) {
  if (!ErrBitsMap) {
    ErrBitsMap =
        new GlobalVariable(IR.M, IR.PtrTy, false, GlobalValue::ExternalLinkage, nullptr, NUMFUZZ_SYM_ERRBITS_MAP);
    ErrBitsSlots =
        new GlobalVariable(IR.M, IR.I64, false, GlobalValue::ExternalLinkage, nullptr, NUMFUZZ_SYM_ERRBITS_SLOTS);
    Type *SinkTy = ArrayType::get(IR.I8, 4);
    ErrBitsSink = new GlobalVariable(IR.M, SinkTy, false, GlobalValue::PrivateLinkage,
                                     ConstantAggregateZero::get(SinkTy), ".numfuzz.errbits_sink");
  }
  if (ErrBitsOwner != &F) {
    IRBuilder<> EntryB(entryPoint(F));
    FnErrBitsMap = EntryB.CreateLoad(IR.PtrTy, ErrBitsMap, "numfuzz.errbits_map");
    FnErrBitsSlots = EntryB.CreateLoad(IR.I64, ErrBitsSlots, "numfuzz.errbits_slots");
    ErrBitsOwner = &F;
  }
}

} // namespace numfuzz_pass
