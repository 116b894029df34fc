// Splitter: split builds' precise copies and the fast copies' dispatch to them.
//
// A function with checked operations becomes two: F itself, the fast copy, keeps the
// program's code; `F.numfuzz.precise` gets every check and the comparison hooks (a hook in a
// loop would keep the fast copy from being vectorised or unrolled as the program is;
// distances and operand logs are recorded in precise runs).
// F's entry reads the runtime's __numfuzz_precise and calls the precise copy when it is set
// (see runtime/src/precise.rs for when). The precise copy:
// - is internal and never inlined, so each function has one precise body and the checks
//   do not grow the fast callers it would be inlined into;
// - keeps its coverage guards, with numbers of its own: a fuzzed input's coverage is its fast
//   run's (a re-run counts into a scratch map), but a program with its own main runs only
//   the precise copies, and its coverage is theirs;
// - calls F (not F's precise copy) for what it calls: F's entry goes on to the precise copy.

#include "numfuzz-pass.h"

#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

namespace numfuzz_pass {

// Not split (checked in place, as before): variadic and naked functions, musttail calls,
// blocks whose address is taken, inalloca/preallocated/swifterror arguments, coroutines.
bool Splitter::splittable(Function &F) {
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

Function *Splitter::preciseCopy(Function &F) {
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
    SplitMarker = new GlobalVariable(IR.M, IR.I8, true, GlobalValue::WeakAnyLinkage, ConstantInt::get(IR.I8, 1),
                                     NUMFUZZ_SYM_SPLIT_BUILD);
    appendToCompilerUsed(IR.M, {SplitMarker});
  }
  return P;
}

void Splitter::dispatch(Function &F, Function &P) {
  if (!PreciseFlag) // (the program may declare it too: a benchmark's main does)
    PreciseFlag = IR.M.getOrInsertGlobal(NUMFUZZ_SYM_PRECISE, IR.I8);
  BasicBlock &Entry = F.getEntryBlock();
  BasicBlock::iterator Split = Entry.begin();
  while (isa<AllocaInst>(&*Split))
    ++Split;
  BasicBlock *Fast = Entry.splitBasicBlock(Split, "numfuzz.fast");
  Entry.getTerminator()->eraseFromParent();
  BasicBlock *ToPrecise = BasicBlock::Create(IR.Ctx, "numfuzz.to_precise", &F, Fast);
  IRBuilder<> B(&Entry);
  Value *Precise = B.CreateICmpNE(B.CreateLoad(IR.I8, PreciseFlag, "numfuzz.precise"), ConstantInt::get(IR.I8, 0));
  B.CreateCondBr(Precise, ToPrecise, Fast, MDBuilder(IR.Ctx).createBranchWeights(1, 1000));
  IRBuilder<> PB(ToPrecise);
  if (DISubprogram *SP = F.getSubprogram())
    PB.SetCurrentDebugLocation(DILocation::get(IR.Ctx, SP->getScopeLine(), 0, SP));
  CallInst *Call = callWithArgs(PB, F, P);
  if (F.getReturnType()->isVoidTy())
    PB.CreateRetVoid();
  else
    PB.CreateRet(Call);
}

// P called with F's arguments, as F is called.
CallInst *Splitter::callWithArgs(IRBuilder<> &B, Function &F, Function &P) {
  SmallVector<Value *, 8> Args;
  for (Argument &A : F.args())
    Args.push_back(&A);
  CallInst *Call = B.CreateCall(&P, Args);
  Call->setCallingConv(F.getCallingConv());
  // The ABI-relevant argument and return attributes (byval, sret, zeroext, ...), which a
  // call must repeat; not the function's own.
  AttributeList FA = F.getAttributes();
  SmallVector<AttributeSet, 8> ParamAttrs;
  for (unsigned K = 0; K < F.arg_size(); ++K)
    ParamAttrs.push_back(FA.getParamAttrs(K));
  Call->setAttributes(AttributeList::get(IR.Ctx, AttributeSet(), FA.getRetAttrs(), ParamAttrs));
  return Call;
}

} // namespace numfuzz_pass
