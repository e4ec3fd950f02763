// huge_pages.cc, linked with tcmalloc: memory the heap grows by in small
// steps lies in mappings the kernel may back with transparent huge pages.
#include <sys/prctl.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

// The THP mode `path` selects ("always", "madvise", "never", "inherit"), or
// "" when the kernel has no such file.
std::string ThpMode(const char* path = "/sys/kernel/mm/transparent_hugepage/enabled") {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

// The value of `field` (e.g. "THPeligible") for the mapping holding `p`,
// from /proc/self/smaps; "" when not found.
std::string SmapsField(const void* p, const std::string& field) {
  std::ifstream in("/proc/self/smaps");
  const auto address = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long start = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> start >> dash >> end && dash == '-' &&
        line.find(':') > line.find(' ')) {
      inside = start <= address && address < end;
      continue;
    }
    if (inside && line.rfind(field + ":", 0) == 0) {
      std::istringstream value(line.substr(field.size() + 1));
      std::string v;
      value >> v;
      return v;
    }
  }
  return "";
}

// Why the allocator's advice cannot be told apart here ("" when it can):
// only in THP mode "madvise" (Debian's default) does a mapping's eligibility
// depend on it; "always" makes every large enough mapping eligible, and the
// other conditions none.
std::string WhyNotTestable() {
  const std::string mode = ThpMode();
  if (mode != "madvise") return "THP mode '" + mode + "' (only 'madvise' tells advice apart)";
  if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) > 0) return "THP disabled for this process (prctl)";
  // Kernels with per-size controls: 2 MiB pages may be off on their own.
  if (ThpMode("/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled") == "never") {
    return "2 MiB transparent huge pages are 'never'";
  }
  return "";
}

// The heap's growth for a block over 2 MiB (an array's buffer) is not
// advised. First in this file: it needs a heap that has freed nothing yet
// (tcmalloc may serve a large block from freed small-object memory).
TEST(HugePages, GrowthForALargeBlockKeepsSmallPages) {
  if (const std::string why = WhyNotTestable(); !why.empty()) GTEST_SKIP() << why;
  auto block = std::make_unique<char[]>(size_t{64} << 20);
  // Its middle: its start may lie in free pages left at the end of earlier,
  // advised growth.
  char* middle = block.get() + (size_t{32} << 20);
  *middle = 1;
  const std::string eligible = SmapsField(middle, "THPeligible");
  if (eligible.empty()) GTEST_SKIP() << "this kernel's smaps has no THPeligible";
  EXPECT_EQ(eligible, "0");
  // Kept: freed, it would serve the next test's small objects.
  static char* kept = block.release();
  (void)kept;
}

TEST(HugePages, SmallObjectsLieInMemoryEligibleForHugePages) {
  if (const std::string why = WhyNotTestable(); !why.empty()) GTEST_SKIP() << why;
  // 64 MiB of 1 KiB objects: the heap grows many times.
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 64 * 1024; ++i) blocks.push_back(std::make_unique<char[]>(1024));
  const std::string eligible = SmapsField(blocks.back().get(), "THPeligible");
  if (eligible.empty()) GTEST_SKIP() << "this kernel's smaps has no THPeligible";
  EXPECT_EQ(eligible, "1");
}

}  // namespace
