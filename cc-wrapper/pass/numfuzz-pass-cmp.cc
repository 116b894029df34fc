// CmpHooks: the hooks before the program's comparisons.

#include "numfuzz-pass.h"

#include "llvm/IR/InlineAsm.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

namespace numfuzz_pass {

SmallVector<CmpInst *, 16> CmpHooks::cmps(Function &F) {
  SmallVector<CmpInst *, 16> Cmps;
  for (BasicBlock &BB : F)
    for (Instruction &I : BB)
      if (auto *C = dyn_cast<CmpInst>(&I); C && operandCode(C) >= 0)
        Cmps.push_back(C);
  return Cmps;
}

// Before the comparison: `if (__numfuzz_cmp_mode) hook(record, a, b)`. The mode is 0 unless
// a numfuzz campaign asks for distances or operands, so a comparison otherwise costs a
// load and a branch.
void CmpHooks::emit(Function &F, CmpInst *C) {
  GlobalVariable *Rec = Records.cmpSite(F, C, orOfWords(C).first ? NUMFUZZ_CMP_I64 : operandCode(C));
  if (!CmpMode)
    CmpMode = new GlobalVariable(IR.M, IR.I8, false, GlobalValue::ExternalLinkage, nullptr, NUMFUZZ_SYM_CMP_MODE);
  IRBuilder<> Head(C);
  Head.SetCurrentDebugLocation(C->getDebugLoc());
  Value *Mode = Head.CreateLoad(IR.I8, CmpMode, "numfuzz.cmp_mode");
  if (emitPreserving(F, C, Rec, Head, Mode))
    return;
  Instruction *Then = SplitBlockAndInsertIfThen(Head.CreateICmpNE(Mode, ConstantInt::get(IR.I8, 0)), C, false);
  IRBuilder<> B(Then);
  B.SetCurrentDebugLocation(C->getDebugLoc());
  B.setIsFPConstrained(F.hasFnAttribute(Attribute::StrictFP));
  callHook(F, B, C, Rec);
}

// The hook call of C's operand type, in the block the mode test guards.
void CmpHooks::callHook(Function &F, IRBuilder<> &B, CmpInst *C, GlobalVariable *Rec) {
  AttributeList Attrs = IR.hookAttributes();
  Type *VoidTy = Type::getVoidTy(IR.Ctx);
  Value *A = C->getOperand(0), *Bv = C->getOperand(1);
  Type *T = A->getType();
  CallInst *Call;
  if (T->isIntegerTy()) {
    FunctionCallee Hook = IR.M.getOrInsertFunction(
        NUMFUZZ_SYM_CMP_INT, FunctionType::get(VoidTy, {IR.PtrTy, IR.I64, IR.I64}, false), Attrs);
    if (auto [High, Low] = orOfWords(C); High) {
      A = joinWords(B, High, Low);
      Bv = ConstantInt::get(IR.I64, 0);
    }
    Call = B.CreateCall(Hook, {Rec, B.CreateZExt(A, IR.I64), B.CreateZExt(Bv, IR.I64)});
  } else if (T->isX86_FP80Ty()) {
    AllocaInst *Slots = F80.of(F, T);
    B.CreateStore(A, F80.slot(B, 0));
    B.CreateStore(Bv, F80.slot(B, 1));
    FunctionCallee Hook = IR.M.getOrInsertFunction(
        NUMFUZZ_SYM_CMP_F80, FunctionType::get(VoidTy, {IR.PtrTy, IR.PtrTy}, false), Attrs);
    Call = B.CreateCall(Hook, {Rec, Slots});
  } else {
    const char *Name = T->isFloatTy() ? NUMFUZZ_SYM_CMP_F32 : NUMFUZZ_SYM_CMP_F64;
    FunctionCallee Hook = IR.M.getOrInsertFunction(Name, FunctionType::get(VoidTy, {IR.PtrTy, T, T}, false), Attrs);
    Call = B.CreateCall(Hook, {Rec, A, Bv});
  }
  if (F.hasFnAttribute(Attribute::StrictFP))
    Call->addFnAttr(Attribute::StrictFP);
}

// As the checks' slow path (CheckEmitter::emitInlineArith): on x86-64 the hook is called
// from an inline asm that tests the mode itself and calls a register-preserving thunk, so
// the comparison gets no block (and no coverage guard) of its own. Integer and f32/f64
// comparisons outside strictfp functions; false when the caller must emit the branch.
bool CmpHooks::emitPreserving(Function &F, CmpInst *C, GlobalVariable *Rec, IRBuilder<> &B, Value *Mode) {
  if (!IR.preservingCallsWork(F) || F.hasFnAttribute(Attribute::StrictFP))
    return false;
  Value *A = C->getOperand(0), *Bv = C->getOperand(1);
  Type *T = A->getType();
  const char *Thunk;
  std::string Constraints = "r,{rdi},";
  if (T->isIntegerTy()) {
    if (auto [High, Low] = orOfWords(C); High) {
      A = joinWords(B, High, Low);
      Bv = ConstantInt::get(IR.I64, 0);
    }
    A = B.CreateZExt(A, IR.I64);
    Bv = B.CreateZExt(Bv, IR.I64);
    T = IR.I64;
    Thunk = NUMFUZZ_SYM_CMP_INT_PRESERVING;
    Constraints += "{rsi},{rdx}";
  } else if (T->isFloatTy() || T->isDoubleTy()) {
    Thunk = T->isFloatTy() ? NUMFUZZ_SYM_CMP_F32_PRESERVING : NUMFUZZ_SYM_CMP_F64_PRESERVING;
    Constraints += "{xmm0},{xmm1}";
  } else {
    return false;
  }
  Constraints += ",~{r10},~{r11},~{dirflag},~{fpsr},~{flags}";
  std::string Asm = std::string("testl $0, $0\n\tjz 1f\n\tcall ") + Thunk + "@PLT\n1:";
  noRedZone(F);
  FunctionType *AsmTy = FunctionType::get(Type::getVoidTy(IR.Ctx), {IR.I32, IR.PtrTy, T, T}, false);
  B.CreateCall(InlineAsm::get(AsmTy, Asm, Constraints, /*hasSideEffects=*/true),
               {B.CreateZExt(Mode, IR.I32), Rec, A, Bv});
  return true;
}

// numfuzz_abi.h's operand code of a comparison worth recording, or -1: floats of the
// checked formats, integers of 8-64 bits (fdlibm compares the words of doubles); not
// pointers, booleans or vectors.
int CmpHooks::operandCode(CmpInst *C) {
  Type *T = C->getOperand(0)->getType();
  if (isa<FCmpInst>(C)) {
    if (C->getPredicate() == CmpInst::FCMP_FALSE || C->getPredicate() == CmpInst::FCMP_TRUE)
      return -1;
    return typeCode(T);
  }
  if (!T->isIntegerTy())
    return -1;
  switch (T->getIntegerBitWidth()) {
  case 8: return NUMFUZZ_CMP_I8;
  case 16: return NUMFUZZ_CMP_I16;
  case 32: return NUMFUZZ_CMP_I32;
  case 64: return NUMFUZZ_CMP_I64;
  default: return -1;
  }
}

// `(a | b) == 0` or `!= 0` on two words of at most 32 bits (fdlibm's test of a double
// against a constant: `((j - 0x40900000) | i) != 0`): the high word (the one offset by a
// constant, if either is) and the low word, else nulls. The hook is then given |a|:b against
// 0 as one 64-bit word (joinWords), which is 0 exactly when both are, so the outcome is the
// same; its distance is about the ordered distance of the double to the constant, where the
// or of the two words gives the low word's noise and local search cannot descend on it.
std::pair<Value *, Value *> CmpHooks::orOfWords(CmpInst *C) {
  auto *Zero = dyn_cast<ConstantInt>(C->getOperand(1));
  auto *Or = dyn_cast<BinaryOperator>(C->getOperand(0));
  if (!isa<ICmpInst>(C) || !C->isEquality() || !Zero || !Zero->isZero() || !Or ||
      Or->getOpcode() != Instruction::Or || Or->getType()->getIntegerBitWidth() > 32)
    return {nullptr, nullptr};
  auto IsOffset = [](Value *V) {
    auto *Op = dyn_cast<BinaryOperator>(V);
    return Op && (Op->getOpcode() == Instruction::Sub || Op->getOpcode() == Instruction::Add) &&
           isa<ConstantInt>(Op->getOperand(1));
  };
  Value *A = Or->getOperand(0), *B = Or->getOperand(1);
  if (IsOffset(B) && !IsOffset(A))
    std::swap(A, B);
  return {A, B};
}

// |High|:Low as one i64 (see orOfWords).
Value *CmpHooks::joinWords(IRBuilder<> &B, Value *High, Value *Low) {
  Value *Wide = B.CreateSExt(High, IR.I64);
  Value *Abs = B.CreateSelect(B.CreateICmpSLT(Wide, ConstantInt::get(IR.I64, 0)), B.CreateNeg(Wide), Wide);
  return B.CreateOr(B.CreateShl(Abs, 32), B.CreateZExt(Low, IR.I64));
}

} // namespace numfuzz_pass
