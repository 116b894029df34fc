// ErrorHooks: the library's own error reports. Before each call of a function that
// NUMFUZZ_CC_ERROR_HOOK names (comma-separated, e.g. gsl_error), a call of the runtime's
// numfuzz_error_reported with the call's source line, its reason (the first argument that is a
// constant C string, else NULL) and its code (the last integer argument, else 0). The line is
// the call's own: GSL_ERROR expands where the error is found, which is where a maintainer looks.
//
// In the same modules, after each direct call that returns an integer, a test of the runtime's
// __numfuzz_error_pending and, once an error was reported, a call of __numfuzz_status_returned
// with the call's line, the callee's name and the integer: where a status was passed on and
// where a function that received one returned success. A run without a report pays a load and
// a branch per such call.

#include "numfuzz-pass.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <cstdlib>

namespace numfuzz_pass {

// A call's file and line as the reports give them: its debug location, else the module's file.
static std::pair<std::string, unsigned> sourceLine(const Instruction &I) {
  if (const DILocation *Loc = I.getDebugLoc().get())
    return {Loc->getFilename().str(), Loc->getLine()};
  return {I.getModule()->getSourceFileName(), 0};
}

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
  SmallVector<CallInst *, 16> Returns;
  for (Instruction &I : instructions(F))
    if (auto *CI = dyn_cast<CallInst>(&I); CI && returnsStatus(*CI))
      Returns.push_back(CI);
  for (CallInst *CI : Returns)
    recordReturn(*CI);
  return !Calls.empty() || !Returns.empty();
}

// A direct call of program code returning an integer (not an intrinsic, the runtime, the hook).
bool ErrorHooks::returnsStatus(const CallInst &CI) const {
  const Function *Callee = CI.getCalledFunction();
  if (!Callee || Callee->isIntrinsic() || !CI.getType()->isIntegerTy() || CI.getType()->getIntegerBitWidth() > 64)
    return false;
  StringRef Name = Callee->getName();
  return !Names.contains(Name) && !Name.starts_with("numfuzz_") && !Name.starts_with("__numfuzz") &&
         !Name.starts_with("nf_") && !Name.starts_with("__");
}

void ErrorHooks::recordReturn(CallInst &CI) {
  if (!Pending)
    Pending = IR.M.getOrInsertGlobal(NUMFUZZ_SYM_ERROR_PENDING, IR.I8);
  Instruction *Next = CI.getNextNode();
  IRBuilder<> Head(Next);
  Head.SetCurrentDebugLocation(CI.getDebugLoc());
  Value *On = Head.CreateICmpNE(Head.CreateLoad(IR.I8, Pending, "numfuzz.error_pending"), ConstantInt::get(IR.I8, 0));
  Instruction *Then = SplitBlockAndInsertIfThen(On, Next, false);
  IRBuilder<> B(Then);
  B.SetCurrentDebugLocation(CI.getDebugLoc());
  auto [File, Line] = sourceLine(CI);
  FunctionCallee Record = IR.M.getOrInsertFunction(
      NUMFUZZ_SYM_STATUS_RETURNED,
      FunctionType::get(Type::getVoidTy(IR.Ctx), {IR.PtrTy, IR.I32, IR.PtrTy, IR.I64}, false));
  B.CreateCall(Record, {B.CreateGlobalString(File, ".numfuzz.status_file"), ConstantInt::get(IR.I32, Line),
                        B.CreateGlobalString(CI.getCalledFunction()->getName(), ".numfuzz.status_callee"),
                        B.CreateSExtOrTrunc(&CI, IR.I64)});
}

void ErrorHooks::report(CallBase &CB) {
  IRBuilder<> B(&CB);
  auto [File, Line] = sourceLine(CB);
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
