// SiteRecords: the static records of checked operations and hooked comparisons.

#include "numfuzz-pass.h"

#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

namespace numfuzz_pass {

SiteRecords::SiteRecords(ModuleIR &IR) : IR(IR) {
  Type *PtrTy = IR.PtrTy, *I8 = IR.I8, *I16 = IR.I16, *I32 = IR.I32;
  SiteTy = StructType::create(IR.Ctx, {I32, I16, I8, I8, I32, I32, PtrTy, PtrTy, PtrTy}, "numfuzz_site");
  CmpTy = StructType::create(IR.Ctx, {I32, I8, I8, I16, I32, I32, PtrTy, PtrTy, PtrTy}, "numfuzz_cmp");
}

GlobalVariable *SiteRecords::checkSite(Function &F, const CheckPlan &P) {
  SourceLoc L = locate(P.Inst, &F);
  Constant *Fields[] = {
      ConstantInt::get(IR.I32, NUMFUZZ_SITE_UNASSIGNED),
      ConstantInt::get(IR.I16, P.Op),
      ConstantInt::get(IR.I8, typeCode(P.FloatTy)),
      ConstantInt::get(IR.I8, P.Aux),
      ConstantInt::get(IR.I32, L.Line),
      ConstantInt::get(IR.I32, L.Col),
      str(L.File),
      str(L.Dir),
      str(demangle((Origin ? Origin : &F)->getName().str())),
  };
  return record(F, SiteTy, Fields, ".numfuzz.site", NUMFUZZ_SITES_SECTION, Sites);
}

GlobalVariable *SiteRecords::cmpSite(Function &F, CmpInst *C, int Operand) {
  SourceLoc L = locate(C, nullptr);
  Constant *Fields[] = {
      ConstantInt::get(IR.I32, NUMFUZZ_SITE_UNASSIGNED),
      ConstantInt::get(IR.I8, C->getPredicate()),
      ConstantInt::get(IR.I8, Operand),
      ConstantInt::get(IR.I16, 0),
      ConstantInt::get(IR.I32, L.Line),
      ConstantInt::get(IR.I32, L.Col),
      str(L.File),
      str(L.Dir),
      str(demangle((Origin ? Origin : &F)->getName().str())),
  };
  return record(F, CmpTy, Fields, ".numfuzz.cmp", NUMFUZZ_CMPS_SECTION, CmpSites);
}

void SiteRecords::keepAll() {
  if (!Sites.empty())
    appendToCompilerUsed(IR.M, Sites);
  if (!CmpSites.empty())
    appendToCompilerUsed(IR.M, CmpSites);
}

void SiteRecords::registerSections(IRBuilder<> &B) {
  if (!Sites.empty())
    registerSection(B, NUMFUZZ_SITES_SECTION, NUMFUZZ_SYM_REGISTER_SITES);
  if (!CmpSites.empty())
    registerSection(B, NUMFUZZ_CMPS_SECTION, NUMFUZZ_SYM_REGISTER_CMPS);
}

// One private string per distinct text: records of one file or function share theirs.
Constant *SiteRecords::str(StringRef S) {
  auto It = Strings.find(S);
  if (It != Strings.end())
    return It->second;
  Constant *Init = ConstantDataArray::getString(IR.Ctx, S);
  auto *GV = new GlobalVariable(IR.M, Init->getType(), true, GlobalValue::PrivateLinkage, Init, ".numfuzz.str");
  GV->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  GV->setAlignment(Align(1));
  Strings[S] = GV;
  return GV;
}

// Where an instruction is in the source: its debug location, else (for checks, which may
// be on instructions the front end left without one) the enclosing function's line.
SiteRecords::SourceLoc SiteRecords::locate(const Instruction *I, const Function *Fallback) const {
  SourceLoc L;
  L.File = IR.M.getSourceFileName();
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
GlobalVariable *SiteRecords::record(Function &F, StructType *Ty, ArrayRef<Constant *> Fields, const char *Name,
                                    const char *Section, SmallVectorImpl<GlobalValue *> &All) {
  auto *GV = new GlobalVariable(IR.M, Ty, false, GlobalValue::PrivateLinkage, ConstantStruct::get(Ty, Fields), Name);
  GV->setSection(Section);
  GV->setAlignment(Align(8));
  if (Comdat *C = F.getComdat())
    GV->setComdat(C);
  All.push_back(GV);
  return GV;
}

// The section's bounds (the linker's __start_/__stop_ symbols) to the runtime's Registrar.
void SiteRecords::registerSection(IRBuilder<> &B, const char *Section, const char *Registrar) {
  auto *Start =
      new GlobalVariable(IR.M, IR.I8, false, GlobalValue::ExternalLinkage, nullptr, std::string("__start_") + Section);
  auto *Stop =
      new GlobalVariable(IR.M, IR.I8, false, GlobalValue::ExternalLinkage, nullptr, std::string("__stop_") + Section);
  Start->setVisibility(GlobalValue::HiddenVisibility);
  Stop->setVisibility(GlobalValue::HiddenVisibility);
  FunctionCallee Register = IR.M.getOrInsertFunction(
      Registrar, FunctionType::get(Type::getVoidTy(IR.Ctx), {IR.PtrTy, IR.PtrTy}, false));
  B.CreateCall(Register, {Start, Stop});
}

} // namespace numfuzz_pass
