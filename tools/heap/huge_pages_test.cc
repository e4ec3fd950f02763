// huge_pages.cc, linked with tcmalloc: memory the heap grows by in small
// steps lies in mappings the kernel may back with transparent huge pages.
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

// The THP mode in use ("always", "madvise" or "never"), or "" when the
// kernel has none.
std::string ThpMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
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

TEST(HugePages, SmallObjectsLieInMemoryEligibleForHugePages) {
  const std::string mode = ThpMode();
  if (mode != "madvise" && mode != "always") {
    GTEST_SKIP() << "transparent huge pages are '" << mode << "' here: nothing to test";
  }
  // 64 MiB of 1 KiB objects: the heap grows many times.
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 64 * 1024; ++i) blocks.push_back(std::make_unique<char[]>(1024));
  const std::string eligible = SmapsField(blocks.back().get(), "THPeligible");
  if (eligible.empty()) GTEST_SKIP() << "this kernel's smaps has no THPeligible";
  EXPECT_EQ(eligible, "1") << "THP mode " << mode;
}

}  // namespace
