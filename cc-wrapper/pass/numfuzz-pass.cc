// numfuzz LLVM pass: puts an IEEE-754 exception checker (and the ErrBits hook, which lives in
// the same runtime call) after every floating-point operation, and records where each one is.
//
// For every checked operation the pass emits one static site record (numfuzz_site_t, see
// numfuzz_abi.h, generated from the numfuzz-abi crate) into the NUMFUZZ_SITES_SECTION section,
// and calls the runtime checker with a pointer to it plus the operands and the result. Each
// module gets a constructor that hands the section bounds to the runtime, which numbers the
// records; objects and static libraries compiled separately thus compose.
//
// The pass runs at the start of the pipeline (also at -O0), so source-level operations are
// checked before the optimizer contracts, vectorises or folds them. Checker calls never
// throw and only touch their arguments and the runtime's own memory, which lets the
// optimizer keep working around them.
//
// Taint builds (NUMFUZZ_CC_TAINT set in the environment, next to -fsanitize=dataflow): each
// checked operation's result is passed through a value-returning hook (`__numfuzz_taint_*`)
// and every use of the result reads the hook's return value instead, so the runtime decides
// the label DataFlowSanitizer gives the result. Comparison hooks and the inlined ErrBits
// update are left out: a taint build only replays.

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#if LLVM_VERSION_MAJOR >= 22
#include "llvm/Plugins/PassPlugin.h"
#else
#include "llvm/Passes/PassPlugin.h"
#endif
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ModRef.h"
#include "llvm/Support/Path.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include "numfuzz_abi.h"

#include <cstdlib>
#include <string>

using namespace llvm;

namespace {

struct LibmEntry {
  unsigned Type;
  unsigned Op;
  unsigned Shape;
};

// What a checked instruction is: op code, operand type, extra info, and its operands.
struct CheckPlan {
  Instruction *Inst = nullptr;
  unsigned Op = 0;
  Type *FloatTy = nullptr; // scalar float type of the operands
  unsigned Aux = 0;
  SmallVector<Value *, 3> Floats; // float operands (scalar or vector)
  Value *Int = nullptr;           // integer operand (ldexp n, powi n)
  Value *Result = nullptr;        // float result to report (scalar or vector), may be null
  bool ResultInSourceType = false; // fptrunc: widen the narrowed result back to the source type
};

int typeCode(Type *T) {
  if (T->isFloatTy())
    return NUMFUZZ_TYPE_F32;
  if (T->isDoubleTy())
    return NUMFUZZ_TYPE_F64;
  if (T->isX86_FP80Ty())
    return NUMFUZZ_TYPE_F80;
  return -1;
}

// The scalar float type of V's type if it is a supported float or a fixed vector of one.
Type *checkedScalar(Type *T) {
  if (auto *VT = dyn_cast<FixedVectorType>(T))
    T = VT->getElementType();
  return typeCode(T) >= 0 ? T : nullptr;
}

class Instrumenter {
public:
  explicit Instrumenter(Module &M) : M(M), Ctx(M.getContext()) {
#define NUMFUZZ_ADD_LIBM(name, type, op, shape) Libm[name] = LibmEntry{type, op, shape};
    NUMFUZZ_LIBM_CALLS(NUMFUZZ_ADD_LIBM)
#undef NUMFUZZ_ADD_LIBM
    PtrTy = PointerType::getUnqual(Ctx);
    I8 = Type::getInt8Ty(Ctx);
    I16 = Type::getInt16Ty(Ctx);
    I32 = Type::getInt32Ty(Ctx);
    I64 = Type::getInt64Ty(Ctx);
    SiteTy = StructType::create(Ctx, {I32, I16, I8, I8, I32, I32, PtrTy, PtrTy, PtrTy}, "numfuzz_site");
    CmpTy = StructType::create(Ctx, {I32, I8, I8, I16, I32, I32, PtrTy, PtrTy, PtrTy}, "numfuzz_cmp");
  }

  bool run() {
    const char *TaintEnv = std::getenv(NUMFUZZ_ENV_CC_TAINT);
    Taint = TaintEnv && *TaintEnv && std::string(TaintEnv) != "0";
    SmallVector<Function *, 64> Work;
    for (Function &F : M) {
      if (F.isDeclaration() || F.hasAvailableExternallyLinkage() || F.getName().starts_with("__numfuzz"))
        continue;
      // Every function, the harness's too: a fast run must not lose a flag the program clears.
      if (!Taint)
        guardFenvCalls(F);
      if (!isHarnessApi(F))
        Work.push_back(&F);
    }
    for (Function *Fn : Work) {
      Function &F = *Fn;
      SmallVector<CheckPlan, 16> Plans = plans(F);
      if (!Taint && !Plans.empty() && splittable(F)) {
        Function *P = preciseCopy(F);
        Origin = &F;
        // The program's comparisons, before the checks add their own.
        SmallVector<CmpInst *, 16> PreciseCmps = cmps(*P);
        checkAll(*P, plans(*P));
        for (CmpInst *C : PreciseCmps)
          emitCmp(*P, C);
        Origin = nullptr;
        dispatch(F, *P);
        sentinels(F, Plans);
        specialResults(F, Plans);
        continue;
      }
      SmallVector<CmpInst *, 16> Cmps = cmps(F);
      checkAll(F, Plans);
      for (CmpInst *C : Cmps)
        emitCmp(F, C);
    }
    bool Harness = markHarnessSource();
    if (Sites.empty() && CmpSites.empty())
      return Harness;
    if (Taint)
      markTaintBuild();
    finishSpecialWords();
    if (!Sites.empty())
      appendToCompilerUsed(M, Sites);
    if (!CmpSites.empty())
      appendToCompilerUsed(M, CmpSites);
    emitConstructor();
    return true;
  }

  // Every checked operation of F and how it is checked.
  SmallVector<CheckPlan, 16> plans(Function &F) {
    SmallVector<CheckPlan, 16> Plans;
    for (BasicBlock &BB : F)
      for (Instruction &I : BB) {
        CheckPlan P;
        if (plan(I, P))
          Plans.push_back(P);
      }
    return Plans;
  }

  // The comparisons of F worth a hook (none in taint builds).
  SmallVector<CmpInst *, 16> cmps(Function &F) {
    SmallVector<CmpInst *, 16> Cmps;
    for (BasicBlock &BB : F)
      for (Instruction &I : BB)
        if (auto *C = dyn_cast<CmpInst>(&I); C && cmpOperandCode(C) >= 0 && !Taint)
          Cmps.push_back(C);
    return Cmps;
  }

  void checkAll(Function &F, ArrayRef<CheckPlan> Plans) {
    F80Slots = nullptr;
    FnErrBitsMap = FnErrBitsSlots = nullptr;
    for (const CheckPlan &P : Plans) {
      if (Taint)
        emitTaint(F, P);
      else
        emit(F, P);
    }
  }

  // Split builds. A function with checked operations becomes two: F itself, the fast copy,
  // keeps the program's code; `F.numfuzz.precise` gets every check and the comparison hooks
  // (a hook in a loop would keep the fast copy from being vectorised or unrolled as the
  // program is; distances and operand logs are recorded in precise runs).
  // F's entry reads the runtime's __numfuzz_precise and calls the precise copy when it is set
  // (see runtime/src/precise.rs for when). The precise copy:
  // - is internal and never inlined, so each function has one precise body and the checks
  //   do not grow the fast callers it would be inlined into;
  // - keeps its coverage guards, with numbers of its own: a fuzzed input's coverage is its fast
  //   run's (a re-run counts into a scratch map), but a program with its own main runs only
  //   the precise copies, and its coverage is theirs;
  // - calls F (not F's precise copy) for what it calls: F's entry goes on to the precise copy.
  //
  // Not split (checked in place, as before): variadic and naked functions, musttail calls,
  // blocks whose address is taken, inalloca/preallocated/swifterror arguments, coroutines.
  bool splittable(Function &F) {
    if (F.isVarArg() || F.hasFnAttribute(Attribute::Naked) || F.isPresplitCoroutine())
      return false;
    for (Argument &A : F.args())
      if (A.hasInAllocaAttr() || A.hasPreallocatedAttr() || A.hasSwiftErrorAttr())
        return false;
    for (BasicBlock &BB : F) {
      if (BB.hasAddressTaken())
        return false;
      for (Instruction &I : BB)
        if (auto *CI = dyn_cast<CallInst>(&I); CI && CI->isMustTailCall())
          return false;
    }
    return true;
  }

  Function *preciseCopy(Function &F) {
    ValueToValueMapTy VMap;
    Function *P = CloneFunction(&F, VMap);
    P->setName(F.getName() + ".numfuzz.precise");
    P->setLinkage(GlobalValue::InternalLinkage);
    P->setVisibility(GlobalValue::DefaultVisibility);
    P->setDLLStorageClass(GlobalValue::DefaultStorageClass);
    // Dropped with the copy of an inline function the linker discards.
    P->setComdat(F.getComdat());
    P->removeFnAttr(Attribute::AlwaysInline);
    P->removeFnAttr(Attribute::InlineHint);
    P->addFnAttr(Attribute::NoInline);
    if (!SplitMarker) {
      SplitMarker = new GlobalVariable(M, I8, true, GlobalValue::WeakAnyLinkage, ConstantInt::get(I8, 1),
                                       NUMFUZZ_SYM_SPLIT_BUILD);
      appendToCompilerUsed(M, {SplitMarker});
    }
    return P;
  }

  // F's new entry: its static allocas, then `if (__numfuzz_precise) return P(args...);`.
  void dispatch(Function &F, Function &P) {
    if (!PreciseFlag) // (the program may declare it too: a benchmark's main does)
      PreciseFlag = M.getOrInsertGlobal(NUMFUZZ_SYM_PRECISE, I8);
    BasicBlock &Entry = F.getEntryBlock();
    BasicBlock::iterator Split = Entry.begin();
    while (isa<AllocaInst>(&*Split))
      ++Split;
    BasicBlock *Fast = Entry.splitBasicBlock(Split, "numfuzz.fast");
    Entry.getTerminator()->eraseFromParent();
    BasicBlock *ToPrecise = BasicBlock::Create(Ctx, "numfuzz.to_precise", &F, Fast);
    IRBuilder<> B(&Entry);
    Value *Precise = B.CreateICmpNE(B.CreateLoad(I8, PreciseFlag, "numfuzz.precise"), ConstantInt::get(I8, 0));
    B.CreateCondBr(Precise, ToPrecise, Fast, MDBuilder(Ctx).createBranchWeights(1, 1000));
    IRBuilder<> PB(ToPrecise);
    if (DISubprogram *SP = F.getSubprogram())
      PB.SetCurrentDebugLocation(DILocation::get(Ctx, SP->getScopeLine(), 0, SP));
    SmallVector<Value *, 8> Args;
    for (Argument &A : F.args())
      Args.push_back(&A);
    CallInst *Call = PB.CreateCall(&P, Args);
    Call->setCallingConv(F.getCallingConv());
    // The ABI-relevant argument and return attributes (byval, sret, zeroext, ...), which a
    // call must repeat; not the function's own.
    AttributeList FA = F.getAttributes();
    SmallVector<AttributeSet, 8> ParamAttrs;
    for (unsigned K = 0; K < F.arg_size(); ++K)
      ParamAttrs.push_back(FA.getParamAttrs(K));
    Call->setAttributes(AttributeList::get(Ctx, AttributeSet(), FA.getRetAttrs(), ParamAttrs));
    if (F.getReturnType()->isVoidTy())
      PB.CreateRetVoid();
    else
      PB.CreateRet(Call);
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
  void sentinels(Function &F, ArrayRef<CheckPlan> Plans) {
    Type *I1 = Type::getInt1Ty(Ctx);
    AllocaInst *Acc = nullptr;
    for (const CheckPlan &P : Plans) {
      if (!P.FloatTy || P.Inst->getFunction() != &F || (P.Op != NUMFUZZ_OP_FPTOSI && P.Op != NUMFUZZ_OP_FPTOUI))
        continue;
      if (!Acc) {
        IRBuilder<> EB(&*F.getEntryBlock().getFirstInsertionPt());
        Acc = EB.CreateAlloca(I1, nullptr, "numfuzz.recheck");
        EB.CreateStore(ConstantInt::getFalse(Ctx), Acc);
      }
      IRBuilder<> B(P.Inst->getNextNode());
      B.setIsFPConstrained(F.hasFnAttribute(Attribute::StrictFP));
      if (B.getIsFPConstrained())
        B.setDefaultConstrainedExcept(fp::ebIgnore);
      Value *Bad = outOfIntRange(B, P);
      if (isa<VectorType>(Bad->getType()))
        Bad = B.CreateOrReduce(Bad);
      B.CreateStore(B.CreateOr(B.CreateLoad(I1, Acc), Bad), Acc);
    }
    if (!Acc)
      return;
    auto *Flag = M.getOrInsertGlobal(NUMFUZZ_SYM_FAST_RECHECK, I8);
    for (BasicBlock &BB : F)
      if (auto *Ret = dyn_cast<ReturnInst>(BB.getTerminator())) {
        IRBuilder<> B(Ret);
        Value *Seen = B.CreateZExt(B.CreateLoad(I1, Acc), I8);
        B.CreateStore(B.CreateOr(B.CreateLoad(I8, Flag), Seen), Flag);
      }
  }

  // The fast copy's special-result bits (runtime/src/fast_specials.rs). Every checked operation
  // of F has one, set when its result is zero, subnormal, the least normal, infinite or NaN
  // (a conversion to an integer: when the sentinel fires): what an exception leaves at its site
  // (Overflow and DivByZero an infinity, Invalid a NaN, Underflow a tiny result, the least
  // normal included since x86 detects tininess after rounding). Which sites went special tells
  // apart two fast runs that share an edge path and a flag set (`a*b + c*d`, either product
  // overflowing), so the runtime skips a precise re-run only where an earlier one saw the same.
  // The bits gather in locals (registers once promoted, OR reductions in vectorised loops);
  // each return ORs them into this function's words of the module's array and marks the
  // module dirty, branch-free like the sentinel, so no block and no coverage guard is added.
  void specialResults(Function &F, ArrayRef<CheckPlan> Plans) {
    SmallVector<const CheckPlan *, 16> Ops;
    for (const CheckPlan &P : Plans) {
      bool ToInt = P.Op == NUMFUZZ_OP_FPTOSI || P.Op == NUMFUZZ_OP_FPTOUI;
      if (P.FloatTy && P.Inst->getFunction() == &F && (P.Result || ToInt))
        Ops.push_back(&P);
    }
    if (Ops.empty())
      return;
    if (!SpecialWords) {
      // A placeholder, replaced by the array once every function has its words.
      SpecialWords = new GlobalVariable(M, I64, false, GlobalValue::InternalLinkage, ConstantInt::get(I64, 0),
                                        "numfuzz.fast_specials.placeholder");
      SpecialDirty = new GlobalVariable(M, I8, false, GlobalValue::InternalLinkage, ConstantInt::get(I8, 0),
                                        "numfuzz.fast_specials.dirty");
    }
    unsigned Words = (Ops.size() + 63) / 64, Base = SpecialWordCount;
    SpecialWordCount += Words;
    SmallVector<AllocaInst *, 2> Acc;
    IRBuilder<> EB(&*F.getEntryBlock().getFirstInsertionPt());
    for (unsigned W = 0; W < Words; ++W) {
      Acc.push_back(EB.CreateAlloca(I64, nullptr, "numfuzz.specials"));
      EB.CreateStore(ConstantInt::get(I64, 0), Acc.back());
    }
    for (unsigned K = 0; K < Ops.size(); ++K) {
      const CheckPlan &P = *Ops[K];
      IRBuilder<> B(P.Inst->getNextNode());
      B.setIsFPConstrained(F.hasFnAttribute(Attribute::StrictFP));
      if (B.getIsFPConstrained())
        B.setDefaultConstrainedExcept(fp::ebIgnore);
      Value *Special = P.Result ? isSpecial(B, P.Result) : outOfIntRange(B, P);
      if (isa<VectorType>(Special->getType()))
        Special = B.CreateOrReduce(Special);
      Value *Bit = B.CreateSelect(Special, ConstantInt::get(I64, uint64_t(1) << (K % 64)), ConstantInt::get(I64, 0));
      AllocaInst *A = Acc[K / 64];
      B.CreateStore(B.CreateOr(B.CreateLoad(I64, A), Bit), A);
    }
    for (BasicBlock &BB : F) {
      Instruction *T = BB.getTerminator();
      if (!isa<ReturnInst>(T) && !isa<ResumeInst>(T))
        continue;
      IRBuilder<> B(T);
      Value *Any = ConstantInt::get(I64, 0);
      for (unsigned W = 0; W < Words; ++W) {
        Value *Bits = B.CreateLoad(I64, Acc[W]);
        Value *Word = B.CreateConstInBoundsGEP1_64(I64, SpecialWords, Base + W);
        B.CreateStore(B.CreateOr(B.CreateLoad(I64, Word), Bits), Word);
        Any = B.CreateOr(Any, Bits);
      }
      Value *Dirty = B.CreateZExt(B.CreateICmpNE(Any, ConstantInt::get(I64, 0)), I8);
      B.CreateStore(B.CreateOr(B.CreateLoad(I8, SpecialDirty), Dirty), SpecialDirty);
    }
  }

  // V (scalar or vector) is zero, subnormal, the least normal, infinite or NaN: |V| <= least
  // normal (NaN included: unordered) or |V| > largest. Quiet compares: they raise nothing.
  Value *isSpecial(IRBuilder<> &B, Value *V) {
    Type *Ty = V->getType();
    const fltSemantics &Sem = Ty->getScalarType()->getFltSemantics();
    Value *Abs = B.CreateUnaryIntrinsic(Intrinsic::fabs, V);
    Value *Tiny = B.CreateFCmpULE(Abs, ConstantFP::get(Ty, APFloat::getSmallestNormalized(Sem)));
    Value *Huge = B.CreateFCmpOGT(Abs, ConstantFP::get(Ty, APFloat::getLargest(Sem)));
    return B.CreateOr(Tiny, Huge, "numfuzz.special");
  }

  // The module's words, one array for all its fast copies, registered with the runtime.
  void finishSpecialWords() {
    if (!SpecialWords)
      return;
    auto *Ty = ArrayType::get(I64, SpecialWordCount);
    auto *Words = new GlobalVariable(M, Ty, false, GlobalValue::InternalLinkage, ConstantAggregateZero::get(Ty),
                                     "numfuzz.fast_specials");
    SpecialWords->replaceAllUsesWith(Words);
    SpecialWords->eraseFromParent();
    SpecialWords = Words;
  }

  // fptosi/fptoui: the argument is NaN or its truncation is outside the N-bit integer range,
  // exactly the checker's Invalid (runtime/src/check/conv.rs).
  Value *outOfIntRange(IRBuilder<> &B, const CheckPlan &P) {
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

  // Before each call that lowers or replaces the FP flags, a call of the runtime's barrier,
  // which keeps what the program is about to erase (only fast runs read the flags).
  void guardFenvCalls(Function &F) {
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
        M.getOrInsertFunction(NUMFUZZ_SYM_FENV_BARRIER, FunctionType::get(Type::getVoidTy(Ctx), false));
    for (CallBase *CB : Calls)
      IRBuilder<>(CB).CreateCall(Barrier);
  }

private:
  Module &M;
  LLVMContext &Ctx;
  StringMap<LibmEntry> Libm;
  StringMap<Constant *> Strings;
  SmallVector<GlobalValue *, 64> Sites;
  SmallVector<GlobalValue *, 64> CmpSites;
  GlobalVariable *CmpMode = nullptr;
  Constant *PreciseFlag = nullptr;
  GlobalVariable *SplitMarker = nullptr;
  // The fast copies' special-result words and the module's dirty byte (see specialResults).
  GlobalVariable *SpecialWords = nullptr, *SpecialDirty = nullptr;
  unsigned SpecialWordCount = 0;
  // While a precise copy is checked: the function it copies, whose name its sites carry.
  Function *Origin = nullptr;
  GlobalVariable *ErrBitsMap = nullptr, *ErrBitsSlots = nullptr, *ErrBitsSink = nullptr;
  // The current function's loads of the two (see errBitsMapOf).
  Value *FnErrBitsMap = nullptr, *FnErrBitsSlots = nullptr;
  AllocaInst *F80CmpSlots = nullptr;
  Function *F80CmpSlotsOwner = nullptr;
  PointerType *PtrTy;
  Type *I8, *I16, *I32, *I64;
  StructType *SiteTy;
  StructType *CmpTy;
  AllocaInst *F80Slots = nullptr;
  bool Taint = false;
  // Taint builds: each checked result and the hook value that replaced it.
  DenseMap<Value *, Value *> Replaced;

  // Decides whether I is checked and how.
  bool plan(Instruction &I, CheckPlan &P) {
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
    if (It == Libm.end())
      return false;
    const LibmEntry &E = It->second;
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

  bool planIntrinsic(CallInst *CI, StringRef Name, CheckPlan &P) {
    // llvm.<base>.<type suffixes>, or llvm.experimental.constrained.<base>.<type suffixes>
    // in code built with `#pragma STDC FENV_ACCESS ON`, -frounding-math or
    // -ffp-exception-behavior=strict: the same operations, with the rounding and exception
    // arguments (metadata) after the value arguments.
    StringRef Rest = Name.drop_front(5);
    bool Constrained = Rest.consume_front("experimental.constrained.");
    StringRef Base = Rest.split('.').first;
    unsigned Shape = NUMFUZZ_SHAPE_UNARY;
    // (A constrained instruction of an unchecked type falls through to no plan below.)
    if (Constrained && planConstrainedInstruction(CI, Base, P))
      return true;
    if (Base == "fma" || Base == "fmuladd") {
      P.Op = Base == "fma" ? NUMFUZZ_OP_FMA : NUMFUZZ_OP_FMULADD;
      Shape = NUMFUZZ_SHAPE_TERNARY;
    } else if (Base == "powi") {
      P.Op = NUMFUZZ_OP_POWI;
      Shape = NUMFUZZ_SHAPE_FLOAT_INT;
    } else if (Base == "ldexp") {
      P.Op = NUMFUZZ_OP_LDEXP;
      Shape = NUMFUZZ_SHAPE_FLOAT_INT;
    } else if (Base == "pow" || Base == "atan2") {
      P.Op = Base == "pow" ? NUMFUZZ_OP_POW : NUMFUZZ_OP_ATAN2;
      Shape = NUMFUZZ_SHAPE_BINARY;
    } else {
      static const struct {
        const char *Name;
        unsigned Op;
      } Unary[] = {{"sqrt", NUMFUZZ_OP_SQRT}, {"exp", NUMFUZZ_OP_EXP},   {"exp2", NUMFUZZ_OP_EXP2},
                   {"log", NUMFUZZ_OP_LOG},   {"log2", NUMFUZZ_OP_LOG2}, {"log10", NUMFUZZ_OP_LOG10},
                   {"sin", NUMFUZZ_OP_SIN},   {"cos", NUMFUZZ_OP_COS},   {"tan", NUMFUZZ_OP_TAN},
                   {"asin", NUMFUZZ_OP_ASIN}, {"acos", NUMFUZZ_OP_ACOS}, {"atan", NUMFUZZ_OP_ATAN},
                   {"sinh", NUMFUZZ_OP_SINH}, {"cosh", NUMFUZZ_OP_COSH}, {"tanh", NUMFUZZ_OP_TANH}};
      P.Op = 0;
      for (const auto &U : Unary)
        if (Base == U.Name)
          P.Op = U.Op;
      if (!P.Op)
        return false;
    }
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
      // Vector ldexp takes a vector of exponents; those are extracted per lane below.
      P.Int = CI->getArgOperand(1);
    }
    return true;
  }

  // The constrained forms of the instructions plan() handles (fadd ... fptrunc): the same
  // plans, from the intrinsic's value arguments.
  bool planConstrainedInstruction(CallInst *CI, StringRef Base, CheckPlan &P) {
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
  bool planArith(unsigned Op, Value *A, Value *B, Value *Result, CheckPlan &P) {
    P.Op = Op;
    P.FloatTy = checkedScalar(Result->getType());
    P.Floats = {A, B};
    P.Result = Result;
    return P.FloatTy != nullptr;
  }

  // A conversion of Src to the integer (or integer vector) type IntTy.
  bool planToInt(bool Signed, Value *Src, Type *IntTy, CheckPlan &P) {
    P.Op = Signed ? NUMFUZZ_OP_FPTOSI : NUMFUZZ_OP_FPTOUI;
    P.FloatTy = checkedScalar(Src->getType());
    unsigned Bits = IntTy->getScalarSizeInBits();
    P.Aux = Bits;
    P.Floats = {Src};
    return P.FloatTy && Bits > 0 && Bits <= 255;
  }

  // Src narrowed to Result's float type.
  bool planNarrow(Value *Src, Value *Result, CheckPlan &P) {
    P.Op = NUMFUZZ_OP_FPTRUNC;
    P.FloatTy = checkedScalar(Src->getType());
    Type *Dst = checkedScalar(Result->getType());
    P.Aux = Dst ? typeCode(Dst) : 0;
    P.Floats = {Src};
    P.Result = Result;
    P.ResultInSourceType = true;
    return P.FloatTy && Dst;
  }

  Constant *str(StringRef S) {
    auto It = Strings.find(S);
    if (It != Strings.end())
      return It->second;
    Constant *Init = ConstantDataArray::getString(Ctx, S);
    auto *GV = new GlobalVariable(M, Init->getType(), true, GlobalValue::PrivateLinkage, Init, ".numfuzz.str");
    GV->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    GV->setAlignment(Align(1));
    Strings[S] = GV;
    return GV;
  }

  struct SourceLoc {
    unsigned Line = 0, Col = 0;
    std::string File, Dir;
  };

  // Where an instruction is in the source: its debug location, else (for checks, which may
  // be on instructions the front end left without one) the enclosing function's line.
  SourceLoc locate(const Instruction *I, const Function *Fallback) {
    SourceLoc L;
    L.File = M.getSourceFileName();
    if (const DILocation *Loc = I->getDebugLoc().get()) {
      L.Line = Loc->getLine();
      L.Col = Loc->getColumn();
      L.File = Loc->getFilename().str();
      L.Dir = Loc->getDirectory().str();
    } else if (DISubprogram *SP = Fallback ? Fallback->getSubprogram() : nullptr) {
      L.Line = SP->getLine();
      L.File = SP->getFilename().str();
      L.Dir = SP->getDirectory().str();
    }
    return L;
  }

  // One static record in `Section`, numbered by the runtime at start-up. A record of a
  // discarded copy of an inline function goes away with that copy.
  GlobalVariable *record(Function &F, StructType *Ty, ArrayRef<Constant *> Fields, const char *Name,
                         const char *Section, SmallVectorImpl<GlobalValue *> &All) {
    auto *GV = new GlobalVariable(M, Ty, false, GlobalValue::PrivateLinkage, ConstantStruct::get(Ty, Fields), Name);
    GV->setSection(Section);
    GV->setAlignment(Align(8));
    if (Comdat *C = F.getComdat())
      GV->setComdat(C);
    All.push_back(GV);
    return GV;
  }

  GlobalVariable *site(Function &F, const CheckPlan &P) {
    SourceLoc L = locate(P.Inst, &F);
    Constant *Fields[] = {
        ConstantInt::get(I32, NUMFUZZ_SITE_UNASSIGNED),
        ConstantInt::get(I16, P.Op),
        ConstantInt::get(I8, typeCode(P.FloatTy)),
        ConstantInt::get(I8, P.Aux),
        ConstantInt::get(I32, L.Line),
        ConstantInt::get(I32, L.Col),
        str(L.File),
        str(L.Dir),
        str(demangle((Origin ? Origin : &F)->getName().str())),
    };
    return record(F, SiteTy, Fields, ".numfuzz.site", NUMFUZZ_SITES_SECTION, Sites);
  }

  FunctionCallee checker(Type *FloatTy) {
    AttributeList Attrs = hookAttributes();
    Type *VoidTy = Type::getVoidTy(Ctx);
    if (FloatTy->isX86_FP80Ty())
      return M.getOrInsertFunction(NUMFUZZ_SYM_CHECK_F80, FunctionType::get(VoidTy, {PtrTy, PtrTy, I64}, false), Attrs);
    const char *Name = FloatTy->isFloatTy() ? NUMFUZZ_SYM_CHECK_F32 : NUMFUZZ_SYM_CHECK_F64;
    return M.getOrInsertFunction(Name, FunctionType::get(VoidTy, {PtrTy, FloatTy, FloatTy, FloatTy, I64, FloatTy}, false),
                                 Attrs);
  }

  // The function's four x86_fp80 slots (operands a, b, c and the result) for the f80 hooks.
  AllocaInst *f80Slots(Function &F, Type *FloatTy) {
    if (!F80Slots) {
      IRBuilder<> EntryB(&*F.getEntryBlock().getFirstInsertionPt());
      F80Slots = EntryB.CreateAlloca(ArrayType::get(FloatTy, 4), nullptr, "numfuzz.f80");
      F80Slots->setAlignment(Align(16));
    }
    return F80Slots;
  }

  Value *f80Slot(IRBuilder<> &B, unsigned J) {
    return B.CreateConstInBoundsGEP2_32(F80Slots->getAllocatedType(), F80Slots, 0, J);
  }

  AttributeList hookAttributes() {
    AttrBuilder AB(Ctx);
    AB.addAttribute(Attribute::NoUnwind);
    AB.addMemoryAttr(MemoryEffects::argMemOnly(ModRefInfo::ModRef) |
                     MemoryEffects::inaccessibleMemOnly(ModRefInfo::ModRef));
    return AttributeList::get(Ctx, AttributeList::FunctionIndex, AB);
  }

  Value *lane(IRBuilder<> &B, Value *V, unsigned K) {
    if (isa<FixedVectorType>(V->getType()))
      return B.CreateExtractElement(V, K);
    return V;
  }

  void emit(Function &F, const CheckPlan &P) {
    GlobalVariable *Site = site(F, P);
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
    Type *Shaped = P.Floats[0]->getType();
    if (auto *VT = dyn_cast<FixedVectorType>(Shaped))
      Lanes = VT->getNumElements();
    FunctionCallee Check = checker(P.FloatTy);
    Constant *Zero = ConstantFP::get(P.FloatTy, 0.0);
    for (unsigned K = 0; K < Lanes; ++K) {
      Value *Ops[3] = {Zero, Zero, Zero};
      for (unsigned J = 0; J < P.Floats.size(); ++J)
        Ops[J] = lane(B, P.Floats[J], K);
      Value *R = Zero;
      if (P.Result) {
        R = lane(B, P.Result, K);
        // The narrowed result of an fptrunc widens back exactly (it is never a signalling
        // NaN), so it travels in the source type.
        if (P.ResultInSourceType)
          R = B.CreateFPExt(R, P.FloatTy);
      }
      Value *Int = ConstantInt::get(I64, 0);
      if (P.Int)
        Int = B.CreateSExtOrTrunc(lane(B, P.Int, K), I64);
      if (P.FloatTy->isX86_FP80Ty()) {
        f80Slots(F, P.FloatTy);
        Value *Vals[4] = {Ops[0], Ops[1], Ops[2], R};
        for (unsigned J = 0; J < 4; ++J)
          B.CreateStore(Vals[J], f80Slot(B, J));
        B.CreateCall(Check, {Site, F80Slots, Int});
      } else if (Lanes == 1 && !F.hasFnAttribute(Attribute::StrictFP) && inlinable(P.Op)) {
        emitInlineArith(F, B, P, Site, Check, Ops, Int, R);
      } else {
        B.CreateCall(Check, {Site, Ops[0], Ops[1], Ops[2], Int, R});
      }
    }
  }

  // Taint builds: the operation's result (per lane) goes through a hook that returns it, and
  // every earlier use of the result reads what the hook returned (see the file comment).
  void emitTaint(Function &F, CheckPlan P) {
    // Operands that an earlier hook replaced are read through it (their labels are the
    // runtime's, not DataFlowSanitizer's plain union).
    for (Value *&V : P.Floats)
      if (auto It = Replaced.find(V); It != Replaced.end())
        V = It->second;
    if (P.Int)
      if (auto It = Replaced.find(P.Int); It != Replaced.end())
        P.Int = It->second;
    GlobalVariable *Site = site(F, P);
    Instruction *After = P.Inst->getNextNode();
    if (!After)
      return;
    bool ToInt = P.Op == NUMFUZZ_OP_FPTOSI || P.Op == NUMFUZZ_OP_FPTOUI;
    Value *Produced = ToInt ? P.Inst : P.Result;
    if (!Produced)
      return;
    SmallVector<Use *, 8> Uses;
    for (Use &U : Produced->uses())
      Uses.push_back(&U);
    IRBuilder<> B(After);
    B.SetCurrentDebugLocation(P.Inst->getDebugLoc());
    B.setIsFPConstrained(F.hasFnAttribute(Attribute::StrictFP));
    AttributeList Attrs = hookAttributes();
    Type *FT = P.FloatTy;
    bool F80 = FT->isX86_FP80Ty();
    const char *Name = FT->isFloatTy() ? (ToInt ? NUMFUZZ_SYM_TAINT_INT_F32 : NUMFUZZ_SYM_TAINT_F32)
                       : FT->isDoubleTy() ? (ToInt ? NUMFUZZ_SYM_TAINT_INT_F64 : NUMFUZZ_SYM_TAINT_F64)
                                          : (ToInt ? NUMFUZZ_SYM_TAINT_INT_F80 : NUMFUZZ_SYM_TAINT_F80);
    FunctionType *HookTy;
    if (ToInt)
      HookTy = FunctionType::get(I64, {PtrTy, F80 ? PtrTy : FT, I64}, false);
    else if (F80)
      HookTy = FunctionType::get(Type::getVoidTy(Ctx), {PtrTy, PtrTy, I64}, false);
    else
      HookTy = FunctionType::get(FT, {PtrTy, FT, FT, FT, I64, FT}, false);
    FunctionCallee Hook = M.getOrInsertFunction(Name, HookTy, Attrs);
    if (F80)
      f80Slots(F, FT);

    Type *ShapeTy = Produced->getType();
    auto *VT = dyn_cast<FixedVectorType>(ShapeTy);
    unsigned Lanes = VT ? VT->getNumElements() : 1;
    Constant *Zero = ConstantFP::get(FT, 0.0);
    Value *Rebuilt = VT ? static_cast<Value *>(PoisonValue::get(VT)) : nullptr;
    Value *Scalar = nullptr;
    for (unsigned K = 0; K < Lanes; ++K) {
      Value *Ops[3] = {Zero, Zero, Zero};
      for (unsigned J = 0; J < P.Floats.size(); ++J)
        Ops[J] = lane(B, P.Floats[J], K);
      Value *Out;
      if (ToInt) {
        Type *LaneInt = ShapeTy->getScalarType();
        Value *RI = lane(B, Produced, K);
        RI = P.Op == NUMFUZZ_OP_FPTOSI ? B.CreateSExtOrTrunc(RI, I64) : B.CreateZExtOrTrunc(RI, I64);
        Value *A = Ops[0];
        if (F80) {
          B.CreateStore(A, f80Slot(B, 0));
          A = f80Slot(B, 0);
        }
        Out = B.CreateTrunc(B.CreateCall(Hook, {Site, A, RI}), LaneInt);
      } else {
        Value *R = lane(B, Produced, K);
        if (P.ResultInSourceType)
          R = B.CreateFPExt(R, FT);
        Value *Int = P.Int ? B.CreateSExtOrTrunc(lane(B, P.Int, K), I64) : ConstantInt::get(I64, 0);
        if (F80) {
          Value *Vals[4] = {Ops[0], Ops[1], Ops[2], R};
          for (unsigned J = 0; J < 4; ++J)
            B.CreateStore(Vals[J], f80Slot(B, J));
          B.CreateCall(Hook, {Site, F80Slots, Int});
          Out = B.CreateLoad(FT, f80Slot(B, 3));
        } else {
          Out = B.CreateCall(Hook, {Site, Ops[0], Ops[1], Ops[2], Int, R});
        }
        // A narrowed result travelled widened; narrowing it back is exact.
        if (P.ResultInSourceType)
          Out = B.CreateFPTrunc(Out, ShapeTy->getScalarType());
      }
      if (VT)
        Rebuilt = B.CreateInsertElement(Rebuilt, Out, K);
      else
        Scalar = Out;
    }
    Value *New = VT ? Rebuilt : Scalar;
    for (Use *U : Uses)
      U->set(New);
    Replaced[Produced] = New;
  }

  // The module that defines the harness records its source file's absolute path, so that
  // `numfuzz triage --repro` can print how to build a reproducer from it.
  bool markHarnessSource() {
    Function *H = M.getFunction("LLVMFuzzerTestOneInput");
    if (!H || H->isDeclaration())
      return false;
    SmallString<256> Path;
    if (DISubprogram *SP = H->getSubprogram()) {
      Path = SP->getFilename();
      if (!sys::path::is_absolute(Path)) {
        SmallString<256> Dir(SP->getDirectory());
        sys::path::append(Dir, Path);
        Path = Dir;
      }
    } else {
      Path = M.getSourceFileName();
    }
    sys::fs::make_absolute(Path);
    sys::path::remove_dots(Path, true);
    Constant *Init = ConstantDataArray::getString(Ctx, Path.str());
    auto *GV = new GlobalVariable(M, Init->getType(), true, GlobalValue::PrivateLinkage, Init, ".numfuzz.harness");
    GV->setSection(NUMFUZZ_HARNESS_SECTION);
    appendToCompilerUsed(M, {GV});
    return true;
  }

  // A taint build says so in its own section (numfuzz reads it from the ELF file).
  void markTaintBuild() {
    Constant *Init = ConstantInt::get(I8, 1);
    auto *GV = new GlobalVariable(M, I8, true, GlobalValue::PrivateLinkage, Init, ".numfuzz.taint");
    GV->setSection(NUMFUZZ_TAINT_SECTION);
    appendToCompilerUsed(M, {GV});
  }

  static bool inlinable(unsigned Op) {
    return Op == NUMFUZZ_OP_FADD || Op == NUMFUZZ_OP_FSUB || Op == NUMFUZZ_OP_FMUL || Op == NUMFUZZ_OP_FDIV;
  }

  // Almost every f32/f64 `+ - * /` result lies strictly between the smallest normal and the
  // largest finite value, where no flag can be raised (the runtime's own fast path). There
  // the ErrBits update is done inline — the same integer arithmetic on the result's bits as
  // the runtime — and the runtime is called for everything else.
  //
  // The inline update has no branch: it is computed for every result and made harmless with
  // selects where it does not apply (a non-normal result stores 0xFF under umin, a site
  // without a slot in the map stores into a private sink). On x86-64 the runtime is called
  // from an inline asm that tests the verdict itself and calls a register-preserving thunk
  // (see runtime/src/preserving.rs), so the check adds no block: SanitizerCoverage, which runs
  // after this pass and instruments every new edge (it splits critical edges), adds no guard
  // call on the hot path, and no FP register is spilled around a call. Elsewhere the call sits
  // in a cold block of its own.
  void emitInlineArith(Function &F, IRBuilder<> &B, const CheckPlan &P, GlobalVariable *Site, FunctionCallee Check,
                       Value *Ops[3], Value *Int, Value *R) {
    bool Double = P.FloatTy->isDoubleTy();
    unsigned W = Double ? 64 : 32;
    IntegerType *IntTy = IntegerType::get(Ctx, W);
    uint64_t MinNormal = Double ? 0x0010000000000000ULL : 0x00800000ULL;
    uint64_t MaxFinite = Double ? 0x7FEFFFFFFFFFFFFFULL : 0x7F7FFFFFULL;
    uint64_t AbsMask = Double ? 0x7FFFFFFFFFFFFFFFULL : 0x7FFFFFFFULL;
    errBitsMapOf(F);
    auto Abs = [&](Value *V) { return B.CreateAnd(B.CreateBitCast(V, IntTy), ConstantInt::get(IntTy, AbsMask)); };
    Value *AbsR = Abs(R);
    // MinNormal < |r| < MaxFinite, as one unsigned comparison.
    Value *Normal = B.CreateICmpULT(B.CreateSub(AbsR, ConstantInt::get(IntTy, MinNormal + 1)),
                                    ConstantInt::get(IntTy, MaxFinite - MinNormal - 1));
    // A site's slot is numbered once, by the runtime's constructor, before the program runs.
    LoadInst *SlotNo = B.CreateLoad(I32, Site);
    SlotNo->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(Ctx, {}));
    Value *Slot = B.CreateMul(B.CreateZExt(SlotNo, I64), ConstantInt::get(I64, 4));
    // An unnumbered site (u32::MAX) or a map without room (none, or a probing run) falls to
    // the runtime.
    Value *Fits = B.CreateICmpULT(B.CreateAdd(Slot, ConstantInt::get(I64, 3)), FnErrBitsSlots);
    Value *Base = B.CreateSelect(Fits, B.CreateGEP(I8, FnErrBitsMap, Slot), ErrBitsSink);
    Constant *Unmeasured = ConstantInt::get(I8, 0xFF);
    // ErrBits = bit length of a (positive) distance in ordered-float positions. Where the
    // result is normal the distance is at least 1, so ctlz may treat 0 as poison (a poison
    // operand in select's other arm does not reach its result).
    auto Lower = [&](unsigned Kind, Value *Distance) {
      Value *Len =
          B.CreateSub(ConstantInt::get(IntTy, W), B.CreateBinaryIntrinsic(Intrinsic::ctlz, Distance, B.getTrue()));
      Value *EB = B.CreateSelect(Normal, B.CreateTrunc(Len, I8), Unmeasured);
      Value *Ptr = B.CreateConstGEP1_64(I8, Base, Kind);
      // umin on 32 bits: x86 has a cmov for those, not for bytes.
      Value *Old = B.CreateZExt(B.CreateLoad(I8, Ptr), I32);
      B.CreateStore(B.CreateTrunc(B.CreateBinaryIntrinsic(Intrinsic::umin, Old, B.CreateZExt(EB, I32)), I8), Ptr);
    };
    Lower(NUMFUZZ_KIND_OVERFLOW, B.CreateSub(ConstantInt::get(IntTy, MaxFinite), AbsR));
    Lower(NUMFUZZ_KIND_UNDERFLOW, B.CreateSub(AbsR, ConstantInt::get(IntTy, MinNormal)));
    // A normal quotient means a finite non-zero divisor: its distance to zero.
    if (P.Op == NUMFUZZ_OP_FDIV)
      Lower(NUMFUZZ_KIND_DIVBYZERO, Abs(Ops[1]));

    Value *Slow = B.CreateNot(B.CreateAnd(Normal, Fits));
    if (preservingCallsWork(F)) {
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
      Type *VoidTy = Type::getVoidTy(Ctx);
      FunctionType *AsmTy =
          FunctionType::get(VoidTy, {PtrTy, I32, PtrTy, P.FloatTy, P.FloatTy, P.FloatTy, I64, P.FloatTy}, false);
      InlineAsm *IA = InlineAsm::get(AsmTy, Asm, Constraints, /*hasSideEffects=*/true);
      CallInst *Call = B.CreateCall(IA, {Base, B.CreateZExt(Slow, I32), Site, Ops[0], Ops[1], Ops[2], Int, R});
      Call->addParamAttr(0, Attribute::get(Ctx, Attribute::ElementType, ArrayType::get(I8, 4)));
      return;
    }
    MDNode *Unlikely = MDBuilder(Ctx).createBranchWeights(1, 1000);
    Instruction *SlowTerm = SplitBlockAndInsertIfThen(Slow, &*B.GetInsertPoint(), false, Unlikely);
    IRBuilder<> SlowB(SlowTerm);
    SlowB.SetCurrentDebugLocation(B.getCurrentDebugLocation());
    SlowB.CreateCall(Check, {Site, Ops[0], Ops[1], Ops[2], Int, R});
  }

  // A call from inline asm pushes its return address below rsp, where the red zone may hold
  // the function's locals. Without a red zone nothing below rsp is live, and rsp stays where
  // the function's unwind information says it is, so a backtrace through the thunk (a crash
  // handler's, when the stack runs out inside a check) stays right.
  static void noRedZone(Function &F) { F.addFnAttr(Attribute::NoRedZone); }

  // The register-preserving thunks exist on x86-64 and keep xmm registers whole only where
  // the function does not use AVX (see runtime/src/preserving.rs).
  bool preservingCallsWork(Function &F) {
    if (Triple(M.getTargetTriple()).getArch() != Triple::x86_64)
      return false;
    StringRef Features = F.getFnAttribute("target-features").getValueAsString();
    return !Features.contains("+avx");
  }

  // The ErrBits map and its slot count, loaded once at the function's entry (they change only
  // between runs), and the module's sink for updates that have no slot.
  void errBitsMapOf(Function &F) {
    if (!ErrBitsMap) {
      ErrBitsMap = new GlobalVariable(M, PtrTy, false, GlobalValue::ExternalLinkage, nullptr, NUMFUZZ_SYM_ERRBITS_MAP);
      ErrBitsSlots = new GlobalVariable(M, I64, false, GlobalValue::ExternalLinkage, nullptr, NUMFUZZ_SYM_ERRBITS_SLOTS);
      Type *SinkTy = ArrayType::get(I8, 4);
      ErrBitsSink = new GlobalVariable(M, SinkTy, false, GlobalValue::PrivateLinkage, ConstantAggregateZero::get(SinkTy),
                                       ".numfuzz.errbits_sink");
    }
    if (!FnErrBitsMap) {
      IRBuilder<> EntryB(&*F.getEntryBlock().getFirstInsertionPt());
      FnErrBitsMap = EntryB.CreateLoad(PtrTy, ErrBitsMap, "numfuzz.errbits_map");
      FnErrBitsSlots = EntryB.CreateLoad(I64, ErrBitsSlots, "numfuzz.errbits_slots");
    }
  }

  // numfuzz.h's own input readers: their comparisons and arithmetic are the harness API's,
  // not the program's.
  static bool isHarnessApi(Function &F) {
    DISubprogram *SP = F.getSubprogram();
    return SP && (F.getName().starts_with("numfuzz_") || F.getName().starts_with("nf_")) &&
           SP->getFilename().ends_with("numfuzz.h");
  }

  // numfuzz_abi.h's operand code of a comparison worth recording, or -1: floats of the
  // checked formats, integers of 8-64 bits (fdlibm compares the words of doubles); not
  // pointers, booleans or vectors.
  static int cmpOperandCode(CmpInst *C) {
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
  // 0 as one 64-bit word, which is 0 exactly when both are, so the outcome is the same; its
  // distance is about the ordered distance of the double to the constant, where the or of the
  // two words gives the low word's noise and local search cannot descend on it.
  static std::pair<Value *, Value *> orOfWords(CmpInst *C) {
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

  GlobalVariable *cmpRecord(Function &F, CmpInst *C) {
    SourceLoc L = locate(C, nullptr);
    int Operand = orOfWords(C).first ? NUMFUZZ_CMP_I64 : cmpOperandCode(C);
    Constant *Fields[] = {
        ConstantInt::get(I32, NUMFUZZ_SITE_UNASSIGNED),
        ConstantInt::get(I8, C->getPredicate()),
        ConstantInt::get(I8, Operand),
        ConstantInt::get(I16, 0),
        ConstantInt::get(I32, L.Line),
        ConstantInt::get(I32, L.Col),
        str(L.File),
        str(L.Dir),
        str(demangle((Origin ? Origin : &F)->getName().str())),
    };
    return record(F, CmpTy, Fields, ".numfuzz.cmp", NUMFUZZ_CMPS_SECTION, CmpSites);
  }

  // Before the comparison: `if (__numfuzz_cmp_mode) hook(record, a, b)`. The mode is 0 unless
  // a numfuzz campaign asks for distances or operands, so a comparison otherwise costs a
  // load and a branch.
  void emitCmp(Function &F, CmpInst *C) {
    GlobalVariable *Rec = cmpRecord(F, C);
    if (!CmpMode) {
      CmpMode = new GlobalVariable(M, I8, false, GlobalValue::ExternalLinkage, nullptr, NUMFUZZ_SYM_CMP_MODE);
    }
    IRBuilder<> Head(C);
    Head.SetCurrentDebugLocation(C->getDebugLoc());
    Value *Mode = Head.CreateLoad(I8, CmpMode, "numfuzz.cmp_mode");
    if (emitPreservingCmp(F, C, Rec, Head, Mode))
      return;
    Instruction *Then = SplitBlockAndInsertIfThen(Head.CreateICmpNE(Mode, ConstantInt::get(I8, 0)), C, false);
    IRBuilder<> B(Then);
    B.SetCurrentDebugLocation(C->getDebugLoc());
    B.setIsFPConstrained(F.hasFnAttribute(Attribute::StrictFP));
    AttributeList Attrs = hookAttributes();
    Type *VoidTy = Type::getVoidTy(Ctx);
    Value *A = C->getOperand(0), *Bv = C->getOperand(1);
    Type *T = A->getType();
    CallInst *Call;
    if (T->isIntegerTy()) {
      FunctionCallee Hook =
          M.getOrInsertFunction(NUMFUZZ_SYM_CMP_INT, FunctionType::get(VoidTy, {PtrTy, I64, I64}, false), Attrs);
      if (auto [High, Low] = orOfWords(C); High) {
        Value *Wide = B.CreateSExt(High, I64);
        Value *Abs = B.CreateSelect(B.CreateICmpSLT(Wide, ConstantInt::get(I64, 0)), B.CreateNeg(Wide), Wide);
        A = B.CreateOr(B.CreateShl(Abs, 32), B.CreateZExt(Low, I64));
        Bv = ConstantInt::get(I64, 0);
      }
      Call = B.CreateCall(Hook, {Rec, B.CreateZExt(A, I64), B.CreateZExt(Bv, I64)});
    } else if (T->isX86_FP80Ty()) {
      if (F80CmpSlotsOwner != &F) {
        IRBuilder<> EntryB(&*F.getEntryBlock().getFirstInsertionPt());
        F80CmpSlots = EntryB.CreateAlloca(ArrayType::get(T, 2), nullptr, "numfuzz.cmp_f80");
        F80CmpSlots->setAlignment(Align(16));
        F80CmpSlotsOwner = &F;
      }
      B.CreateStore(A, B.CreateConstInBoundsGEP2_32(F80CmpSlots->getAllocatedType(), F80CmpSlots, 0, 0));
      B.CreateStore(Bv, B.CreateConstInBoundsGEP2_32(F80CmpSlots->getAllocatedType(), F80CmpSlots, 0, 1));
      FunctionCallee Hook =
          M.getOrInsertFunction(NUMFUZZ_SYM_CMP_F80, FunctionType::get(VoidTy, {PtrTy, PtrTy}, false), Attrs);
      Call = B.CreateCall(Hook, {Rec, F80CmpSlots});
    } else {
      const char *Name = T->isFloatTy() ? NUMFUZZ_SYM_CMP_F32 : NUMFUZZ_SYM_CMP_F64;
      FunctionCallee Hook = M.getOrInsertFunction(Name, FunctionType::get(VoidTy, {PtrTy, T, T}, false), Attrs);
      Call = B.CreateCall(Hook, {Rec, A, Bv});
    }
    if (F.hasFnAttribute(Attribute::StrictFP))
      Call->addFnAttr(Attribute::StrictFP);
  }

  // As the checks' slow path (emitInlineArith): on x86-64 the hook is called from an inline
  // asm that tests the mode itself and calls a register-preserving thunk, so the comparison
  // gets no block (and no coverage guard) of its own. Integer and f32/f64 comparisons outside
  // strictfp functions; false when the caller must emit the branch.
  bool emitPreservingCmp(Function &F, CmpInst *C, GlobalVariable *Rec, IRBuilder<> &B, Value *Mode) {
    if (!preservingCallsWork(F) || F.hasFnAttribute(Attribute::StrictFP))
      return false;
    Value *A = C->getOperand(0), *Bv = C->getOperand(1);
    Type *T = A->getType();
    const char *Thunk;
    std::string Constraints = "r,{rdi},";
    if (T->isIntegerTy()) {
      if (auto [High, Low] = orOfWords(C); High) {
        Value *Wide = B.CreateSExt(High, I64);
        Value *Abs = B.CreateSelect(B.CreateICmpSLT(Wide, ConstantInt::get(I64, 0)), B.CreateNeg(Wide), Wide);
        A = B.CreateOr(B.CreateShl(Abs, 32), B.CreateZExt(Low, I64));
        Bv = ConstantInt::get(I64, 0);
      }
      A = B.CreateZExt(A, I64);
      Bv = B.CreateZExt(Bv, I64);
      T = I64;
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
    FunctionType *AsmTy = FunctionType::get(Type::getVoidTy(Ctx), {I32, PtrTy, T, T}, false);
    B.CreateCall(InlineAsm::get(AsmTy, Asm, Constraints, /*hasSideEffects=*/true), {B.CreateZExt(Mode, I32), Rec, A, Bv});
    return true;
  }

  void registerSection(IRBuilder<> &B, const char *Section, const char *Registrar) {
    auto *Start =
        new GlobalVariable(M, I8, false, GlobalValue::ExternalLinkage, nullptr, std::string("__start_") + Section);
    auto *Stop =
        new GlobalVariable(M, I8, false, GlobalValue::ExternalLinkage, nullptr, std::string("__stop_") + Section);
    Start->setVisibility(GlobalValue::HiddenVisibility);
    Stop->setVisibility(GlobalValue::HiddenVisibility);
    FunctionCallee Register =
        M.getOrInsertFunction(Registrar, FunctionType::get(Type::getVoidTy(Ctx), {PtrTy, PtrTy}, false));
    B.CreateCall(Register, {Start, Stop});
  }

  void emitConstructor() {
    Function *Ctor = Function::Create(FunctionType::get(Type::getVoidTy(Ctx), false), GlobalValue::InternalLinkage,
                                      "numfuzz.module_ctor", M);
    IRBuilder<> B(BasicBlock::Create(Ctx, "", Ctor));
    if (!Sites.empty())
      registerSection(B, NUMFUZZ_SITES_SECTION, NUMFUZZ_SYM_REGISTER_SITES);
    if (!CmpSites.empty())
      registerSection(B, NUMFUZZ_CMPS_SECTION, NUMFUZZ_SYM_REGISTER_CMPS);
    if (SpecialWords) {
      FunctionCallee Register = M.getOrInsertFunction(
          NUMFUZZ_SYM_REGISTER_FAST_SPECIALS, FunctionType::get(Type::getVoidTy(Ctx), {PtrTy, I64, PtrTy}, false));
      B.CreateCall(Register, {SpecialWords, ConstantInt::get(I64, SpecialWordCount), SpecialDirty});
    }
    B.CreateRetVoid();
    // Before ordinary constructors (65535), so sites are numbered before any program code
    // runs; sancov's guard constructors use the same early priority.
    appendToGlobalCtors(M, Ctor, 2);
  }
};

struct NumfuzzPass : PassInfoMixin<NumfuzzPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    return Instrumenter(M).run() ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "numfuzz", "1", [](PassBuilder &PB) {
            PB.registerPipelineStartEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(NumfuzzPass()); });
          }};
}
