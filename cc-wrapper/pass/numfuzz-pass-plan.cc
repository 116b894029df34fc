// Planner: which operations of a function get a check, and the CheckPlan that says how.

#include "numfuzz-pass.h"

namespace numfuzz_pass {

Planner::Planner() {
#define NUMFUZZ_ADD_LIBM(name, type, op, shape) Libm[name] = LibmEntry{type, op, shape};
  NUMFUZZ_LIBM_CALLS(NUMFUZZ_ADD_LIBM)
#undef NUMFUZZ_ADD_LIBM
}

SmallVector<CheckPlan, 16> Planner::plans(Function &F) const {
  SmallVector<CheckPlan, 16> Plans;
  for (BasicBlock &BB : F)
    for (Instruction &I : BB) {
      CheckPlan P;
      if (plan(I, P))
        Plans.push_back(P);
    }
  return Plans;
}

// Decides whether I is checked and how.
bool Planner::plan(Instruction &I, CheckPlan &P) const {
  P.Inst = &I;
  if (auto *BO = dyn_cast<BinaryOperator>(&I)) {
    unsigned Op = 0;
    switch (BO->getOpcode()) {
    case Instruction::FAdd: Op = NUMFUZZ_OP_FADD; break;
    case Instruction::FSub: Op = NUMFUZZ_OP_FSUB; break;
    case Instruction::FMul: Op = NUMFUZZ_OP_FMUL; break;
    case Instruction::FDiv: Op = NUMFUZZ_OP_FDIV; break;
    case Instruction::FRem: Op = NUMFUZZ_OP_FREM; break;
    default: return false;
    }
    return planArith(Op, BO->getOperand(0), BO->getOperand(1), BO, P);
  }
  if (isa<FPToSIInst>(I) || isa<FPToUIInst>(I))
    return planToInt(isa<FPToSIInst>(I), I.getOperand(0), I.getType(), P);
  if (isa<FPTruncInst>(I))
    return planNarrow(I.getOperand(0), &I, P);
  auto *CI = dyn_cast<CallInst>(&I);
  if (!CI)
    return false;
  Function *Callee = CI->getCalledFunction();
  if (!Callee)
    return false;
  StringRef Name = Callee->getName();
  if (Name.starts_with("llvm."))
    return planIntrinsic(CI, Name, P);
  auto It = Libm.find(Name);
  return It != Libm.end() && planLibmCall(CI, It->second, P);
}

// A call of a libm function numfuzz_abi.h lists, if its signature is the listed one.
bool Planner::planLibmCall(CallInst *CI, const LibmEntry &E, CheckPlan &P) {
  Type *RetTy = CI->getType();
  if (typeCode(RetTy) != (int)E.Type || CI->arg_size() < 1 || CI->getArgOperand(0)->getType() != RetTy)
    return false;
  P.Op = E.Op;
  P.FloatTy = RetTy;
  P.Result = CI;
  P.Floats = {CI->getArgOperand(0)};
  if (E.Shape == NUMFUZZ_SHAPE_BINARY) {
    if (CI->arg_size() < 2 || CI->getArgOperand(1)->getType() != RetTy)
      return false;
    P.Floats.push_back(CI->getArgOperand(1));
  } else if (E.Shape == NUMFUZZ_SHAPE_FLOAT_INT) {
    if (CI->arg_size() < 2 || !CI->getArgOperand(1)->getType()->isIntegerTy())
      return false;
    P.Int = CI->getArgOperand(1);
  }
  return true;
}

bool Planner::planIntrinsic(CallInst *CI, StringRef Name, CheckPlan &P) {
  // llvm.<base>.<type suffixes>, or llvm.experimental.constrained.<base>.<type suffixes>
  // in code built with `#pragma STDC FENV_ACCESS ON`, -frounding-math or
  // -ffp-exception-behavior=strict: the same operations, with the rounding and exception
  // arguments (metadata) after the value arguments.
  StringRef Rest = Name.drop_front(5);
  bool Constrained = Rest.consume_front("experimental.constrained.");
  StringRef Base = Rest.split('.').first;
  // (A constrained instruction of an unchecked type falls through to no plan below.)
  if (Constrained && planConstrainedInstruction(CI, Base, P))
    return true;
  unsigned Shape = NUMFUZZ_SHAPE_UNARY;
  P.Op = intrinsicOp(Base, Shape);
  if (!P.Op)
    return false;
  Type *RetTy = CI->getType();
  P.FloatTy = checkedScalar(RetTy);
  if (!P.FloatTy)
    return false;
  P.Result = CI;
  unsigned NFloats = Shape == NUMFUZZ_SHAPE_TERNARY ? 3 : Shape == NUMFUZZ_SHAPE_BINARY ? 2 : 1;
  if (CI->arg_size() < NFloats)
    return false;
  for (unsigned K = 0; K < NFloats; ++K) {
    if (CI->getArgOperand(K)->getType() != RetTy)
      return false;
    P.Floats.push_back(CI->getArgOperand(K));
  }
  if (Shape == NUMFUZZ_SHAPE_FLOAT_INT) {
    if (CI->arg_size() < 2 || !CI->getArgOperand(1)->getType()->isIntegerTy())
      return false;
    // Vector ldexp takes a vector of exponents; those are extracted per lane.
    P.Int = CI->getArgOperand(1);
  }
  return true;
}

// The op code of the checked intrinsic Base (llvm.<Base>.*) and its Shape (left unary for the
// unary ones), or 0 if Base is not checked.
unsigned Planner::intrinsicOp(StringRef Base, unsigned &Shape) {
  if (Base == "fma" || Base == "fmuladd") {
    Shape = NUMFUZZ_SHAPE_TERNARY;
    return Base == "fma" ? NUMFUZZ_OP_FMA : NUMFUZZ_OP_FMULADD;
  }
  if (Base == "powi" || Base == "ldexp") {
    Shape = NUMFUZZ_SHAPE_FLOAT_INT;
    return Base == "powi" ? NUMFUZZ_OP_POWI : NUMFUZZ_OP_LDEXP;
  }
  if (Base == "pow" || Base == "atan2") {
    Shape = NUMFUZZ_SHAPE_BINARY;
    return Base == "pow" ? NUMFUZZ_OP_POW : NUMFUZZ_OP_ATAN2;
  }
  static const struct {
    const char *Name;
    unsigned Op;
  } Unary[] = {{"sqrt", NUMFUZZ_OP_SQRT}, {"exp", NUMFUZZ_OP_EXP},   {"exp2", NUMFUZZ_OP_EXP2},
               {"log", NUMFUZZ_OP_LOG},   {"log2", NUMFUZZ_OP_LOG2}, {"log10", NUMFUZZ_OP_LOG10},
               {"sin", NUMFUZZ_OP_SIN},   {"cos", NUMFUZZ_OP_COS},   {"tan", NUMFUZZ_OP_TAN},
               {"asin", NUMFUZZ_OP_ASIN}, {"acos", NUMFUZZ_OP_ACOS}, {"atan", NUMFUZZ_OP_ATAN},
               {"sinh", NUMFUZZ_OP_SINH}, {"cosh", NUMFUZZ_OP_COSH}, {"tanh", NUMFUZZ_OP_TANH}};
  unsigned Op = 0;
  for (const auto &U : Unary)
    if (Base == U.Name)
      Op = U.Op;
  return Op;
}

// The constrained forms of the instructions plan() handles (fadd ... fptrunc): the same
// plans, from the intrinsic's value arguments.
bool Planner::planConstrainedInstruction(CallInst *CI, StringRef Base, CheckPlan &P) {
  static const struct {
    const char *Name;
    unsigned Op;
  } Arith[] = {{"fadd", NUMFUZZ_OP_FADD},
               {"fsub", NUMFUZZ_OP_FSUB},
               {"fmul", NUMFUZZ_OP_FMUL},
               {"fdiv", NUMFUZZ_OP_FDIV},
               {"frem", NUMFUZZ_OP_FREM}};
  for (const auto &A : Arith)
    if (Base == A.Name)
      return planArith(A.Op, CI->getArgOperand(0), CI->getArgOperand(1), CI, P);
  if (Base == "fptosi" || Base == "fptoui")
    return planToInt(Base == "fptosi", CI->getArgOperand(0), CI->getType(), P);
  if (Base == "fptrunc")
    return planNarrow(CI->getArgOperand(0), CI, P);
  return false;
}

// `A op B` (fadd ... frem) giving Result.
bool Planner::planArith(unsigned Op, Value *A, Value *B, Value *Result, CheckPlan &P) {
  P.Op = Op;
  P.FloatTy = checkedScalar(Result->getType());
  P.Floats = {A, B};
  P.Result = Result;
  return P.FloatTy != nullptr;
}

// A conversion of Src to the integer (or integer vector) type IntTy.
bool Planner::planToInt(bool Signed, Value *Src, Type *IntTy, CheckPlan &P) {
  P.Op = Signed ? NUMFUZZ_OP_FPTOSI : NUMFUZZ_OP_FPTOUI;
  P.FloatTy = checkedScalar(Src->getType());
  unsigned Bits = IntTy->getScalarSizeInBits();
  P.Aux = Bits;
  P.Floats = {Src};
  return P.FloatTy && Bits > 0 && Bits <= 255;
}

// Src narrowed to Result's float type.
bool Planner::planNarrow(Value *Src, Value *Result, CheckPlan &P) {
  P.Op = NUMFUZZ_OP_FPTRUNC;
  P.FloatTy = checkedScalar(Src->getType());
  Type *Dst = checkedScalar(Result->getType());
  P.Aux = Dst ? typeCode(Dst) : 0;
  P.Floats = {Src};
  P.Result = Result;
  P.ResultInSourceType = true;
  return P.FloatTy && Dst;
}

} // namespace numfuzz_pass
