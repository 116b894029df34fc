// ErrorHooks: the library's own error reports. Before each call of a function that
// NUMFUZZ_CC_ERROR_HOOK names (comma-separated, e.g. gsl_error), a call of the runtime's
// numfuzz_error_reported with the call's source line, its reason (the first argument that is a
// constant C string, else NULL) and its code (the last integer argument, else 0). The line is
// the call's own: GSL_ERROR expands where the error is found, which is where a maintainer looks.

#include "numfuzz-pass.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/InstIterator.h"

#include <cstdlib>

namespace numfuzz_pass {

ErrorHooks::ErrorHooks(ModuleIR &IR) : IR(IR) {
  const char *Env = std::getenv(NUMFUZZ_ENV_CC_ERROR_HOOK);
  if (!Env)
    return;
  SmallVector<StringRef, 4> Parts;
  StringRef(Env).split(Parts, ',', -1, false);
  for (StringRef P : Parts)
    if (!P.trim().empty())
      Names.insert(P.trim());
}

bool ErrorHooks::emit(Function &F) {
  if (Names.empty())
    return false;
  SmallVector<CallBase *, 4> Calls;
  for (Instruction &I : instructions(F))
    if (auto *CB = dyn_cast<CallBase>(&I))
      if (Function *Callee = CB->getCalledFunction(); Callee && Names.contains(Callee->getName()))
        Calls.push_back(CB);
  for (CallBase *CB : Calls)
    report(*CB);
  return !Calls.empty();
}

void ErrorHooks::report(CallBase &CB) {
  IRBuilder<> B(&CB);
  std::string File = CB.getModule()->getSourceFileName();
  unsigned Line = 0;
  if (const DILocation *Loc = CB.getDebugLoc().get()) {
    File = Loc->getFilename().str();
    Line = Loc->getLine();
  }
  Value *Reason = ConstantPointerNull::get(IR.PtrTy);
  Value *Code = ConstantInt::get(IR.I64, 0);
  bool HasReason = false;
  for (Value *A : CB.args()) {
    StringRef Text;
    if (!HasReason && A->getType()->isPointerTy() && getConstantStringInfo(A, Text)) {
      Reason = A;
      HasReason = true;
    }
    if (A->getType()->isIntegerTy())
      Code = B.CreateSExtOrTrunc(A, IR.I64);
  }
  FunctionCallee Hook = IR.M.getOrInsertFunction(
      NUMFUZZ_SYM_ERROR_REPORTED, FunctionType::get(Type::getVoidTy(IR.Ctx), {IR.PtrTy, IR.I32, IR.PtrTy, IR.I64}, false));
  Value *FileText = B.CreateGlobalString(File, ".numfuzz.hook_file");
  B.CreateCall(Hook, {FileText, ConstantInt::get(IR.I32, Line), Reason, Code});
}

} // namespace numfuzz_pass
