// What split builds' fast runs need from the pass besides the fast copies themselves: the
// barrier before the program's fenv calls, the fast copies' sentinels, which tell the runtime
// when a fast run must be re-run precisely, and the special-result copies' bits, which tell it
// when a re-run would see only what an earlier one saw.

#include "numfuzz-pass.h"

namespace numfuzz_pass {

void guardFenvCalls(ModuleIR &IR, Function &F) {
  static const char *const Lowering[] = {"feclearexcept", "fesetenv", "feholdexcept", "feupdateenv",
                                         "fesetexceptflag"};
  SmallVector<CallBase *, 4> Calls;
  for (BasicBlock &BB : F)
    for (Instruction &I : BB)
      if (auto *CB = dyn_cast<CallBase>(&I))
        if (Function *Callee = CB->getCalledFunction())
          for (const char *Name : Lowering)
            if (Callee->getName() == Name)
              Calls.push_back(CB);
  if (Calls.empty())
    return;
  FunctionCallee Barrier =
      IR.M.getOrInsertFunction(NUMFUZZ_SYM_FENV_BARRIER, FunctionType::get(Type::getVoidTy(IR.Ctx), false));
  for (CallBase *CB : Calls)
    IRBuilder<>(CB).CreateCall(Barrier);
}

// The fast copy's sentinel (runtime/src/precise.rs): a conversion to an integer outside its
// range, whose Invalid x86-64 does not always raise (it converts to a narrow or unsigned
// integer through a wider signed one), sets a function-local bit, and each return ORs it into
// the runtime's __numfuzz_fast_recheck, which makes the runtime re-run the input precisely.
// Branch-free, so the fast copy keeps its blocks (no coverage guard is added) and stays
// vectorisable (the local bit is an OR reduction once promoted to a register).
// libm calls get none: the fast path trusts the libm to raise what Annex F asks for, which
// fast_runs.rs checks against the precise classification (a test after each call of an
// unrollable libm loop kept clang from unrolling it); a spurious flag only costs a re-run.
void FastCopyBits::sentinels(Function &F, ArrayRef<CheckPlan> Plans) {
  SmallVector<const CheckPlan *, 16> Conversions = operations(F, Plans, /*ConversionsOnly=*/true);
  if (Conversions.empty())
    return;
  Type *I1 = Type::getInt1Ty(IR.Ctx);
  IRBuilder<> EB(entryPoint(F));
  AllocaInst *Acc = EB.CreateAlloca(I1, nullptr, "numfuzz.recheck");
  EB.CreateStore(ConstantInt::getFalse(IR.Ctx), Acc);
  eachSpecial(F, Conversions, [&](unsigned, IRBuilder<> &B, Value *Bad) {
    B.CreateStore(B.CreateOr(B.CreateLoad(I1, Acc), Bad), Acc);
  });
  auto *Flag = IR.M.getOrInsertGlobal(NUMFUZZ_SYM_FAST_RECHECK, IR.I8);
  for (BasicBlock &BB : F)
    if (auto *Ret = dyn_cast<ReturnInst>(BB.getTerminator())) {
      IRBuilder<> B(Ret);
      Value *Seen = B.CreateZExt(B.CreateLoad(I1, Acc), IR.I8);
      B.CreateStore(B.CreateOr(B.CreateLoad(IR.I8, Flag), Seen), Flag);
    }
}

bool FastCopyBits::hasSpecials(Function &F, ArrayRef<CheckPlan> Plans) {
  return !operations(F, Plans, /*ConversionsOnly=*/false).empty();
}

// The special-result copy's bits (runtime/src/fast_specials.rs). Every checked operation
// of F has one, set when its result is zero, subnormal, the least normal, infinite or NaN
// and no operand was infinite or NaN (passedOn; a conversion to an integer: when the
// sentinel fires): what an exception leaves at its site
// (Overflow and DivByZero an infinity, Invalid a NaN, Underflow a tiny result, the least
// normal included since x86 detects tininess after rounding). Which sites went special tells
// apart two fast runs that share an edge path and a flag set (`a*b + c*d`, either product
// overflowing), so the runtime skips a precise re-run only where an earlier one saw the same.
// The bits gather in locals (registers once promoted, OR reductions in vectorised loops);
// each return ORs them into this function's words of the module's array and marks the
// module dirty, branch-free like the sentinel.
void FastCopyBits::specialResults(Function &F, ArrayRef<CheckPlan> Plans) {
  SmallVector<const CheckPlan *, 16> Ops = operations(F, Plans, /*ConversionsOnly=*/false);
  if (Ops.empty())
    return;
  if (!Words) {
    // A placeholder, replaced by the array once every function has its words.
    Words = new GlobalVariable(IR.M, IR.I64, false, GlobalValue::InternalLinkage, ConstantInt::get(IR.I64, 0),
                               "numfuzz.fast_specials.placeholder");
    Dirty = new GlobalVariable(IR.M, IR.I8, false, GlobalValue::InternalLinkage, ConstantInt::get(IR.I8, 0),
                               "numfuzz.fast_specials.dirty");
  }
  unsigned FnWords = (Ops.size() + 63) / 64, Base = WordCount;
  WordCount += FnWords;
  SmallVector<AllocaInst *, 2> Acc;
  IRBuilder<> EB(entryPoint(F));
  for (unsigned W = 0; W < FnWords; ++W) {
    Acc.push_back(EB.CreateAlloca(IR.I64, nullptr, "numfuzz.specials"));
    EB.CreateStore(ConstantInt::get(IR.I64, 0), Acc.back());
  }
  eachSpecial(F, Ops, [&](unsigned K, IRBuilder<> &B, Value *Special) {
    Value *Bit =
        B.CreateSelect(Special, ConstantInt::get(IR.I64, uint64_t(1) << (K % 64)), ConstantInt::get(IR.I64, 0));
    AllocaInst *A = Acc[K / 64];
    B.CreateStore(B.CreateOr(B.CreateLoad(IR.I64, A), Bit), A);
  });
  flushWords(F, Acc, Base);
}

void FastCopyBits::finishWords() {
  if (!Words)
    return;
  auto *Ty = ArrayType::get(IR.I64, WordCount);
  auto *Array = new GlobalVariable(IR.M, Ty, false, GlobalValue::InternalLinkage, ConstantAggregateZero::get(Ty),
                                   "numfuzz.fast_specials");
  Words->replaceAllUsesWith(Array);
  Words->eraseFromParent();
  Words = Array;
}

void FastCopyBits::registerWords(IRBuilder<> &B) {
  if (!Words)
    return;
  auto *Ty = FunctionType::get(Type::getVoidTy(IR.Ctx), {IR.PtrTy, IR.I64, IR.PtrTy}, false);
  FunctionCallee Register = IR.M.getOrInsertFunction(NUMFUZZ_SYM_REGISTER_FAST_SPECIALS, Ty);
  B.CreateCall(Register, {Words, ConstantInt::get(IR.I64, WordCount), Dirty});
}

// The checked operations of F among Plans that get a bit: the conversions only (sentinels), or
// also every operation with a float result (special results).
SmallVector<const CheckPlan *, 16> FastCopyBits::operations(Function &F, ArrayRef<CheckPlan> Plans,
                                                           bool ConversionsOnly) {
  SmallVector<const CheckPlan *, 16> Ops;
  for (const CheckPlan &P : Plans)
    if (P.FloatTy && P.Inst->getFunction() == &F && (isConversion(P) || (P.Result && !ConversionsOnly)))
      Ops.push_back(&P);
  return Ops;
}

// Record(K, B, Special) right after the K-th of Ops, where Special (one i1, the lanes ORed)
// says whether it went special: a conversion's argument out of the integer range (the
// sentinel), else a special result. In strictfp functions the compares ignore exceptions:
// they are the pass's, not the program's.
void FastCopyBits::eachSpecial(Function &F, ArrayRef<const CheckPlan *> Ops,
                               function_ref<void(unsigned K, IRBuilder<> &B, Value *Special)> Record) {
  for (unsigned K = 0; K < Ops.size(); ++K) {
    const CheckPlan &P = *Ops[K];
    IRBuilder<> B(P.Inst->getNextNode());
    B.setIsFPConstrained(F.hasFnAttribute(Attribute::StrictFP));
    if (B.getIsFPConstrained())
      B.setDefaultConstrainedExcept(fp::ebIgnore);
    Value *Special = isConversion(P) ? outOfIntRange(B, P) : isSpecial(B, P.Result);
    if (!isConversion(P) && lanesMatch(P))
      Special = B.CreateAnd(Special, B.CreateNot(passedOn(B, P)), "numfuzz.special.made");
    if (isa<VectorType>(Special->getType()))
      Special = B.CreateOrReduce(Special);
    Record(K, B, Special);
  }
}

// V (scalar or vector) is zero, subnormal, the least normal, infinite or NaN. For float and
// double, on the bits: with the sign shifted out, the normal values above the least one are
// one unsigned interval, (least normal, largest], so one subtraction and one compare tell the
// rest (integer registers, which the program's floating-point code leaves free: floating-point
// compares, which the SLP vectoriser paired up, made GSL's hyperg_2F1_luke.numfuzz.specials
// spill its vector registers in every iteration and cost 4x the fast copy). Other types:
// |V| <= least normal (NaN included: unordered) or |V| > largest, quiet compares that raise
// nothing.
Value *FastCopyBits::isSpecial(IRBuilder<> &B, Value *V) {
  Type *Ty = V->getType();
  Type *Scalar = Ty->getScalarType();
  const fltSemantics &Sem = Scalar->getFltSemantics();
  if (Scalar->isFloatTy() || Scalar->isDoubleTy()) {
    unsigned Bits = Scalar->getPrimitiveSizeInBits();
    Type *IntTy = B.getIntNTy(Bits);
    if (auto *VT = dyn_cast<VectorType>(Ty))
      IntTy = VectorType::get(IntTy, VT->getElementCount());
    APInt Least = APFloat::getSmallestNormalized(Sem).bitcastToAPInt();
    APInt Largest = APFloat::getLargest(Sem).bitcastToAPInt();
    // Twice the magnitude's bits; normal above the least: Doubled - 2*(Least+1) <= 2*(Largest-Least-1).
    Value *Doubled = B.CreateShl(B.CreateBitCast(V, IntTy), 1);
    Value *Offset = B.CreateSub(Doubled, ConstantInt::get(IntTy, (Least + 1).shl(1)));
    return B.CreateICmpUGT(Offset, ConstantInt::get(IntTy, (Largest - Least - 1).shl(1)), "numfuzz.special");
  }
  Value *Abs = B.CreateUnaryIntrinsic(Intrinsic::fabs, V);
  Value *Tiny = B.CreateFCmpULE(Abs, ConstantFP::get(Ty, APFloat::getSmallestNormalized(Sem)));
  Value *Huge = B.CreateFCmpOGT(Abs, ConstantFP::get(Ty, APFloat::getLargest(Sem)));
  return B.CreateOr(Tiny, Huge, "numfuzz.special");
}

// Whether P's float operands have its result's lanes (passedOn compares them lane by lane).
bool FastCopyBits::lanesMatch(const CheckPlan &P) {
  auto *ResultLanes = dyn_cast<FixedVectorType>(P.Result->getType());
  for (Value *Op : P.Floats) {
    auto *Lanes = dyn_cast<FixedVectorType>(Op->getType());
    if (bool(Lanes) != bool(ResultLanes) || (Lanes && Lanes->getNumElements() != ResultLanes->getNumElements()))
      return false;
  }
  return !P.Floats.empty();
}

// The lanes of P's result where an operand was infinite or NaN. The special-result bit leaves
// those out, so it marks where a special value was made, from finite operands: an Overflow, a
// DivByZero, an Invalid from finite operands (0/0, sqrt(-1)), an Underflow, an exact zero.
// Keyed on every special result, an infinity carried through a site kept the site in every key
// and in the re-run throttle's fruitless counts, so the run in which that site overflowed
// itself was not re-run while other sites overflowed too: GSL's fermi_dirac.c:1022:55
// (`2.0 * seqn_val * ex.val`, which carries `ex.val`'s infinity in most of fd_asymp's
// overflowing runs) was found in 1 of 2 campaigns of 90 s, at 66 s; with this, in 2 of 2, at
// 6 and 84 s. What it leaves out raises nothing, except an Invalid made from infinities
// (inf - inf, inf * 0): telling those apart needs the result's NaN-ness too, which made
// bessel_Jnu's special-result passes 1.7x slower and its campaigns 0.65x as fast (in line, or
// in a block of its own); this costs no measurable speed. Such an Invalid follows an infinity
// made at another site, which the key holds.
Value *FastCopyBits::passedOn(IRBuilder<> &B, const CheckPlan &P) {
  Value *Widest = nullptr;
  for (Value *Op : P.Floats) {
    Value *Magnitude = magnitudeBits(B, Op);
    if (!Magnitude || Op->getType() != P.Floats.front()->getType())
      return anyNonFinite(B, P);
    Widest = Widest ? B.CreateBinaryIntrinsic(Intrinsic::umax, Widest, Magnitude) : Magnitude;
  }
  Type *Scalar = P.Floats.front()->getType()->getScalarType();
  APInt Inf = APFloat::getInf(Scalar->getFltSemantics()).bitcastToAPInt().shl(1);
  return B.CreateICmpUGE(Widest, ConstantInt::get(Widest->getType(), Inf), "numfuzz.passed_on");
}

// For float and double, V's bits with the sign shifted out (the magnitude's order); null
// for other types.
Value *FastCopyBits::magnitudeBits(IRBuilder<> &B, Value *V) {
  Type *Ty = V->getType();
  Type *Scalar = Ty->getScalarType();
  if (!Scalar->isFloatTy() && !Scalar->isDoubleTy())
    return nullptr;
  Type *IntTy = B.getIntNTy(Scalar->getPrimitiveSizeInBits());
  if (auto *VT = dyn_cast<VectorType>(Ty))
    IntTy = VectorType::get(IntTy, VT->getElementCount());
  return B.CreateShl(B.CreateBitCast(V, IntTy), 1);
}

// Whether any of P's operands' lanes is infinite or NaN, by quiet compares (x86_fp80).
Value *FastCopyBits::anyNonFinite(IRBuilder<> &B, const CheckPlan &P) {
  Value *Any = nullptr;
  for (Value *Op : P.Floats) {
    Value *Abs = B.CreateUnaryIntrinsic(Intrinsic::fabs, Op);
    Value *NonFinite = B.CreateFCmpUGE(Abs, ConstantFP::getInfinity(Op->getType()));
    Any = Any ? B.CreateOr(Any, NonFinite) : NonFinite;
  }
  return Any;
}

// fptosi/fptoui: the argument is NaN or its truncation is outside the N-bit integer range,
// exactly the checker's Invalid (runtime/src/check/conv.rs).
Value *FastCopyBits::outOfIntRange(IRBuilder<> &B, const CheckPlan &P) {
  Value *X = P.Floats[0];
  const fltSemantics &Sem = P.FloatTy->getFltSemantics();
  bool Signed = P.Op == NUMFUZZ_OP_FPTOSI;
  unsigned N = P.Aux, W = N + 2;
  // Valid: X > Lo (exclusive) and X < Hi, with Lo = -2^(N-1) - 1 or -1, Hi = 2^(N-1) or 2^N.
  APInt Lo = Signed ? -APInt::getOneBitSet(W, N - 1) - 1 : -APInt(W, 1);
  APInt Hi = APInt::getOneBitSet(W, Signed ? N - 1 : N);
  APFloat LoF(Sem), HiF(Sem);
  // Rounded up: when Lo is not representable, X > Lo is X >= the next float above it.
  bool LoExact = LoF.convertFromAPInt(Lo, true, APFloat::rmTowardPositive) == APFloat::opOK;
  HiF.convertFromAPInt(Hi, false, APFloat::rmTowardPositive); // a power of two, or +inf
  Value *LoC = ConstantFP::get(X->getType(), LoF), *HiC = ConstantFP::get(X->getType(), HiF);
  Value *AboveLo = LoExact ? B.CreateFCmpOGT(X, LoC) : B.CreateFCmpOGE(X, LoC);
  return B.CreateNot(B.CreateAnd(AboveLo, B.CreateFCmpOLT(X, HiC)), "numfuzz.sentinel");
}

// At each return and resume, F's bits ORed into its words of the module's array (from Base)
// and the module's dirty byte set if any is.
void FastCopyBits::flushWords(Function &F, ArrayRef<AllocaInst *> Acc, unsigned Base) {
  for (BasicBlock &BB : F) {
    Instruction *T = BB.getTerminator();
    if (!isa<ReturnInst>(T) && !isa<ResumeInst>(T))
      continue;
    IRBuilder<> B(T);
    Value *Any = ConstantInt::get(IR.I64, 0);
    for (unsigned W = 0; W < Acc.size(); ++W) {
      Value *Bits = B.CreateLoad(IR.I64, Acc[W]);
      Value *Word = B.CreateConstInBoundsGEP1_64(IR.I64, Words, Base + W);
      B.CreateStore(B.CreateOr(B.CreateLoad(IR.I64, Word), Bits), Word);
      Any = B.CreateOr(Any, Bits);
    }
    Value *Set = B.CreateZExt(B.CreateICmpNE(Any, ConstantInt::get(IR.I64, 0)), IR.I8);
    B.CreateStore(B.CreateOr(B.CreateLoad(IR.I8, Dirty), Set), Dirty);
  }
}

} // namespace numfuzz_pass
