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
//
// This file runs the pass's pieces (numfuzz-pass.h lists them, one job each) over a module
// and registers the pass with clang.

#include "numfuzz-pass.h"

#include "llvm/IR/DebugInfoMetadata.h"
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
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstdlib>

namespace numfuzz_pass {

ModuleIR::ModuleIR(Module &M)
    : M(M), Ctx(M.getContext()), PtrTy(PointerType::getUnqual(Ctx)), I8(Type::getInt8Ty(Ctx)),
      I16(Type::getInt16Ty(Ctx)), I32(Type::getInt32Ty(Ctx)), I64(Type::getInt64Ty(Ctx)) {}

AttributeList ModuleIR::hookAttributes() const {
  AttrBuilder AB(Ctx);
  AB.addAttribute(Attribute::NoUnwind);
  AB.addMemoryAttr(MemoryEffects::argMemOnly(ModRefInfo::ModRef) |
                   MemoryEffects::inaccessibleMemOnly(ModRefInfo::ModRef));
  return AttributeList::get(Ctx, AttributeList::FunctionIndex, AB);
}

bool ModuleIR::preservingCallsWork(Function &F) const {
  if (Triple(M.getTargetTriple()).getArch() != Triple::x86_64)
    return false;
  StringRef Features = F.getFnAttribute("target-features").getValueAsString();
  return !Features.contains("+avx");
}

} // namespace numfuzz_pass

namespace {

using namespace numfuzz_pass;

bool taintBuild() {
  const char *TaintEnv = std::getenv(NUMFUZZ_ENV_CC_TAINT);
  return TaintEnv && *TaintEnv && std::string(TaintEnv) != "0";
}

// numfuzz.h's own input readers: their comparisons and arithmetic are the harness API's,
// not the program's.
bool isHarnessApi(Function &F) {
  DISubprogram *SP = F.getSubprogram();
  return SP && (F.getName().starts_with("numfuzz_") || F.getName().starts_with("nf_")) &&
         SP->getFilename().ends_with("numfuzz.h");
}

// The module that defines the harness records its source file's absolute path, so that
// `numfuzz triage --repro` can print how to build a reproducer from it.
bool markHarnessSource(ModuleIR &IR) {
  Function *H = IR.M.getFunction("LLVMFuzzerTestOneInput");
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
    Path = IR.M.getSourceFileName();
  }
  sys::fs::make_absolute(Path);
  sys::path::remove_dots(Path, true);
  Constant *Init = ConstantDataArray::getString(IR.Ctx, Path.str());
  auto *GV = new GlobalVariable(IR.M, Init->getType(), true, GlobalValue::PrivateLinkage, Init, ".numfuzz.harness");
  GV->setSection(NUMFUZZ_HARNESS_SECTION);
  appendToCompilerUsed(IR.M, {GV});
  return true;
}

// A taint build says so in its own section (numfuzz reads it from the ELF file).
void markTaintBuild(ModuleIR &IR) {
  Constant *Init = ConstantInt::get(IR.I8, 1);
  auto *GV = new GlobalVariable(IR.M, IR.I8, true, GlobalValue::PrivateLinkage, Init, ".numfuzz.taint");
  GV->setSection(NUMFUZZ_TAINT_SECTION);
  appendToCompilerUsed(IR.M, {GV});
}

// Runs the pieces over a module, function by function, then finishes the module.
class Instrumenter {
public:
  explicit Instrumenter(Module &M)
      : IR(M), Records(IR), Checks(IR, Records), Taints(IR, Records), Comparisons(IR, Records), Split(IR), Fast(IR),
        Hooks(IR) {}

  bool run() {
    SmallVector<Function *, 64> Work;
    for (Function &F : IR.M) {
      if (F.isDeclaration() || F.hasAvailableExternallyLinkage() || F.getName().starts_with("__numfuzz"))
        continue;
      // Every function, the harness's too: a fast run must not lose a flag the program clears.
      if (!Taint)
        guardFenvCalls(IR, F);
      // Where a run that outlived its time limit may be cut (runtime/src/run_cut.rs); its
      // copies inherit the section.
      if (!Taint && !F.hasSection())
        F.setSection(NUMFUZZ_CODE_SECTION);
      if (!isHarnessApi(F))
        Work.push_back(&F);
    }
    bool Hooked = false;
    for (Function *F : Work) {
      // First, so that a split function's copies both report.
      Hooked |= Hooks.emit(*F);
      instrument(*F);
    }
    bool Harness = markHarnessSource(IR);
    if (Records.empty())
      return Harness || Hooked;
    if (Taint)
      markTaintBuild(IR);
    Fast.finishWords();
    Records.keepAll();
    emitConstructor();
    return true;
  }

private:
  // Split where it can be (see Splitter), else checked in place.
  void instrument(Function &F) {
    SmallVector<CheckPlan, 16> Plans = Planning.plans(F);
    if (!Taint && !Plans.empty() && Splitter::splittable(F))
      split(F, Plans);
    else
      checkInPlace(F, Plans);
  }

  // The checks and comparison hooks go to F's precise copy, the special-result bits to its
  // special-result copy; F, the fast copy, gets the dispatch to them and the sentinels.
  void split(Function &F, ArrayRef<CheckPlan> Plans) {
    Function *P = Split.preciseCopy(F);
    Records.setOrigin(&F);
    checkInPlace(*P, Planning.plans(*P));
    Records.setOrigin(nullptr);
    Function *S = FastCopyBits::hasSpecials(F, Plans) ? Split.specialsCopy(F) : nullptr;
    if (S)
      Fast.specialResults(*S, Planning.plans(*S));
    Split.dispatch(F, *P, S);
    Fast.sentinels(F, Plans);
  }

  void checkInPlace(Function &F, ArrayRef<CheckPlan> Plans) {
    // The program's comparisons, before the checks add their own.
    SmallVector<CmpInst *, 16> Cmps;
    if (!Taint)
      Cmps = CmpHooks::cmps(F);
    for (const CheckPlan &P : Plans) {
      if (Taint)
        Taints.emit(F, P);
      else
        Checks.emit(F, P);
    }
    for (CmpInst *C : Cmps)
      Comparisons.emit(F, C);
  }

  // Hands the module's record sections and special-result words to the runtime.
  void emitConstructor() {
    Function *Ctor = Function::Create(FunctionType::get(Type::getVoidTy(IR.Ctx), false), GlobalValue::InternalLinkage,
                                      "numfuzz.module_ctor", IR.M);
    IRBuilder<> B(BasicBlock::Create(IR.Ctx, "", Ctor));
    Records.registerSections(B);
    Fast.registerWords(B);
    B.CreateRetVoid();
    // Before ordinary constructors (65535), so sites are numbered before any program code
    // runs; sancov's guard constructors use the same early priority.
    appendToGlobalCtors(IR.M, Ctor, 2);
  }

  ModuleIR IR;
  bool Taint = taintBuild();
  Planner Planning;
  SiteRecords Records;
  CheckEmitter Checks;
  TaintHooks Taints;
  CmpHooks Comparisons;
  Splitter Split;
  FastCopyBits Fast;
  ErrorHooks Hooks;
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
