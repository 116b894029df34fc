// The numfuzz checker pass's pieces (numfuzz-pass.cc says what the pass does and runs them in
// order). Each piece does one job and keeps the module-wide state of that job:
//
//   Planner       numfuzz-pass-plan.cc     which operations get a check, and with what (CheckPlan)
//   SiteRecords   numfuzz-pass-records.cc  the static records of checks and comparison hooks
//   CheckEmitter  numfuzz-pass-checks.cc   the checker call or inline ErrBits update after an operation
//   TaintHooks    numfuzz-pass-taint.cc    taint builds: hooks that stand in for the checked results
//   CmpHooks      numfuzz-pass-cmp.cc      the comparison hooks
//   Splitter      numfuzz-pass-split.cc    split builds: a function's precise copy and the dispatch to it
//   FastCopyBits  numfuzz-pass-fast.cc     the fast copies' sentinels and special-result bits, and the
//                                          barrier before the program's fenv calls
//   ErrorHooks    numfuzz-pass-hooks.cc    the runtime's report before each call of the library's error hook
//
// The IR depends on the order of emission (globals and declarations are appended, value names
// numbered, as they are created), so the driver calls the pieces in a fixed order.

#pragma once

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

#include "numfuzz_abi.h"

#include <string>
#include <utility>

namespace numfuzz_pass {

using namespace llvm;

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

// A conversion to an integer (fptosi/fptoui): it reports no float result.
inline bool isConversion(const CheckPlan &P) { return P.Op == NUMFUZZ_OP_FPTOSI || P.Op == NUMFUZZ_OP_FPTOUI; }

// numfuzz_abi.h's code of a checked float type, or -1.
inline int typeCode(Type *T) {
  if (T->isFloatTy())
    return NUMFUZZ_TYPE_F32;
  if (T->isDoubleTy())
    return NUMFUZZ_TYPE_F64;
  if (T->isX86_FP80Ty())
    return NUMFUZZ_TYPE_F80;
  return -1;
}

// The scalar float type of V's type if it is a supported float or a fixed vector of one.
inline Type *checkedScalar(Type *T) {
  if (auto *VT = dyn_cast<FixedVectorType>(T))
    T = VT->getElementType();
  return typeCode(T) >= 0 ? T : nullptr;
}

// Lane K of V, or V itself if it is a scalar.
inline Value *lane(IRBuilder<> &B, Value *V, unsigned K) {
  if (isa<FixedVectorType>(V->getType()))
    return B.CreateExtractElement(V, K);
  return V;
}

// Where code that F needs once goes: F's entry, before its first instruction.
inline Instruction *entryPoint(Function &F) { return &*F.getEntryBlock().getFirstInsertionPt(); }

// A call from inline asm pushes its return address below rsp, where the red zone may hold
// the function's locals. Without a red zone nothing below rsp is live, and rsp stays where
// the function's unwind information says it is, so a backtrace through the thunk (a crash
// handler's, when the stack runs out inside a check) stays right.
inline void noRedZone(Function &F) { F.addFnAttr(Attribute::NoRedZone); }

// The module being instrumented and the IR types every piece builds with.
struct ModuleIR {
  explicit ModuleIR(Module &M);
  // The runtime hooks' attributes: they never throw and only touch their arguments and the
  // runtime's own memory, which lets the optimizer keep working around them.
  AttributeList hookAttributes() const;
  // The register-preserving thunks exist on x86-64 and keep xmm registers whole only where
  // the function does not use AVX (see runtime/src/preserving.rs).
  bool preservingCallsWork(Function &F) const;

  Module &M;
  LLVMContext &Ctx;
  PointerType *PtrTy;
  Type *I8, *I16, *I32, *I64;
};

// A function's x86_fp80 scratch slots, an array allocated at its entry when the function first
// needs it: the f80 hooks take their operands by pointer.
class F80Slots {
public:
  F80Slots(unsigned Count, const char *Name) : Count(Count), Name(Name) {}
  // F's slots, of type F80.
  AllocaInst *of(Function &F, Type *F80) {
    if (Owner != &F) {
      IRBuilder<> EntryB(entryPoint(F));
      Slots = EntryB.CreateAlloca(ArrayType::get(F80, Count), nullptr, Name);
      Slots->setAlignment(Align(16));
      Owner = &F;
    }
    return Slots;
  }
  // The slots of the function last asked for, and a pointer to its slot J.
  AllocaInst *array() const { return Slots; }
  Value *slot(IRBuilder<> &B, unsigned J) const {
    return B.CreateConstInBoundsGEP2_32(Slots->getAllocatedType(), Slots, 0, J);
  }

private:
  unsigned Count;
  const char *Name;
  Function *Owner = nullptr;
  AllocaInst *Slots = nullptr;
};

// Which operations get a check and how: float arithmetic, conversions to integers, narrowings
// and the libm functions numfuzz_abi.h lists, as instructions, calls or intrinsics (plain or
// constrained), on the checked float types, scalar or in fixed vectors.
class Planner {
public:
  Planner();
  // Every checked operation of F and how it is checked.
  SmallVector<CheckPlan, 16> plans(Function &F) const;

private:
  struct LibmEntry {
    unsigned Type;
    unsigned Op;
    unsigned Shape;
  };

  bool plan(Instruction &I, CheckPlan &P) const;
  static bool planLibmCall(CallInst *CI, const LibmEntry &E, CheckPlan &P);
  static bool planIntrinsic(CallInst *CI, StringRef Name, CheckPlan &P);
  static unsigned intrinsicOp(StringRef Base, unsigned &Shape);
  static bool planConstrainedInstruction(CallInst *CI, StringRef Base, CheckPlan &P);
  static bool planArith(unsigned Op, Value *A, Value *B, Value *Result, CheckPlan &P);
  static bool planToInt(bool Signed, Value *Src, Type *IntTy, CheckPlan &P);
  static bool planNarrow(Value *Src, Value *Result, CheckPlan &P);

  StringMap<LibmEntry> Libm;
};

// One static record per checked operation (numfuzz_site_t) and per hooked comparison
// (numfuzz_cmp_t), each kind in its own section; the module's constructor hands the sections to
// the runtime, which numbers the records, so separately compiled objects compose.
class SiteRecords {
public:
  explicit SiteRecords(ModuleIR &IR);
  GlobalVariable *checkSite(Function &F, const CheckPlan &P);
  // Operand: numfuzz_abi.h's code of the operands the hook is given.
  GlobalVariable *cmpSite(Function &F, CmpInst *C, int Operand);
  // While a precise copy is instrumented: the function it copies, whose name its records carry.
  void setOrigin(Function *F) { Origin = F; }
  bool empty() const { return Sites.empty() && CmpSites.empty(); }
  // Every record into llvm.compiler.used: the runtime reads them through their sections.
  void keepAll();
  // In the module's constructor: each non-empty section's bounds to the runtime.
  void registerSections(IRBuilder<> &B);

private:
  struct SourceLoc {
    unsigned Line = 0, Col = 0;
    std::string File, Dir;
  };

  Constant *str(StringRef S);
  SourceLoc locate(const Instruction *I, const Function *Fallback) const;
  GlobalVariable *record(Function &F, StructType *Ty, ArrayRef<Constant *> Fields, const char *Name,
                         const char *Section, SmallVectorImpl<GlobalValue *> &All);
  void registerSection(IRBuilder<> &B, const char *Section, const char *Registrar);

  ModuleIR &IR;
  StructType *SiteTy;
  StructType *CmpTy;
  StringMap<Constant *> Strings;
  SmallVector<GlobalValue *, 64> Sites;
  SmallVector<GlobalValue *, 64> CmpSites;
  Function *Origin = nullptr;
};

// Lane K of P's float operands, zero where P has fewer than three.
void laneFloats(IRBuilder<> &B, const CheckPlan &P, unsigned K, Value *Ops[3]);
// Lane K of Result (P's result, scalar or vector) as the runtime takes it: in the source type.
Value *laneResult(IRBuilder<> &B, const CheckPlan &P, Value *Result, unsigned K);
// Lane K of P's integer operand as an i64, 0 where P has none.
Value *laneInt(IRBuilder<> &B, const CheckPlan &P, unsigned K);

// The runtime's checker (the ErrBits hook is the same call) after each checked operation of
// non-taint builds, one call per lane; scalar f32/f64 + - * / outside strictfp functions
// update ErrBits inline and call the runtime only where that cannot (see emitInlineArith).
class CheckEmitter {
public:
  CheckEmitter(ModuleIR &IR, SiteRecords &Records) : IR(IR), Records(Records) {}
  void emit(Function &F, const CheckPlan &P);

private:
  // Where the inline ErrBits update of a site stores (see emitInlineArith).
  struct ErrBitsTarget {
    Value *Base; // the site's four ErrBits bytes, or the sink
    Value *Fits; // the site has bytes in the map
  };

  FunctionCallee checker(Type *FloatTy);
  static bool inlinable(unsigned Op);
  void emitInlineArith(Function &F, IRBuilder<> &B, const CheckPlan &P, GlobalVariable *Site, FunctionCallee Check,
                       Value *Ops[3], Value *Int, Value *R);
  ErrBitsTarget errBitsTarget(IRBuilder<> &B, GlobalVariable *Site);
  void callPreserving(Function &F, IRBuilder<> &B, const CheckPlan &P, Value *Slow, Value *Base, GlobalVariable *Site,
                      Value *Ops[3], Value *Int, Value *R);
  void errBitsMapOf(Function &F);

  ModuleIR &IR;
  SiteRecords &Records;
  F80Slots F80{4, "numfuzz.f80"}; // operands a, b, c and the result
  GlobalVariable *ErrBitsMap = nullptr, *ErrBitsSlots = nullptr, *ErrBitsSink = nullptr;
  // The loads of the two in ErrBitsOwner (see errBitsMapOf).
  Function *ErrBitsOwner = nullptr;
  Value *FnErrBitsMap = nullptr, *FnErrBitsSlots = nullptr;
};

// Taint builds: each checked result (per lane) goes through a hook that returns it, and every
// use of the result reads the hook's value instead (see numfuzz-pass.cc).
class TaintHooks {
public:
  TaintHooks(ModuleIR &IR, SiteRecords &Records) : IR(IR), Records(Records) {}
  void emit(Function &F, CheckPlan P);

private:
  FunctionCallee hook(Type *FloatTy, bool ToInt);
  Value *hookedLane(IRBuilder<> &B, const CheckPlan &P, FunctionCallee Hook, GlobalVariable *Site, Value *Produced,
                    unsigned K);

  ModuleIR &IR;
  SiteRecords &Records;
  F80Slots F80{4, "numfuzz.f80"}; // as CheckEmitter's
  // Each checked result and the hook value that replaced it.
  DenseMap<Value *, Value *> Replaced;
};

// Before each comparison worth recording, a call of the runtime's hook, taken only when a
// numfuzz campaign asks for distances or operands (none in taint builds: they only replay).
class CmpHooks {
public:
  CmpHooks(ModuleIR &IR, SiteRecords &Records) : IR(IR), Records(Records) {}
  // The comparisons of F worth a hook.
  static SmallVector<CmpInst *, 16> cmps(Function &F);
  void emit(Function &F, CmpInst *C);

private:
  static int operandCode(CmpInst *C);
  static std::pair<Value *, Value *> orOfWords(CmpInst *C);
  Value *joinWords(IRBuilder<> &B, Value *High, Value *Low);
  bool emitPreserving(Function &F, CmpInst *C, GlobalVariable *Rec, IRBuilder<> &B, Value *Mode);
  void callHook(Function &F, IRBuilder<> &B, CmpInst *C, GlobalVariable *Rec);

  ModuleIR &IR;
  SiteRecords &Records;
  GlobalVariable *CmpMode = nullptr;
  F80Slots F80{2, "numfuzz.cmp_f80"}; // the two operands
};

// Split builds: a function with checked operations becomes a fast copy (the function itself,
// the program's code), a precise copy that gets every check and a special-result copy that
// gets the special-result bits (see numfuzz-pass-split.cc).
class Splitter {
public:
  explicit Splitter(ModuleIR &IR) : IR(IR) {}
  static bool splittable(Function &F);
  Function *preciseCopy(Function &F);
  Function *specialsCopy(Function &F);
  // F's new entry: its static allocas, then a return of P(args...) or S(args...) when
  // __numfuzz_precise names that copy (S may be null: F has no special-result copy).
  void dispatch(Function &F, Function &P, Function *S);

private:
  Function *copy(Function &F, StringRef Suffix);
  CallInst *callWithArgs(IRBuilder<> &B, Function &F, FunctionCallee Callee);

  ModuleIR &IR;
  Constant *CopyByte = nullptr;
  GlobalVariable *SplitMarker = nullptr;
};

// Before each call that lowers or replaces the FP flags, a call of the runtime's barrier,
// which keeps what the program is about to erase (only fast runs read the flags).
void guardFenvCalls(ModuleIR &IR, Function &F);

// What a fast copy tells the runtime besides its flags, and what a special-result copy tells
// it, all branch-free so that the copies keep the program's blocks (no coverage guard is
// added) and stay vectorisable: the sentinels and the special-result bits (see
// numfuzz-pass-fast.cc).
class FastCopyBits {
public:
  explicit FastCopyBits(ModuleIR &IR) : IR(IR) {}
  void sentinels(Function &F, ArrayRef<CheckPlan> Plans);
  // Whether F has operations that get a special-result bit.
  static bool hasSpecials(Function &F, ArrayRef<CheckPlan> Plans);
  void specialResults(Function &F, ArrayRef<CheckPlan> Plans);
  // The module's words, one array for all its fast copies.
  void finishWords();
  // In the module's constructor: the words and the dirty byte to the runtime.
  void registerWords(IRBuilder<> &B);

private:
  static SmallVector<const CheckPlan *, 16> operations(Function &F, ArrayRef<CheckPlan> Plans, bool ConversionsOnly);
  void eachSpecial(Function &F, ArrayRef<const CheckPlan *> Ops,
                   function_ref<void(unsigned K, IRBuilder<> &B, Value *Special)> Record);
  static Value *isSpecial(IRBuilder<> &B, Value *V);
  static bool lanesMatch(const CheckPlan &P);
  static Value *passedOn(IRBuilder<> &B, const CheckPlan &P);
  static Value *magnitudeBits(IRBuilder<> &B, Value *V);
  static Value *anyNonFinite(IRBuilder<> &B, const CheckPlan &P);
  static Value *outOfIntRange(IRBuilder<> &B, const CheckPlan &P);
  void flushWords(Function &F, ArrayRef<AllocaInst *> Acc, unsigned Base);

  ModuleIR &IR;
  // The special-result words (a placeholder until finishWords) and the module's dirty byte.
  GlobalVariable *Words = nullptr, *Dirty = nullptr;
  unsigned WordCount = 0;
};

// Before each call of a function NUMFUZZ_CC_ERROR_HOOK names, a call of the runtime's
// numfuzz_error_reported; after each call returning an integer, its value once a report is
// pending (see numfuzz-pass-hooks.cc).
class ErrorHooks {
public:
  explicit ErrorHooks(ModuleIR &IR);
  // Whether F got any.
  bool emit(Function &F);

private:
  void report(CallBase &CB);
  bool returnsStatus(const CallInst &CI) const;
  void recordReturn(CallInst &CI);

  ModuleIR &IR;
  StringSet<> Names;
  Constant *Pending = nullptr;
};

} // namespace numfuzz_pass
