// numfuzz shadow pass: the replay-only shadow build (NUMFUZZ_CC_SHADOW=1 numfuzz-cc).
//
// Every float and double SSA value the program computes gets a shadow: the same computation
// in x86_fp80 (x87 extended precision: 64-bit significand, 15-bit exponent). Arithmetic,
// conversions and the libm calls the checkers know are repeated on the shadows (libm by its
// long double version); shadows cross memory, calls and returns through the runtime's
// shadow.c (see numfuzz-abi's shadow.rs for the contract). Declared results report their
// shadow, which triage reads as a reference where there is no oracle.
//
// What is not shadowed, and restarts from the value itself: vectors (the wrapper turns the
// vectorisers off, so only explicit SIMD code has them), aggregates returned by value,
// long double values (they are their own shadow), values made from integer bits, and any
// intrinsic or call outside the lists below. A restart only loses the extra precision; a
// program that looks at a value the format lost (a branch on it, its bits) makes the run's
// shadows unreliable, which the runtime records.
//
// With NUMFUZZ_CC_SHADOW=mpfr in the environment the shadows are MPFR values instead (an MPFR
// build, numfuzz-abi's shadow.rs module `mpfr`): each shadow is a handle (a pointer) to a value
// of the runtime's shadow_mpfr.c, and every operation on shadows is a call into it; memory,
// calls, returns and results go through the same entry points with the `__numfuzz_mpfr_` prefix.
//
// The pass runs last in the optimisation pipeline (at -O0 too): the optimised IR has the
// fewest memory round trips, and nothing after it rewrites the shadow code.

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#if LLVM_VERSION_MAJOR >= 22
#include "llvm/Plugins/PassPlugin.h"
#else
#include "llvm/Passes/PassPlugin.h"
#endif
#include "llvm/Support/Path.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include "numfuzz_abi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace llvm;

namespace {

#if LLVM_VERSION_MAJOR >= 20
Function *intrinsicDecl(Module &M, Intrinsic::ID ID, ArrayRef<Type *> Tys) {
  return Intrinsic::getOrInsertDeclaration(&M, ID, Tys);
}
#else
Function *intrinsicDecl(Module &M, Intrinsic::ID ID, ArrayRef<Type *> Tys) {
  return Intrinsic::getDeclaration(&M, ID, Tys);
}
#endif

bool shadowed(Type *T) { return T->isFloatTy() || T->isDoubleTy(); }

unsigned widthOf(Type *T) { return T->isFloatTy() ? 4 : 8; }

// Intrinsics whose x86_fp80 overload computes the same function: overloaded on the float
// type alone, or (`powi`, `ldexp`) on the float type and an integer.
bool floatOverloaded(Intrinsic::ID ID) {
  switch (ID) {
  case Intrinsic::sqrt:
  case Intrinsic::fabs:
  case Intrinsic::floor:
  case Intrinsic::ceil:
  case Intrinsic::trunc:
  case Intrinsic::rint:
  case Intrinsic::nearbyint:
  case Intrinsic::round:
  case Intrinsic::roundeven:
  case Intrinsic::copysign:
  case Intrinsic::minnum:
  case Intrinsic::maxnum:
  case Intrinsic::fma:
  case Intrinsic::fmuladd:
  case Intrinsic::exp:
  case Intrinsic::exp2:
  case Intrinsic::exp10:
  case Intrinsic::log:
  case Intrinsic::log2:
  case Intrinsic::log10:
  case Intrinsic::pow:
  case Intrinsic::sin:
  case Intrinsic::cos:
    return true;
  default:
    return false;
  }
}

bool floatIntOverloaded(Intrinsic::ID ID) { return ID == Intrinsic::powi || ID == Intrinsic::ldexp; }

// The MPFR runtime's code for an intrinsic (a checked op's code, or one of its own); 0: none.
unsigned mpfrOp(Intrinsic::ID ID) {
  switch (ID) {
  case Intrinsic::sqrt: return NUMFUZZ_OP_SQRT;
  case Intrinsic::fabs: return NUMFUZZ_MPFR_OP_FABS;
  case Intrinsic::floor: return NUMFUZZ_MPFR_OP_FLOOR;
  case Intrinsic::ceil: return NUMFUZZ_MPFR_OP_CEIL;
  case Intrinsic::trunc: return NUMFUZZ_MPFR_OP_TRUNC;
  case Intrinsic::rint:
  case Intrinsic::nearbyint: return NUMFUZZ_MPFR_OP_RINT;
  case Intrinsic::round: return NUMFUZZ_MPFR_OP_ROUND;
  case Intrinsic::roundeven: return NUMFUZZ_MPFR_OP_ROUNDEVEN;
  case Intrinsic::copysign: return NUMFUZZ_MPFR_OP_COPYSIGN;
  case Intrinsic::minnum: return NUMFUZZ_MPFR_OP_MINNUM;
  case Intrinsic::maxnum: return NUMFUZZ_MPFR_OP_MAXNUM;
  case Intrinsic::fma: return NUMFUZZ_OP_FMA;
  case Intrinsic::fmuladd: return NUMFUZZ_OP_FMULADD;
  case Intrinsic::exp: return NUMFUZZ_OP_EXP;
  case Intrinsic::exp2: return NUMFUZZ_OP_EXP2;
  case Intrinsic::exp10: return NUMFUZZ_MPFR_OP_EXP10;
  case Intrinsic::log: return NUMFUZZ_OP_LOG;
  case Intrinsic::log2: return NUMFUZZ_OP_LOG2;
  case Intrinsic::log10: return NUMFUZZ_OP_LOG10;
  case Intrinsic::pow: return NUMFUZZ_OP_POW;
  case Intrinsic::sin: return NUMFUZZ_OP_SIN;
  case Intrinsic::cos: return NUMFUZZ_OP_COS;
  case Intrinsic::powi: return NUMFUZZ_OP_POWI;
  case Intrinsic::ldexp: return NUMFUZZ_OP_LDEXP;
  default: return 0;
  }
}

unsigned arithOp(unsigned Opcode) {
  switch (Opcode) {
  case Instruction::FAdd: return NUMFUZZ_OP_FADD;
  case Instruction::FSub: return NUMFUZZ_OP_FSUB;
  case Instruction::FMul: return NUMFUZZ_OP_FMUL;
  case Instruction::FDiv: return NUMFUZZ_OP_FDIV;
  default: return NUMFUZZ_OP_FREM;
  }
}

// An MPFR build: NUMFUZZ_CC_SHADOW=mpfr in the environment clang inherits from numfuzz-cc.
bool mpfrBuild() {
  const char *Mode = std::getenv(NUMFUZZ_ENV_CC_SHADOW);
  return Mode && std::strcmp(Mode, "mpfr") == 0;
}

// Where an operation is in the source, as the checker pass (which runs at the start of the
// pipeline) records it for its site. The optimiser drops the debug location of what it hoists
// out of a loop (`y * y` of a series), so an MPFR build notes each operation's place in
// metadata of its own at the start (`notePlaces`) and reads it back here.
const char *const PlaceKind = "numfuzz.place";

struct Place {
  std::string File;
  unsigned Line = 0, Column = 0;
};

Place placeOf(Instruction *I) {
  if (auto *N = I->getMetadata(PlaceKind)) {
    auto *File = dyn_cast<MDString>(N->getOperand(0));
    auto *Line = mdconst::dyn_extract<ConstantInt>(N->getOperand(1));
    auto *Column = mdconst::dyn_extract<ConstantInt>(N->getOperand(2));
    if (File && Line && Column)
      return {File->getString().str(), unsigned(Line->getZExtValue()), unsigned(Column->getZExtValue())};
  }
  const DILocation *L = I->getDebugLoc().get();
  if (!L || !L->getLine())
    return {};
  return {L->getFilename().str(), L->getLine(), L->getColumn()};
}

// Notes the place of every float or double operation that has one.
void notePlaces(Module &M) {
  LLVMContext &Ctx = M.getContext();
  Type *I32 = Type::getInt32Ty(Ctx);
  for (Function &F : M)
    for (Instruction &I : instructions(F)) {
      const DILocation *L = I.getDebugLoc().get();
      if (!L || !L->getLine() || !(I.getType()->isFloatTy() || I.getType()->isDoubleTy()))
        continue;
      Metadata *Ops[] = {MDString::get(Ctx, L->getFilename()),
                         ConstantAsMetadata::get(ConstantInt::get(I32, L->getLine())),
                         ConstantAsMetadata::get(ConstantInt::get(I32, L->getColumn()))};
      I.setMetadata(PlaceKind, MDNode::get(Ctx, Ops));
    }
}

class Shadower {
public:
  explicit Shadower(Module &M) : M(M), Ctx(M.getContext()), Mpfr(mpfrBuild()) {
    // Each float/double name pairs with the long double name of the same op in the same
    // place of the op's list (exp -> expl, expf -> expl, scalbln -> scalblnl).
    DenseMap<std::pair<unsigned, unsigned>, SmallVector<const char *, 2>> Names; // (op, type) -> names
#define NUMFUZZ_ADD_NAME(name, type, op, shape) Names[{op, type}].push_back(name);
    NUMFUZZ_LIBM_CALLS(NUMFUZZ_ADD_NAME)
#undef NUMFUZZ_ADD_NAME
#define NUMFUZZ_ADD_LIBM(name, type, op, shape)                                                                    \
  if (type != NUMFUZZ_TYPE_F80) {                                                                                  \
    Libm[name] = shape;                                                                                            \
    LibmOp[name] = op;                                                                                             \
    auto &Own = Names[{op, type}], &Wide = Names[{op, NUMFUZZ_TYPE_F80}];                                          \
    size_t K = std::find(Own.begin(), Own.end(), StringRef(name)) - Own.begin();                                  \
    if (K < Wide.size())                                                                                           \
      WideOf[name] = Wide[K];                                                                                      \
  }
    NUMFUZZ_LIBM_CALLS(NUMFUZZ_ADD_LIBM)
#undef NUMFUZZ_ADD_LIBM
    F80 = Type::getX86_FP80Ty(Ctx);
    NaNFromInfinity = ConstantFP::get(
        Ctx, APFloat(APFloat::x87DoubleExtended(), APInt(80, {NUMFUZZ_SHADOW_NAN_FROM_INFINITY, 0x7fffull})));
    NaNFromReturnedConstant = ConstantFP::get(
        Ctx, APFloat(APFloat::x87DoubleExtended(), APInt(80, {NUMFUZZ_SHADOW_NAN_FROM_RETURNED_CONSTANT, 0x7fffull})));
    Dbl = Type::getDoubleTy(Ctx);
    PtrTy = PointerType::getUnqual(Ctx);
    I32 = Type::getInt32Ty(Ctx);
    I64 = Type::getInt64Ty(Ctx);
    Void = Type::getVoidTy(Ctx);
    ST = Mpfr ? PtrTy : F80;
  }

  bool run() {
    bool Changed = false;
    for (Function &F : M) {
      if (F.isDeclaration() || F.getName().starts_with("__numfuzz"))
        continue;
      instrument(F);
      Changed = true;
    }
    if (Changed)
      markShadowBuild();
    return Changed;
  }

private:
  Module &M;
  LLVMContext &Ctx;
  bool Mpfr;  // shadows are MPFR handles (ST is a pointer), not x86_fp80 values
  Type *F80, *Dbl, *PtrTy, *I32, *I64, *Void, *ST;
  Constant *NaNFromInfinity, *NaNFromReturnedConstant;
  StringMap<unsigned> Libm;  // float/double libm name -> shape
  StringMap<unsigned> LibmOp; // float/double libm name -> op
  StringMap<std::string> WideOf; // float/double libm name -> its long double name
  StringMap<Constant *> Strings;
  DenseMap<Value *, Value *> Shadow;
  DenseMap<Value *, Value *> Consumed; // a call's shadow where arithmetic uses its result
  DenseMap<Value *, Value *> Constness; // an i1 beside a phi or select of constants
  SmallVector<std::pair<PHINode *, PHINode *>, 16> Phis;

  // A runtime entry point; an MPFR build calls `__numfuzz_mpfr_X` for `__numfuzz_shadow_X`.
  FunctionCallee rt(const char *Name, Type *Ret, ArrayRef<Type *> Params) {
    StringRef N(Name), X87Prefix("__numfuzz_shadow_");
    std::string Sym = Mpfr && N.starts_with(X87Prefix) ? (NUMFUZZ_MPFR_PREFIX + N.drop_front(X87Prefix.size())).str()
                                                         : N.str();
    return M.getOrInsertFunction(Sym, FunctionType::get(Ret, Params, false));
  }

  // An MPFR build's shadow of a value that has none: the value itself.
  Value *fromValue(IRBuilder<> &B, Value *V) {
    if (V->getType()->isX86_FP80Ty())
      return B.CreateCall(rt(NUMFUZZ_SYM_MPFR_FROM_F80, ST, {F80}), {V});
    if (!shadowed(V->getType()))
      V = B.CreateFPCast(V, Dbl);
    return B.CreateCall(rt(NUMFUZZ_SYM_MPFR_FROM_F64, ST, {Dbl}), {toDouble(B, V)});
  }

  // A libm function or intrinsic of the MPFR runtime on shadows, by its op code and shape.
  Value *mpfrCall(IRBuilder<> &B, unsigned Op, ArrayRef<Value *> Args) {
    SmallVector<Value *, 4> All{B.getInt32(Op)};
    SmallVector<Type *, 4> Params{I32};
    for (Value *A : Args) {
      All.push_back(A->getType() == ST ? A : B.CreateSExtOrTrunc(A, I32));
      Params.push_back(A->getType() == ST ? ST : I32);
    }
    const char *Name = !Args.back()->getType()->isPointerTy() ? NUMFUZZ_SYM_MPFR_CALL_INT
                       : Args.size() == 1                      ? NUMFUZZ_SYM_MPFR_CALL1
                       : Args.size() == 2                      ? NUMFUZZ_SYM_MPFR_CALL2
                                                               : NUMFUZZ_SYM_MPFR_CALL3;
    return B.CreateCall(rt(Name, ST, Params), All);
  }

  // Whether the comparison `Pred` holds on two shadows.
  Value *shadowCompare(IRBuilder<> &B, CmpInst::Predicate Pred, Value *A, Value *C) {
    if (!Mpfr)
      return B.CreateFCmp(Pred, A, C);
    Value *Holds = B.CreateCall(rt(NUMFUZZ_SYM_MPFR_COMPARE, I32, {I32, ST, ST}), {B.getInt32(Pred), A, C});
    return B.CreateICmpNE(Holds, B.getInt32(0));
  }

  Constant *str(StringRef S) {
    auto It = Strings.find(S);
    if (It != Strings.end())
      return It->second;
    Constant *Init = ConstantDataArray::getString(Ctx, S);
    auto *GV = new GlobalVariable(M, Init->getType(), true, GlobalValue::PrivateLinkage, Init, ".numfuzz.shadow.str");
    GV->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    GV->setAlignment(Align(1));
    Strings[S] = GV;
    return GV;
  }

  // "file:line" of I (the function's name without a debug location), for the runtime's note
  // of why a shadow became unreliable.
  Constant *where(Instruction *I) {
    if (const DILocation *L = I->getDebugLoc().get())
      return str((sys::path::filename(L->getFilename()) + ":" + Twine(L->getLine())).str());
    return str(I->getFunction()->getName());
  }

  Value *toDouble(IRBuilder<> &B, Value *V) { return V->getType()->isFloatTy() ? B.CreateFPExt(V, Dbl) : V; }

  // The shadow of V where it is used at `At` (a restart from V itself when V has none).
  Value *get(Value *V, Instruction *At) {
    if (computesOn(At)) {
      auto It = Consumed.find(V);
      if (It != Consumed.end())
        return It->second;
    }
    auto It = Shadow.find(V);
    if (It != Shadow.end())
      return It->second;
    if (Mpfr) {
      IRBuilder<> B(At);
      return fromValue(B, V);
    }
    if (auto *C = dyn_cast<ConstantFP>(V)) {
      APFloat A = C->getValueAPF();
      bool Lost;
      A.convert(APFloat::x87DoubleExtended(), APFloat::rmNearestTiesToEven, &Lost);
      return ConstantFP::get(Ctx, A);
    }
    if (isa<UndefValue>(V))
      return UndefValue::get(F80);
    IRBuilder<> B(At);
    return B.CreateFPCast(V, F80);
  }

  // Whether `At` computes a new value from its operands (arithmetic, a libm function), as
  // opposed to passing one on (a store, a return, a select, a comparison, fabs).
  bool computesOn(Instruction *At) {
    if (isa<BinaryOperator>(At))
      return true;
    if (auto *II = dyn_cast<IntrinsicInst>(At)) {
      Intrinsic::ID ID = II->getIntrinsicID();
      return floatOverloaded(ID) && ID != Intrinsic::fabs && ID != Intrinsic::copysign;
    }
    auto *Call = dyn_cast<CallBase>(At);
    Function *Callee = Call ? Call->getCalledFunction() : nullptr;
    return Callee && Libm.count(Callee->getName());
  }

  void instrument(Function &F) {
    Shadow.clear();
    Consumed.clear();
    Constness.clear();
    Phis.clear();
    SmallVector<Instruction *, 128> Work;
    ReversePostOrderTraversal<Function *> RPO(&F);
    for (BasicBlock *BB : RPO)
      for (Instruction &I : *BB)
        Work.push_back(&I);
    entry(F);
    for (Instruction *I : Work)
      visit(F, I);
    for (auto &[Orig, Sh] : Phis)
      for (unsigned K = 0; K < Orig->getNumIncomingValues(); K++)
        Sh->addIncoming(get(Orig->getIncomingValue(K), Orig->getIncomingBlock(K)->getTerminator()),
                        Orig->getIncomingBlock(K));
  }

  // The shadows of F's float arguments, from its caller when the caller was instrumented.
  void entry(Function &F) {
    if (F.isVarArg())
      return;
    unsigned Count = 0;
    for (Argument &A : F.args())
      Count += shadowed(A.getType());
    if (!Count)
      return;
    IRBuilder<> B(&*F.getEntryBlock().getFirstInsertionPt());
    FunctionCallee Arg = rt(NUMFUZZ_SYM_SHADOW_ARG, ST, {PtrTy, I32, I32, Dbl});
    unsigned K = 0;
    for (Argument &A : F.args()) {
      if (!shadowed(A.getType()))
        continue;
      Shadow[&A] = B.CreateCall(Arg, {&F, B.getInt32(K++), B.getInt32(Count), toDouble(B, &A)});
    }
  }

  void visit(Function &F, Instruction *I) {
    if (auto *Phi = dyn_cast<PHINode>(I)) {
      if (shadowed(Phi->getType())) {
        auto *Sh = PHINode::Create(ST, Phi->getNumIncomingValues(), "", Phi->getIterator());
        Shadow[Phi] = Sh;
        Phis.push_back({Phi, Sh});
      }
      return;
    }
    if (auto *Call = dyn_cast<CallBase>(I))
      return visitCall(F, Call);
    if (auto *St = dyn_cast<StoreInst>(I))
      return visitStore(St);
    if (auto *Ret = dyn_cast<ReturnInst>(I))
      return visitReturn(F, Ret);
    if (I->isTerminator())
      return;
    IRBuilder<> B(I->getNextNode());
    if (auto *Ld = dyn_cast<LoadInst>(I))
      return visitLoad(B, Ld);
    if (auto *Cmp = dyn_cast<FCmpInst>(I)) {
      if (shadowed(Cmp->getOperand(0)->getType()))
        compared(B, Cmp, shadowCompare(B, Cmp->getPredicate(), get(Cmp->getOperand(0), I), get(Cmp->getOperand(1), I)),
                 Cmp->getOperand(0), Cmp->getOperand(1));
      return;
    }
    if (Mpfr && (isa<FPToSIInst>(I) || isa<FPToUIInst>(I)) && shadowed(I->getOperand(0)->getType()))
      return convertedToInt(B, cast<CastInst>(I));
    if (auto *Cast = dyn_cast<BitCastInst>(I)) {
      Value *Src = Cast->getOperand(0);
      if (shadowed(Src->getType()) && Cast->getType()->isIntegerTy())
        B.CreateCall(rt(NUMFUZZ_SYM_SHADOW_BITS, Void, {Dbl, ST, PtrTy}), {toDouble(B, Src), get(Src, I), where(I)});
      return;
    }
    if (!shadowed(I->getType()))
      return;
    if (Value *S = arithmetic(B, I))
      Shadow[I] = S;
  }

  // S, or the NaN that says "born from an infinity" (numfuzz-abi's shadow.rs) when S is a NaN
  // that operands without NaNs but with an infinity made.
  Value *born(IRBuilder<> &B, Value *S, ArrayRef<Value *> Operands) {
    if (Mpfr)
      return S; // the MPFR runtime tags its NaNs itself
    Value *Inf = ConstantFP::getInfinity(F80);
    Value *AnyNaN = nullptr, *AnyInf = nullptr;
    Function *Fabs = intrinsicDecl(M, Intrinsic::fabs, {F80});
    for (Value *Op : Operands) {
      if (Op->getType() != F80)
        continue;
      Value *IsNaN = B.CreateFCmpUNO(Op, Op);
      Value *IsInf = B.CreateFCmpOEQ(B.CreateCall(Fabs, {Op}), Inf);
      AnyNaN = AnyNaN ? B.CreateOr(AnyNaN, IsNaN) : IsNaN;
      AnyInf = AnyInf ? B.CreateOr(AnyInf, IsInf) : IsInf;
    }
    if (!AnyInf)
      return S;
    Value *Tagged = B.CreateAnd(B.CreateAnd(B.CreateFCmpUNO(S, S), AnyInf), B.CreateNot(AnyNaN));
    return B.CreateSelect(Tagged, NaNFromInfinity, S);
  }

  // S, or the NaN from a constant (numfuzz-abi's shadow.rs) when Operand, the divisor or the
  // log's argument whose shadow is OperandShadow, is a zero that comes from a load of where the
  // program stored a constant 0 (an underflow branch's answer), directly or as a factor, a
  // numerator or under a sign change (`log(g2.val / g1.val)` with GSL's stored `g2.val = 0`).
  Value *pole(IRBuilder<> &B, Value *S, Value *Operand, Value *OperandShadow) {
    SmallVector<LoadInst *, 4> Loads;
    zeroFrom(Operand, Loads, 4);
    for (LoadInst *Ld : Loads)
      S = B.CreateCall(rt(NUMFUZZ_SYM_SHADOW_POLE, ST, {ST, ST, PtrTy}), {S, OperandShadow, Ld->getPointerOperand()});
    return S;
  }

  // The loads whose zero makes V zero, through at most Depth products, quotients' numerators,
  // negations, absolute values and conversions.
  void zeroFrom(Value *V, SmallVectorImpl<LoadInst *> &Loads, unsigned Depth) {
    if (auto *Ld = dyn_cast<LoadInst>(V)) {
      if (Loads.size() < 4)
        Loads.push_back(Ld);
      return;
    }
    auto *I = dyn_cast<Instruction>(V);
    if (!I || !Depth)
      return;
    switch (I->getOpcode()) {
    case Instruction::FMul:
      zeroFrom(I->getOperand(1), Loads, Depth - 1);
      [[fallthrough]];
    case Instruction::FDiv:
    case Instruction::FNeg:
    case Instruction::FPExt:
    case Instruction::FPTrunc:
      return zeroFrom(I->getOperand(0), Loads, Depth - 1);
    default:
      if (auto *II = dyn_cast<IntrinsicInst>(I); II && II->getIntrinsicID() == Intrinsic::fabs)
        zeroFrom(II->getArgOperand(0), Loads, Depth - 1);
    }
  }

  // The shadow of an arithmetic instruction, conversion or select (null: none, a restart).
  Value *arithmetic(IRBuilder<> &B, Instruction *I) {
    if (auto *Bin = dyn_cast<BinaryOperator>(I)) {
      Value *A = get(Bin->getOperand(0), I), *C = get(Bin->getOperand(1), I);
      unsigned Op = arithOp(Bin->getOpcode());
      Value *S = Mpfr ? B.CreateCall(rt(NUMFUZZ_SYM_MPFR_ARITH, ST, {I32, ST, ST}), {B.getInt32(Op), A, C})
                      : born(B, B.CreateBinOp(Bin->getOpcode(), A, C), {A, C});
      S = Bin->getOpcode() == Instruction::FDiv ? pole(B, S, Bin->getOperand(1), C) : S;
      return track(B, I, S, {A, C}, Op);
    }
    if (I->getOpcode() == Instruction::FNeg)
      return Mpfr ? B.CreateCall(rt(NUMFUZZ_SYM_MPFR_NEG, ST, {ST}), {get(I->getOperand(0), I)})
                  : B.CreateFNeg(get(I->getOperand(0), I));
    Value *Src = I->getNumOperands() ? I->getOperand(0) : nullptr;
    switch (I->getOpcode()) {
    case Instruction::FPExt:
    case Instruction::FPTrunc:
      // float <-> double keep the wider shadow; a long double is its own shadow, a half or a
      // binary128 restarts.
      if (shadowed(Src->getType()))
        return get(Src, I);
      if (Mpfr)
        return fromValue(B, Src);
      return Src->getType()->isX86_FP80Ty() ? Src : B.CreateFPCast(Src, F80);
    case Instruction::SIToFP:
    case Instruction::UIToFP: {
      bool Unsigned = I->getOpcode() == Instruction::UIToFP;
      if (!Mpfr)
        return Unsigned ? B.CreateUIToFP(Src, F80) : B.CreateSIToFP(Src, F80);
      if (Src->getType()->getScalarSizeInBits() > 64)
        return fromValue(B, I);
      Value *Wide = Unsigned ? B.CreateZExt(Src, I64) : B.CreateSExt(Src, I64);
      return B.CreateCall(rt(NUMFUZZ_SYM_MPFR_FROM_INT, ST, {I64, I32}), {Wide, B.getInt32(Unsigned)});
    }
    case Instruction::Select:
      return B.CreateSelect(I->getOperand(0), get(I->getOperand(1), I), get(I->getOperand(2), I));
    default:
      return nullptr;
    }
  }

  // An MPFR build: S, the shadow of I (an operation of op code `Op`, whose operands' shadows
  // are among `Operands`), after telling the runtime where I is, so that it finds where
  // precision was lost and where the value that lost it went (numfuzz-abi's mpfr::TRACK).
  // Every operation is told, with its place or without one (a null file), since a value's
  // origin travels through each.
  Value *track(IRBuilder<> &B, Instruction *I, Value *S, ArrayRef<Value *> Operands, unsigned Op) {
    if (!Mpfr)
      return S;
    Place P = placeOf(I);
    Value *File = P.File.empty() ? ConstantPointerNull::get(cast<PointerType>(PtrTy)) : str(P.File);
    SmallVector<Value *, 2> Shadows;
    for (Value *A : Operands)
      if (A->getType() == ST && Shadows.size() < 2)
        Shadows.push_back(A);
    while (Shadows.size() < 2)
      Shadows.push_back(ConstantPointerNull::get(cast<PointerType>(PtrTy)));
    B.CreateCall(rt(NUMFUZZ_SYM_MPFR_TRACK, Void, {ST, Dbl, I32, ST, ST, PtrTy, I32, I32, I32}),
                 {S, toDouble(B, I), B.getInt32(widthOf(I->getType())), Shadows[0], Shadows[1], File,
                  B.getInt32(P.Line), B.getInt32(P.Column), B.getInt32(Op)});
    return S;
  }

  // The runtime's note of a comparison's two outcomes. In an MPFR build the program goes on
  // with the outcome the runtime returns: its own, or the shadows' in a run steered by them
  // (NUMFUZZ_SHADOW_STEER), so that the shadows can follow the path of the exact values.
  void compared(IRBuilder<> &B, Instruction *Real, Value *ShadowOutcome, Value *A, Value *Bv) {
    FunctionCallee Cmp = rt(NUMFUZZ_SYM_SHADOW_CMP, I32, {I32, I32, Dbl, ST, Dbl, ST, PtrTy});
    Value *RealWord = B.CreateZExt(Real, I32);
    Value *Taken = B.CreateCall(Cmp, {RealWord, B.CreateZExt(ShadowOutcome, I32), toDouble(B, A), get(A, Real),
                                      toDouble(B, Bv), get(Bv, Real), where(Real)});
    if (Mpfr)
      steer(Real, B.CreateICmpNE(Taken, B.getInt32(0)), RealWord);
  }

  // Every use of `Real` but `Keep` (what reports it to the runtime) takes `Steered` instead.
  void steer(Instruction *Real, Value *Steered, Value *Keep) {
    Real->replaceUsesWithIf(Steered, [&](Use &U) { return U.getUser() != Keep; });
  }

  // fptosi/fptoui in an MPFR build: the program goes on with the integer the runtime returns
  // (the shadow's, in a steered run: a loop count or an index from an exact value).
  void convertedToInt(IRBuilder<> &B, CastInst *Conv) {
    auto *IntTy = dyn_cast<IntegerType>(Conv->getType());
    if (!IntTy || IntTy->getBitWidth() > 64)
      return;
    bool Signed = isa<FPToSIInst>(Conv);
    Value *Wide = Signed ? B.CreateSExt(Conv, I64) : B.CreateZExt(Conv, I64);
    FunctionCallee ToInt = rt(NUMFUZZ_SYM_MPFR_TO_INT, I64, {I64, Dbl, ST, I32, I32});
    Value *Src = Conv->getOperand(0);
    CallInst *Taken = B.CreateCall(ToInt, {Wide, toDouble(B, Src), get(Src, Conv), B.getInt32(Signed),
                                           B.getInt32(IntTy->getBitWidth())});
    Value *Steered = B.CreateTrunc(Taken, IntTy);
    Conv->replaceUsesWithIf(Steered, [&](Use &U) { return U.getUser() != Wide && U.getUser() != Taken; });
  }

  void visitLoad(IRBuilder<> &B, LoadInst *Ld) {
    Type *T = Ld->getType();
    if (shadowed(T)) {
      FunctionCallee Load = rt(NUMFUZZ_SYM_SHADOW_LOAD, ST, {PtrTy, Dbl, I32});
      Shadow[Ld] = B.CreateCall(Load, {Ld->getPointerOperand(), toDouble(B, Ld), B.getInt32(widthOf(T))});
    } else if (T->isIntegerTy(32) || T->isIntegerTy(64)) {
      FunctionCallee IntLoad = rt(NUMFUZZ_SYM_SHADOW_INT_LOAD, Void, {PtrTy, I32, PtrTy});
      B.CreateCall(IntLoad, {Ld->getPointerOperand(), B.getInt32(T->getIntegerBitWidth() / 8), where(Ld)});
    }
  }

  // Whether V, at run time, is one of the program's constants: true for a constant, the
  // incoming one's for a phi or a select (optimisers sink `r->val = 0.0` on one branch and
  // `r->val = e` on the other into one store of a phi), false for anything computed.
  Value *constness(Value *V) {
    if (isa<ConstantFP>(V))
      return ConstantInt::getTrue(Ctx);
    auto It = Constness.find(V);
    if (It != Constness.end())
      return It->second;
    if (auto *Phi = dyn_cast<PHINode>(V)) {
      auto *C = PHINode::Create(Type::getInt1Ty(Ctx), Phi->getNumIncomingValues(), "", Phi->getIterator());
      Constness[V] = C; // before the incoming values: a loop's phi reaches itself
      for (unsigned K = 0; K < Phi->getNumIncomingValues(); K++)
        C->addIncoming(constness(Phi->getIncomingValue(K)), Phi->getIncomingBlock(K));
      return C;
    }
    if (auto *Sel = dyn_cast<SelectInst>(V)) {
      Value *T = constness(Sel->getTrueValue()), *F = constness(Sel->getFalseValue());
      IRBuilder<> B(Sel->getNextNode());
      return Constness[V] = B.CreateSelect(Sel->getCondition(), T, F);
    }
    return ConstantInt::getFalse(Ctx);
  }

  void visitStore(StoreInst *St) {
    Value *V = St->getValueOperand();
    if (!shadowed(V->getType()))
      return;
    IRBuilder<> B(St);
    FunctionCallee Store = rt(NUMFUZZ_SYM_SHADOW_STORE, Void, {PtrTy, Dbl, ST, I32});
    Value *Width = B.CreateOr(B.getInt32(widthOf(V->getType())),
                              B.CreateSelect(constness(V), B.getInt32(NUMFUZZ_SHADOW_STORED_CONSTANT), B.getInt32(0)));
    B.CreateCall(Store, {St->getPointerOperand(), toDouble(B, V), get(V, St), Width});
  }

  void visitReturn(Function &F, ReturnInst *Ret) {
    Value *V = Ret->getReturnValue();
    if (!V || !shadowed(V->getType()))
      return;
    IRBuilder<> B(Ret);
    // A constant infinity the function returns on a branch of its own (GSL's `gsl_sf_fact`
    // returns its `_e`'s OVERFLOW_ERROR value) travels as the NaN from a returned constant; the
    // caller passes it on as the infinity it is and computes on its bound (see `returned`).
    Value *S = get(V, Ret);
    if (Mpfr) {
      B.CreateCall(rt(NUMFUZZ_SYM_SHADOW_SET_RET, Void, {PtrTy, Dbl, ST, I32}),
                   {&F, toDouble(B, V), S, B.CreateZExt(constness(V), I32)});
      return;
    }
    Function *Fabs = intrinsicDecl(M, Intrinsic::fabs, {F80});
    Value *Infinite = B.CreateFCmpOEQ(B.CreateCall(Fabs, {S}), ConstantFP::getInfinity(F80));
    S = B.CreateSelect(B.CreateAnd(constness(V), Infinite), NaNFromReturnedConstant, S);
    B.CreateCall(rt(NUMFUZZ_SYM_SHADOW_SET_RET, Void, {PtrTy, Dbl, F80}), {&F, toDouble(B, V), S});
  }

  // The shadow of a call's result C whose callee returned S: where the value is only passed on
  // (a wrapper returning its kernel's pole, a store, a declared result), a callee's constant
  // infinity is the infinity itself; where arithmetic uses it, it is the double algorithm's
  // answer, not a value the wider format computed, and it enters as a bound (the runtime's
  // __numfuzz_shadow_bound).
  void returned(IRBuilder<> &B, CallBase *C, Value *S) {
    bool Computed =
        any_of(C->users(), [&](User *U) { return isa<Instruction>(U) && computesOn(cast<Instruction>(U)); });
    if (Mpfr) {
      Shadow[C] = B.CreateCall(rt(NUMFUZZ_SYM_MPFR_RETURNED, ST, {ST, Dbl}), {S, toDouble(B, C)});
      if (Computed)
        Consumed[C] = B.CreateCall(rt(NUMFUZZ_SYM_SHADOW_BOUND, ST, {ST, Dbl, I32}),
                                   {S, toDouble(B, C), B.getInt32(widthOf(C->getType()))});
      return;
    }
    Type *I80 = IntegerType::get(Ctx, 80);
    Value *Bits = B.CreateAnd(B.CreateBitCast(S, I80), ConstantInt::get(I80, APInt::getSignedMaxValue(80)));
    Value *FromConstant = B.CreateICmpEQ(Bits, B.CreateBitCast(NaNFromReturnedConstant, I80));
    Shadow[C] = B.CreateSelect(FromConstant, B.CreateFPExt(C, F80), S);
    if (Computed)
      Consumed[C] = B.CreateCall(rt(NUMFUZZ_SYM_SHADOW_BOUND, F80, {F80, I32, Dbl, I32}),
                                 {S, B.CreateZExt(FromConstant, I32), toDouble(B, C), B.getInt32(widthOf(C->getType()))});
  }

  void visitCall(Function &F, CallBase *Call) {
    if (Call->isInlineAsm())
      return;
    if (auto *II = dyn_cast<IntrinsicInst>(Call))
      return visitIntrinsic(II);
    Function *Callee = Call->getCalledFunction();
    StringRef Name = Callee ? Callee->getName() : "";
    if (Name == NUMFUZZ_SYM_RESULT_F32 || Name == NUMFUZZ_SYM_RESULT_F64)
      return declaredResult(Call);
    if (Name.starts_with("__numfuzz") || Name.starts_with("numfuzz_"))
      return;
    // A libm call: the callee's own shadow when the program defines it and it is instrumented
    // (a libm under test), else its long double version on the shadows.
    Value *Wide = Callee && Libm.count(Name) && shadowed(Call->getType()) ? libm(Call, Name) : nullptr;
    crossCall(Call, Wide);
  }

  // The long double version of a libm call on the shadows (null when its shape is not one
  // the shadow can repeat, such as lgamma_r's pointer).
  Value *libm(CallBase *Call, StringRef Name) {
    auto Wide = WideOf.find(Name);
    if (Wide == WideOf.end() && !Mpfr)
      return nullptr;
    unsigned Shape = Libm[Name];
    SmallVector<Type *, 2> Params;
    SmallVector<Value *, 2> Args;
    for (Value *A : Call->args()) {
      if (shadowed(A->getType())) {
        Params.push_back(ST);
        Args.push_back(get(A, Call));
      } else if (A->getType()->isIntegerTy() && Shape == NUMFUZZ_SHAPE_FLOAT_INT) {
        Params.push_back(A->getType());
        Args.push_back(A);
      } else {
        return nullptr;
      }
    }
    IRBuilder<> B(Call->getNextNode());
    unsigned Op = LibmOp.lookup(Name);
    Value *S = Mpfr ? mpfrCall(B, Op, Args) : born(B, B.CreateCall(rt(Wide->second.c_str(), F80, Params), Args), Args);
    bool Log = Op == NUMFUZZ_OP_LOG || Op == NUMFUZZ_OP_LOG2 || Op == NUMFUZZ_OP_LOG10;
    return track(B, Call, Log ? pole(B, S, Call->getArgOperand(0), Args[0]) : S, Args, Op);
  }

  void visitIntrinsic(IntrinsicInst *II) {
    Intrinsic::ID ID = II->getIntrinsicID();
    IRBuilder<> B(II->getNextNode());
    if (auto *Copy = dyn_cast<MemTransferInst>(II)) {
      B.CreateCall(rt(NUMFUZZ_SYM_SHADOW_COPY, Void, {PtrTy, PtrTy, I64}),
                   {Copy->getRawDest(), Copy->getRawSource(), B.CreateZExtOrTrunc(Copy->getLength(), I64)});
      return;
    }
    if (ID == Intrinsic::is_fpclass && shadowed(II->getArgOperand(0)->getType())) {
      Value *X = II->getArgOperand(0);
      Value *S = Mpfr ? B.CreateICmpNE(B.CreateCall(rt(NUMFUZZ_SYM_MPFR_IS_FPCLASS, I32, {ST, I32}),
                                                    {get(X, II), II->getArgOperand(1)}),
                                       B.getInt32(0))
                      : B.CreateCall(intrinsicDecl(M, ID, {F80}), {get(X, II), II->getArgOperand(1)});
      compared(B, II, S, X, X);
      return;
    }
    if (!shadowed(II->getType()))
      return;
    SmallVector<Type *, 2> Tys{F80};
    if (floatIntOverloaded(ID))
      Tys.push_back(II->getArgOperand(1)->getType());
    else if (!floatOverloaded(ID))
      return;
    SmallVector<Value *, 3> Args;
    for (Value *A : II->args())
      Args.push_back(shadowed(A->getType()) ? get(A, II) : A);
    Shadow[II] = Mpfr ? track(B, II, mpfrCall(B, mpfrOp(ID), Args), Args, mpfrOp(ID))
                      : born(B, B.CreateCall(intrinsicDecl(M, ID, Tys), Args), Args);
  }

  // A call to code that may be instrumented: the float arguments' shadows go ahead of it and
  // the result's comes back, both keyed by the callee; `Otherwise` (the libm version, else a
  // restart) when the callee did not return one.
  void crossCall(CallBase *Call, Value *Otherwise) {
    Value *Callee = Call->getCalledOperand();
    bool Args = !Call->getFunctionType()->isVarArg() &&
                any_of(Call->args(), [](Value *A) { return shadowed(A->getType()); });
    bool Result = shadowed(Call->getType());
    if (!Args && !Result)
      return;
    IRBuilder<> B(Call);
    B.CreateCall(rt(NUMFUZZ_SYM_SHADOW_CALL, Void, {PtrTy}), {Callee});
    unsigned K = 0;
    for (Value *A : Call->args()) {
      if (!Args || !shadowed(A->getType()))
        continue;
      B.CreateCall(rt(NUMFUZZ_SYM_SHADOW_SET_ARG, Void, {I32, Dbl, ST}),
                   {B.getInt32(K++), toDouble(B, A), get(A, Call)});
    }
    if (!Result || isa<InvokeInst>(Call) || Call->isTerminator())
      return;
    Instruction *Last = Otherwise ? cast<Instruction>(Otherwise) : Call;
    IRBuilder<> After(Last->getNextNode());
    if (!Otherwise)
      Otherwise = Mpfr ? fromValue(After, Call) : After.CreateFPExt(Call, F80);
    returned(After, Call,
             After.CreateCall(rt(NUMFUZZ_SYM_SHADOW_GET_RET, ST, {PtrTy, Dbl, ST}),
                              {Callee, toDouble(After, Call), Otherwise}));
  }

  // NUMFUZZ_RESULT(v): reported with its shadow instead.
  void declaredResult(CallBase *Call) {
    Value *V = Call->getArgOperand(1);
    IRBuilder<> B(Call);
    B.CreateCall(rt(NUMFUZZ_SYM_SHADOW_RESULT, Void, {PtrTy, Dbl, ST, I32}),
                 {Call->getArgOperand(0), toDouble(B, V), get(V, Call), B.getInt32(widthOf(V->getType()))});
    Call->eraseFromParent();
  }

  // A shadow build says so in its own section (numfuzz reads it from the ELF file).
  void markShadowBuild() {
    // 1: x87 shadows; 2: MPFR shadows.
    Constant *Init = ConstantInt::get(Type::getInt8Ty(Ctx), Mpfr ? 2 : 1);
    auto *GV = new GlobalVariable(M, Init->getType(), true, GlobalValue::PrivateLinkage, Init, ".numfuzz.shadow");
    GV->setSection(NUMFUZZ_SHADOW_SECTION);
    appendToCompilerUsed(M, {GV});
  }
};

struct NumfuzzPlacePass : PassInfoMixin<NumfuzzPlacePass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    notePlaces(M);
    return PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

struct NumfuzzShadowPass : PassInfoMixin<NumfuzzShadowPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    return Shadower(M).run() ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "numfuzz-shadow", "1", [](PassBuilder &PB) {
            if (mpfrBuild())
              PB.registerPipelineStartEPCallback(
                  [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(NumfuzzPlacePass()); });
#if LLVM_VERSION_MAJOR >= 20
            PB.registerOptimizerLastEPCallback([](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) {
              MPM.addPass(NumfuzzShadowPass());
            });
#else
            PB.registerOptimizerLastEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(NumfuzzShadowPass()); });
#endif
          }};
}
