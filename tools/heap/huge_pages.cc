// Linked into the executables that allocate through tcmalloc (the xlite CLI,
// cpu_bench; CMakeLists.txt): the memory tcmalloc's heap grows by in small
// steps (1 MiB: the compiler's many objects) comes in 2 MiB-aligned runs of
// 2 MiB advised as transparent huge pages (the kernel's THP "madvise" mode,
// Debian's default, gives them only to memory so advised). Compiling a large
// module touches hundreds of MB of fresh heap; in 4 KiB pages that is a page
// fault per 4 KiB (mixtral_8x7b_bf16_2x8's `xlite opt`: 176,000 faults, a
// quarter of its time on this VM). Growth for a block over 2 MiB (an array's
// buffer) keeps 4 KiB pages: in 2 MiB pages layer_norm's run at 2 threads took
// 1.1x as long here (bench/RESULTS.md). tcmalloc may still serve a large block
// from freed small-object memory, or small objects from a freed large block.
// gperftools' own extension point (SysAllocator) keeps its default allocator
// underneath.
#include <gperftools/malloc_extension.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>

namespace {

class HugePageSysAllocator : public SysAllocator {
 public:
  explicit HugePageSysAllocator(SysAllocator* system) : system_(system) {}

  // tcmalloc calls this with its page heap lock held.
  void* Alloc(size_t size, size_t* actual_size, size_t alignment) override {
    constexpr size_t kHugePage = size_t{2} << 20;
    if (size > kHugePage) return system_->Alloc(size, actual_size, alignment);
    const size_t rounded = (size + kHugePage - 1) & ~(kHugePage - 1);
    size_t got = 0;
    void* p = system_->Alloc(rounded, &got, std::max(alignment, kHugePage));
    if (p == nullptr) return system_->Alloc(size, actual_size, alignment);
    madvise(p, got, MADV_HUGEPAGE);  // advice: refused, the pages stay 4 KiB
    if (actual_size != nullptr) *actual_size = got;
    return p;
  }

 private:
  SysAllocator* system_;
};

// Before main: tcmalloc, a library the executable loads, is initialized
// before the executable's own static objects. The allocator lives as long as
// the process.
[[maybe_unused]] const bool kInstalled = [] {
  MallocExtension* extension = MallocExtension::instance();
  SysAllocator* system = extension->GetSystemAllocator();
  if (system != nullptr) extension->SetSystemAllocator(new HugePageSysAllocator(system));
  return true;
}();

}  // namespace
