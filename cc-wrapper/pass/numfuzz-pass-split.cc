// Splitter: split builds' precise and special-result copies and the fast copies' dispatch to
// them.
//
// A function with checked operations becomes three: F itself, the fast copy, keeps the
// program's code; `F.numfuzz.precise` gets every check and the comparison hooks (a hook in a
// loop would keep the fast copy from being vectorised or unrolled as the program is;
// distances and operand logs are recorded in precise runs); `F.numfuzz.specials` gets the
// special-result bits (numfuzz-pass-fast.cc), which would cost every fast run 2-5x on
// straight-line FP code were they in F.
// F's entry reads the runtime's __numfuzz_precise and calls the copy it names (numfuzz-abi
// `copies`; see runtime/src/precise.rs for when). The other copies:
// - are internal and never inlined, so each function has one body of each and they do not
//   grow the fast callers they would be inlined into;
// - keep their coverage guards, with numbers of their own: a fuzzed input's coverage is its
//   fast run's (the other runs count into a scratch map), but a program with its own main
//   runs only the precise copies, and its coverage is theirs;
// - call F (not F's copy) for what they call: F's entry goes on to the same copy.

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

Function *Splitter::copy(Function &F, StringRef Suffix) {
  ValueToValueMapTy VMap;
  Function *C = CloneFunction(&F, VMap);
  C->setName(F.getName() + Suffix);
  C->setLinkage(GlobalValue::InternalLinkage);
  C->setVisibility(GlobalValue::DefaultVisibility);
  C->setDLLStorageClass(GlobalValue::DefaultStorageClass);
  // Dropped with the copy of an inline function the linker discards.
  C->setComdat(F.getComdat());
  C->removeFnAttr(Attribute::AlwaysInline);
  C->removeFnAttr(Attribute::InlineHint);
  C->addFnAttr(Attribute::NoInline);
  if (!SplitMarker) {
    SplitMarker = new GlobalVariable(IR.M, IR.I8, true, GlobalValue::WeakAnyLinkage, ConstantInt::get(IR.I8, 1),
                                     NUMFUZZ_SYM_SPLIT_BUILD);
    appendToCompilerUsed(IR.M, {SplitMarker});
  }
  return C;
}

Function *Splitter::preciseCopy(Function &F) { return copy(F, ".numfuzz.precise"); }

// Without coverage guards: the special-result pass's edges go to a scratch map and are
// forgotten (runtime/src/precise.rs), and legendre_Pl's copy called a guard in 15 places.
Function *Splitter::specialsCopy(Function &F) {
  Function *S = copy(F, ".numfuzz.specials");
  S->addFnAttr(Attribute::NoSanitizeCoverage);
  return S;
}

void Splitter::dispatch(Function &F, Function &P, Function *S) {
  if (!CopyByte) // (the program may declare it too: a benchmark's main does)
    CopyByte = IR.M.getOrInsertGlobal(NUMFUZZ_SYM_PRECISE, IR.I8);
  BasicBlock &Entry = F.getEntryBlock();
  BasicBlock::iterator Split = Entry.begin();
  while (isa<AllocaInst>(&*Split))
    ++Split;
  BasicBlock *Fast = Entry.splitBasicBlock(Split, "numfuzz.fast");
  Entry.getTerminator()->eraseFromParent();
  BasicBlock *ToCopy = BasicBlock::Create(IR.Ctx, "numfuzz.to_copy", &F, Fast);
  IRBuilder<> B(&Entry);
  Value *Copy = B.CreateLoad(IR.I8, CopyByte, "numfuzz.copy");
  auto Is = [&](IRBuilder<> &B, unsigned Value) { return B.CreateICmpEQ(Copy, ConstantInt::get(IR.I8, Value)); };
  // Without a special-result copy, F's own body serves that run too.
  Value *Other = S ? B.CreateNot(Is(B, NUMFUZZ_COPY_FAST)) : Is(B, NUMFUZZ_COPY_PRECISE);
  B.CreateCondBr(Other, ToCopy, Fast, MDBuilder(IR.Ctx).createBranchWeights(1, 1000));
  // One cold block and one call (of either copy): a block per copy would add a coverage guard
  // each, where no run's coverage is counted.
  IRBuilder<> CB(ToCopy);
  if (DISubprogram *SP = F.getSubprogram())
    CB.SetCurrentDebugLocation(DILocation::get(IR.Ctx, SP->getScopeLine(), 0, SP));
  Value *Callee = S ? CB.CreateSelect(Is(CB, NUMFUZZ_COPY_SPECIALS), S, &P, "numfuzz.callee") : &P;
  CallInst *Call = callWithArgs(CB, F, FunctionCallee(F.getFunctionType(), Callee));
  if (F.getReturnType()->isVoidTy())
    CB.CreateRetVoid();
  else
    CB.CreateRet(Call);
}

// Callee called with F's arguments, as F is called.
CallInst *Splitter::callWithArgs(IRBuilder<> &B, Function &F, FunctionCallee Callee) {
  SmallVector<Value *, 8> Args;
  for (Argument &A : F.args())
    Args.push_back(&A);
  CallInst *Call = B.CreateCall(Callee, Args);
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
