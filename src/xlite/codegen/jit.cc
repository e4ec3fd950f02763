// ORC LLJIT for the host CPU, the new pass manager's O2/O3 pipeline, and the
// IR dumps XLA:CPU writes (*.ir-no-opt.ll, *.ir-with-opt.ll).
#include "xlite/codegen/jit.h"

#include <algorithm>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <array>
#include <cctype>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "xlite/codegen/ir_emitter.h"
#include "xlite/codegen/runtime_symbols.h"
#include "xlite/support/host_cpus.h"
#include "xlite/support/status.h"

namespace xlite::codegen {
namespace {

const std::vector<llvm::VecDesc>& LibmvecExtras() {
  static const auto* table = new std::vector<llvm::VecDesc>{
#define XLITE_VEC_DESC(scalar, vector, lanes) \
  {#scalar, #vector, llvm::ElementCount::getFixed(lanes)},
      XLITE_LIBMVEC_EXTRAS(XLITE_VEC_DESC)
#undef XLITE_VEC_DESC
  };
  return *table;
}

const std::vector<llvm::VecDesc>& LibmvecAvx512() {
  static const auto* table = [] {
    auto* descs = new std::vector<llvm::VecDesc>;
    auto add = [descs](const char* scalar, const char* vector, unsigned lanes) {
      if (*scalar != '\0') descs->push_back({scalar, vector, llvm::ElementCount::getFixed(lanes)});
    };
#define XLITE_VEC_DESC(scalar, vector, lanes, intrinsic) \
  add(#scalar, #vector, lanes);                          \
  add(intrinsic, #vector, lanes);
    XLITE_LIBMVEC_AVX512(XLITE_VEC_DESC)
#undef XLITE_VEC_DESC
    return descs;
  }();
  return *table;
}

std::string ErrorText(llvm::Error error) {
  std::string text;
  llvm::handleAllErrors(std::move(error),
                        [&](const llvm::ErrorInfoBase& e) { text += e.message(); });
  return text;
}

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string HostFeatures() {
  llvm::StringMap<bool> features;
  std::vector<std::string> list;
  if (llvm::sys::getHostCPUFeatures(features)) {
    for (const auto& f : features)
      list.push_back(absl::StrCat(f.second ? "+" : "-", f.first().str()));
  }
  std::sort(list.begin(), list.end());
  return absl::StrJoin(list, ",");
}

// The CPU LLVM tunes for (its scheduling model and cost tables; the
// instruction set comes from the feature list). LLVM 16 names a CPU newer than
// itself "generic"; the nearest one it knows serves better: an AMD family 1Ah
// (Zen 5) host ran 0.90-1.0x the time and compiled 0.88-1.0x as "znver4"
// (6 rounds, 8 programs, bench/RESULTS.md).
std::string TuningCpu(const std::string& features) {
  std::string name = llvm::sys::getHostCPUName().str();
  if (name != "generic") return name;
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return name;
  const bool amd = ebx == 0x68747541;    // "Auth(enticAMD)"
  const bool intel = ebx == 0x756e6547;  // "Genu(ineIntel)"
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return name;
  const unsigned family = ((eax >> 8) & 0xf) + (((eax >> 8) & 0xf) == 0xf ? (eax >> 20) & 0xff : 0);
  const bool avx512 = absl::StrContains(features, "+avx512f");
  const bool avx2 = absl::StrContains(features, "+avx2");
  if (amd && family >= 0x19) return avx512 ? "znver4" : "znver3";
  if (intel && family == 6) {
    if (absl::StrContains(features, "+amx-tile")) return "sapphirerapids";
    if (avx512) return "icelake-server";
    if (avx2) return "alderlake";
  }
#endif
  return name;
}

// The host's CPU name (as TuningCpu picks it) and features, read once: they
// do not change while the process runs.
const std::pair<std::string, std::string>& Host() {
  static const auto* host = [] {
    std::string features = HostFeatures();
    std::string cpu = TuningCpu(features);
    return new std::pair<std::string, std::string>(std::move(cpu), std::move(features));
  }();
  return *host;
}

// TargetMachines kept between compiles. Creating one (with its subtarget,
// built again for every new machine on the first function it compiles) is
// about a tenth of a small module's compile; a machine serves one thread at
// a time and any number of modules one after another (as ORC's owning
// compiler uses one), so each Lease takes one for its lifetime and gives it
// back. Keyed by everything the machine is made from.
class TargetMachinePool {
 public:
  class Lease {
   public:
    Lease(TargetMachinePool* pool, std::string key, std::unique_ptr<llvm::TargetMachine> machine)
        : pool_(pool), key_(std::move(key)), machine_(std::move(machine)) {}
    Lease(Lease&&) = default;
    ~Lease() {
      if (machine_) pool_->Return(key_, std::move(machine_));
    }
    llvm::TargetMachine& operator*() const { return *machine_; }
    llvm::TargetMachine* operator->() const { return machine_.get(); }

   private:
    TargetMachinePool* pool_;
    std::string key_;
    std::unique_ptr<llvm::TargetMachine> machine_;
  };

  static TargetMachinePool& Get() {
    static auto* pool = new TargetMachinePool();
    return *pool;
  }

  // `key` names everything `builder` was given.
  absl::StatusOr<Lease> Acquire(std::string key, llvm::orc::JITTargetMachineBuilder builder) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(key);
      if (it != free_.end() && !it->second.empty()) {
        std::unique_ptr<llvm::TargetMachine> machine = std::move(it->second.back());
        it->second.pop_back();
        return Lease(this, std::move(key), std::move(machine));
      }
    }
    llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = builder.createTargetMachine();
    if (!machine) return Internal("LLVM target machine: ", ErrorText(machine.takeError()));
    return Lease(this, std::move(key), std::move(*machine));
  }

 private:
  // At most this many idle machines per key (one per compile thread is
  // what parallel compiles use).
  static constexpr size_t kMaxIdle = 64;

  void Return(const std::string& key, std::unique_ptr<llvm::TargetMachine> machine) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::unique_ptr<llvm::TargetMachine>>& idle = free_[key];
    if (idle.size() < kMaxIdle) idle.push_back(std::move(machine));
  }

  std::mutex mu_;
  absl::flat_hash_map<std::string, std::vector<std::unique_ptr<llvm::TargetMachine>>> free_;
};

// LLJIT's own compile layer is never used (modules reach it as object code,
// compiled on leased machines); this stands in for the compiler LLJIT would
// otherwise make, with a TargetMachine of its own, at every Jit::Create.
class NoIrCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
 public:
  NoIrCompiler() : IRCompiler(llvm::orc::IRSymbolMapper::ManglingOptions()) {}
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module&) override {
    return llvm::make_error<llvm::StringError>("xlite's JIT compiles modules before adding them",
                                               llvm::inconvertibleErrorCode());
  }
};

// A symbol name LLVM and the dumps print without quotes.
std::string SanitizedName(absl::string_view name) {
  std::string out;
  for (char c : name) {
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  return out;
}

absl::Status WriteModule(const llvm::Module& module, const std::string& path) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
  if (ec) return absl::InternalError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  module.print(out, nullptr);
  return absl::OkStatus();
}

}  // namespace

struct Jit::Impl {
  JitOptions options;
  std::string cpu;
  std::string features;
  // What the TargetMachines that optimize and compile are made from (leased
  // from TargetMachinePool: one per thread at a time), and their data layout
  // and triple, which the emitted modules carry.
  std::optional<llvm::orc::JITTargetMachineBuilder> machine_builder;
  std::string machine_key;  // the pool's key: CPU, features, code generation level
  std::string data_layout;
  std::string triple;
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::set<std::string> names;
  int64_t modules = 0;
  // Every kernel compiled so far, by the SHA-256 of its LLVM IR as emitted
  // (its bitcode, with a placeholder name): a kernel whose IR matches one compiled
  // before runs that one's code, as XLA:GPU reuses the kernels of identical
  // fusions. bench_mass_matrix_35's 312 kernels are 109. The digest, not the
  // bitcode, lives as long as the executable.
  absl::flat_hash_map<std::string, CompiledKernel> compiled_by_ir;

  void Optimize(llvm::Module& module, llvm::TargetMachine& machine) const;
  // Optimizes `module` and compiles it to object code on a machine leased
  // for this thread; writes the optimized IR to `dump_path` first when given.
  absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> OptimizeAndCompile(
      llvm::Module& module, const std::string& dump_path) const;
  // Compiles `specs`, all new, named `names`, into the JIT: one module on
  // this thread, or (independent kernels) one module per compile thread.
  absl::StatusOr<std::vector<CompiledKernel>> CompileNew(absl::Span<const KernelSpec> specs,
                                                         absl::Span<const std::string> names,
                                                         absl::string_view dump_name);
  // The key of compiled_by_ir for a kernel that calls no other: the SHA-256
  // of its module alone as bitcode, the kernel named "xlite_kernel"; `kernel`
  // gets what the emitter says of it (partitions, buffer shapes), no code.
  absl::StatusOr<std::string> IrKey(const KernelSpec& spec, llvm::LLVMContext& context,
                                    CompiledKernel& kernel) const;
  // A module for `specs` (named `kernel_names`) in `context`, its functions
  // given the host's attributes and verified; `kernels` gets one entry per
  // spec.
  absl::StatusOr<std::unique_ptr<llvm::Module>> Emit(absl::Span<const KernelSpec> specs,
                                                     absl::Span<const std::string> kernel_names,
                                                     absl::string_view module_name,
                                                     llvm::LLVMContext& context,
                                                     std::vector<CompiledKernel>& kernels) const;
};

Jit::Jit(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Jit::~Jit() = default;

const std::string& Jit::cpu_name() const { return impl_->cpu; }
const std::string& Jit::cpu_features() const { return impl_->features; }

absl::StatusOr<std::unique_ptr<Jit>> Jit::Create(JitOptions options) {
  InitializeLlvmOnce();
  if (options.opt_level < 0 || options.opt_level > 3) {
    return InvalidArgument("opt_level must be 0 to 3, got ", options.opt_level);
  }
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->cpu = Host().first;
  impl->features = Host().second;

  // detectHost() without its CPU name and feature queries (Host() has them:
  // 2-3% of a one-kernel module's compile).
  llvm::orc::JITTargetMachineBuilder builder(llvm::Triple(llvm::sys::getProcessTriple()));
  builder.setCPU(impl->cpu);
  builder.addFeatures(absl::StrSplit(impl->features, ',', absl::SkipEmpty()));
  builder.setCodeGenOptLevel(impl->options.opt_level >= 2 ? llvm::CodeGenOpt::Aggressive
                                                          : llvm::CodeGenOpt::Default);
  impl->machine_builder = builder;
  impl->machine_key = absl::StrCat(impl->cpu, "|", impl->features, "|", impl->options.opt_level);
  std::optional<llvm::DataLayout> data_layout;
  {
    ASSIGN_OR_RETURN(TargetMachinePool::Lease machine,
                     TargetMachinePool::Get().Acquire(impl->machine_key, *impl->machine_builder));
    data_layout = machine->createDataLayout();
    impl->data_layout = data_layout->getStringRepresentation();
    impl->triple = machine->getTargetTriple().str();
  }

  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(builder))
          .setDataLayout(std::move(data_layout))
          // No platform runtime (static initializers, atexit, __dso_handle):
          // kernels have none, and the generic one adds IR modules that only
          // an IR compiler could build.
          .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
          .setCompileFunctionCreator(
              [](llvm::orc::JITTargetMachineBuilder)
                  -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                return std::make_unique<NoIrCompiler>();
              })
          .create();
  if (!jit) return Internal("LLJIT: ", ErrorText(jit.takeError()));
  impl->lljit = std::move(*jit);
  llvm::orc::JITDylib& dylib = impl->lljit->getMainJITDylib();
  // The functions kernels call are defined explicitly; the process's own
  // symbols (libc, libm) back anything LLVM itself introduces.
  llvm::orc::SymbolMap symbols;
  for (const auto& [name, address] : KernelRuntimeSymbols()) {
    symbols[impl->lljit->mangleAndIntern(name)] = llvm::JITEvaluatedSymbol(
        llvm::pointerToJITTargetAddress(address), llvm::JITSymbolFlags::Exported);
  }
  if (llvm::Error e = dylib.define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    return Internal("defining runtime symbols: ", ErrorText(std::move(e)));
  }
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      impl->lljit->getDataLayout().getGlobalPrefix());
  if (!process) return Internal("process symbols: ", ErrorText(process.takeError()));
  dylib.addGenerator(std::move(*process));
  return std::unique_ptr<Jit>(new Jit(std::move(impl)));
}

void Jit::Impl::Optimize(llvm::Module& module, llvm::TargetMachine& machine) const {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = options.opt_level >= 2;
  tuning.SLPVectorization = options.opt_level >= 2;
  llvm::PassBuilder passes(&machine, tuning);
  // glibc's vector math (libmvec): the loop vectorizer turns calls of sin,
  // cos, pow, exp and log (LLVM's intrinsics or libm's names) into their
  // 4- and 8-lane variants, so loops holding them stay vector code.
  // LLVM's table offers the 8-lane AVX2 variants whatever the CPU: only on
  // hosts with AVX2 (others keep scalar calls).
  llvm::TargetLibraryInfoImpl library_info(machine.getTargetTriple());
  if (absl::StrContains(features, "+avx2")) {
    library_info.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86,
                                                    machine.getTargetTriple());
    // glibc 2.35's other vector functions, which LLVM 16's table lacks: the
    // emitter's libm calls of these (marked as touching no memory) vectorize
    // too.
    library_info.addVectorizableFunctions(LibmvecExtras());
    // 16-lane f32 / 8-lane f64 variants where loops are 512 bits wide.
    if (absl::StrContains(features, "+avx512f") &&
        (options.prefer_vector_width == 0 || options.prefer_vector_width >= 512)) {
      library_info.addVectorizableFunctions(LibmvecAvx512());
    }
  }
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(library_info); });
  passes.registerModuleAnalyses(mam);
  passes.registerCGSCCAnalyses(cgam);
  passes.registerFunctionAnalyses(fam);
  passes.registerLoopAnalyses(lam);
  passes.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = llvm::OptimizationLevel::O0;
  switch (options.opt_level) {
    case 1:
      level = llvm::OptimizationLevel::O1;
      break;
    case 2:
      level = llvm::OptimizationLevel::O2;
      break;
    case 3:
      level = llvm::OptimizationLevel::O3;
      break;
    default:
      break;
  }
  llvm::ModulePassManager pipeline = level == llvm::OptimizationLevel::O0
                                         ? passes.buildO0DefaultPipeline(level)
                                         : passes.buildPerModuleDefaultPipeline(level);
  pipeline.run(module, mam);
}

absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> Jit::Impl::OptimizeAndCompile(
    llvm::Module& module, const std::string& dump_path) const {
  ASSIGN_OR_RETURN(TargetMachinePool::Lease machine,
                   TargetMachinePool::Get().Acquire(machine_key, *machine_builder));
  Optimize(module, *machine);
  if (!dump_path.empty()) RETURN_IF_ERROR(WriteModule(module, dump_path));
  llvm::orc::SimpleCompiler compiler(*machine);
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object = compiler(module);
  if (!object) return Internal("LLVM code generation: ", ErrorText(object.takeError()));
  return std::move(*object);
}

absl::StatusOr<std::unique_ptr<llvm::Module>> Jit::Impl::Emit(
    absl::Span<const KernelSpec> specs, absl::Span<const std::string> kernel_names,
    absl::string_view module_name, llvm::LLVMContext& context,
    std::vector<CompiledKernel>& kernels) const {
  auto module = std::make_unique<llvm::Module>(
      llvm::StringRef(module_name.data(), module_name.size()), context);
  module->setDataLayout(data_layout);
  module->setTargetTriple(triple);
  std::vector<llvm::Function*> functions;
  for (size_t i = 0; i < specs.size(); ++i) {
    const KernelSpec& spec = specs[i];
    const std::string& name = kernel_names[i];
    CompiledKernel kernel;
    kernel.name = name;
    if (spec.program != nullptr) {
      RETURN_IF_ERROR(EmitKernelProgram(*spec.program, name, functions, *module));
      kernel.num_operands = spec.program->num_operands;
    } else {
      ASSIGN_OR_RETURN(kernel.max_partitions, EmitKernel(*spec.instruction, name, *module));
      kernel.buffer_shapes = KernelBufferShapes(*spec.instruction);
      kernel.num_operands = spec.instruction->operand_count();
    }
    functions.push_back(module->getFunction(name));
    if (spec.internal && functions.back() != nullptr) {
      functions.back()->setLinkage(llvm::GlobalValue::InternalLinkage);
    }
    kernels.push_back(std::move(kernel));
  }
  for (llvm::Function& f : *module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", cpu);
    f.addFnAttr("target-features", features);
    if (options.prefer_vector_width > 0) {
      f.addFnAttr("prefer-vector-width", std::to_string(options.prefer_vector_width));
    }
  }
  std::string verifier_errors;
  llvm::raw_string_ostream verifier_out(verifier_errors);
  if (llvm::verifyModule(*module, &verifier_out)) {
    return Internal("the code generator emitted invalid IR: ", verifier_out.str());
  }
  return module;
}

absl::StatusOr<std::string> Jit::Impl::IrKey(const KernelSpec& spec, llvm::LLVMContext& context,
                                             CompiledKernel& kernel) const {
  static const std::string kName = "xlite_kernel";
  std::vector<CompiledKernel> emitted;
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                   Emit({spec}, {kName}, kName, context, emitted));
  kernel = std::move(emitted.at(0));
  // The module's bitcode: the same for the same IR, and written several
  // times faster than its text. It also lists the context's metadata kinds,
  // operand-bundle tags and sync scopes, fixed while the emitters register
  // none of their own (a registered one would only stop sharing, never make
  // two different kernels match).
  llvm::SmallVector<char, 0> bitcode;
  llvm::raw_svector_ostream out(bitcode);
  llvm::WriteBitcodeToFile(*module, out);
  const std::array<uint8_t, 32> digest = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(bitcode.data()), bitcode.size()));
  return std::string(digest.begin(), digest.end());
}

absl::StatusOr<std::vector<CompiledKernel>> Jit::Compile(absl::Span<const KernelSpec> specs,
                                                         absl::string_view dump_name) {
  Impl& impl = *impl_;
  for (const KernelSpec& spec : specs) {
    if (spec.instruction == nullptr) return InvalidArgument("a kernel spec without instruction");
  }
  // A kernel whose IR matches an earlier one (here or in an earlier call) is
  // not compiled again: LLVM's time is most of a compile, and emitting is
  // cheap beside it. Not where a whole-loop kernel calls the kernels before
  // it by position in the module.
  // A lone kernel in a Jit that has compiled nothing has nothing to match:
  // its key (the kernel emitted once more, its bitcode hashed) would be 15% of
  // a one-kernel module's compile.
  const bool share = (specs.size() > 1 || !impl.compiled_by_ir.empty()) &&
                     std::none_of(specs.begin(), specs.end(), [](const KernelSpec& spec) {
                       return spec.program != nullptr || spec.internal;
                     });
  std::vector<std::string> keys(specs.size());
  std::vector<CompiledKernel> kernels(specs.size());
  // Where each kernel's code comes from: kNew, kCompiledBefore, or the index
  // of an earlier spec of this call with the same IR.
  constexpr int64_t kNew = -1, kCompiledBefore = -2;
  std::vector<int64_t> source(specs.size(), kNew);
  std::vector<KernelSpec> new_specs;
  std::vector<std::string> new_names;  // unique in the Jit
  std::vector<size_t> new_at;
  {
    std::set<std::string> names_here;
    llvm::LLVMContext context;
    absl::flat_hash_map<absl::string_view, size_t> first_with_key;
    for (size_t i = 0; i < specs.size(); ++i) {
      const KernelSpec& spec = specs[i];
      if (share) {
        ASSIGN_OR_RETURN(keys[i], impl.IrKey(spec, context, kernels[i]));
        if (impl.compiled_by_ir.contains(keys[i])) {
          source[i] = kCompiledBefore;
          continue;
        }
        auto [it, inserted] = first_with_key.try_emplace(keys[i], i);
        if (!inserted) {
          source[i] = static_cast<int64_t>(it->second);
          continue;
        }
      }
      std::string base = SanitizedName(spec.name.empty() ? spec.instruction->name() : spec.name);
      std::string name = base;
      for (int k = 1; impl.names.count(name) || names_here.count(name); ++k) {
        name = absl::StrCat(base, "_", k);
      }
      names_here.insert(name);
      new_specs.push_back(spec);
      new_names.push_back(std::move(name));
      new_at.push_back(i);
    }
  }
  ASSIGN_OR_RETURN(std::vector<CompiledKernel> compiled,
                   impl.CompileNew(new_specs, new_names, dump_name));
  impl.names.insert(new_names.begin(), new_names.end());
  for (size_t j = 0; j < new_at.size(); ++j) {
    const size_t i = new_at[j];
    kernels[i] = std::move(compiled[j]);
    if (!keys[i].empty()) impl.compiled_by_ir.emplace(keys[i], kernels[i]);
  }
  // A shared kernel keeps what its own instruction says of it and takes the
  // code (and the name it was compiled under) of the first.
  for (size_t i = 0; i < specs.size(); ++i) {
    if (source[i] == kNew) continue;
    const CompiledKernel& code =
        source[i] == kCompiledBefore ? impl.compiled_by_ir.at(keys[i]) : kernels[source[i]];
    kernels[i].name = code.name;
    kernels[i].function = code.function;
  }
  return kernels;
}

absl::StatusOr<std::vector<CompiledKernel>> Jit::Impl::CompileNew(
    absl::Span<const KernelSpec> specs, absl::Span<const std::string> names,
    absl::string_view dump_name) {
  if (specs.empty()) return std::vector<CompiledKernel>();
  bool independent = true;  // no spec calls another (whole-loop kernels do)
  for (const KernelSpec& spec : specs) {
    independent = independent && spec.program == nullptr && !spec.internal;
  }
  const std::string module_name = absl::StrCat("xlite_", SanitizedName(dump_name), "_", modules);
  const bool dump = !options.dump_to.empty();
  int threads = options.compile_threads > 0 ? options.compile_threads : UsableCpuCount();
  threads = static_cast<int>(std::min<size_t>(threads, specs.size()));
  std::vector<CompiledKernel> kernels;

  if (!independent || dump || threads < 2) {
    // One module: the dumps show it whole, and whole-loop kernels call the
    // kernels they hold.
    auto context = std::make_unique<llvm::LLVMContext>();
    ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                     Emit(specs, names, module_name, *context, kernels));
    const std::string prefix = absl::StrCat(
        options.dump_to, "/", dump_name, modules > 0 ? absl::StrCat(".", modules) : std::string());
    if (dump) {
      if (std::error_code ec = llvm::sys::fs::create_directories(options.dump_to)) {
        return absl::InternalError(
            absl::StrCat("cannot create ", options.dump_to, ": ", ec.message()));
      }
      RETURN_IF_ERROR(WriteModule(*module, prefix + ".ir-no-opt.ll"));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> object,
                     OptimizeAndCompile(*module, dump ? prefix + ".ir-with-opt.ll" : ""));
    if (llvm::Error e = lljit->addObjectFile(std::move(object))) {
      return Internal("adding object code to the JIT: ", ErrorText(std::move(e)));
    }
  } else {
    // Independent kernels: `threads` modules emitted, optimized and compiled
    // to object code at once (LLVM's time is most of a compile), then linked
    // into the JIT. Kernels go to the threads round robin.
    struct Part {
      std::vector<KernelSpec> specs;
      std::vector<std::string> names;
      std::vector<size_t> at;  // positions in `specs`
      std::vector<CompiledKernel> kernels;
      absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> object =
          absl::InternalError("not compiled");
    };
    std::vector<Part> parts(threads);
    for (size_t i = 0; i < specs.size(); ++i) {
      Part& part = parts[i % threads];
      part.specs.push_back(specs[i]);
      part.names.push_back(names[i]);
      part.at.push_back(i);
    }
    auto compile_part = [&](int p) {
      Part& part = parts[p];
      part.object = [&]() -> absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> {
        llvm::LLVMContext context;
        ASSIGN_OR_RETURN(
            std::unique_ptr<llvm::Module> module,
            Emit(part.specs, part.names, absl::StrCat(module_name, "_", p), context, part.kernels));
        return OptimizeAndCompile(*module, "");
      }();
    };
    std::vector<std::thread> workers;
    int started = 1;
    try {
      for (; started < threads; ++started) workers.emplace_back(compile_part, started);
    } catch (const std::system_error&) {  // no more threads: the rest run here
    }
    for (int p = started; p < threads; ++p) compile_part(p);
    compile_part(0);
    for (std::thread& w : workers) w.join();
    // All or nothing: a failed part leaves the JIT as it was.
    for (const Part& part : parts) {
      if (!part.object.ok()) return part.object.status();
    }
    kernels.resize(specs.size());
    for (Part& part : parts) {
      if (llvm::Error e = lljit->addObjectFile(std::move(*part.object))) {
        return Internal("adding object code to the JIT: ", ErrorText(std::move(e)));
      }
      for (size_t j = 0; j < part.at.size(); ++j) kernels[part.at[j]] = std::move(part.kernels[j]);
    }
  }
  ++modules;
  for (size_t i = 0; i < kernels.size(); ++i) {
    CompiledKernel& kernel = kernels[i];
    if (specs[i].internal) continue;
    llvm::Expected<llvm::orc::ExecutorAddr> address = lljit->lookup(kernel.name);
    if (!address) {
      return Internal("JIT compilation of '", kernel.name, "': ", ErrorText(address.takeError()));
    }
    kernel.function = address->toPtr<KernelFunction>();
  }
  return kernels;
}

}  // namespace xlite::codegen
