// `xlite run --infeed=FILE.npz --outfeed=FILE.npz`: the run's HostTransfers
// (eval/host_transfers.h), filled from the file, and its outfeed values.
#ifndef XLITE_TOOLS_XLITE_HOST_FEEDS_H_
#define XLITE_TOOLS_XLITE_HOST_FEEDS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "xlite/eval/host_transfers.h"
#include "xlite/ir/module.h"

namespace xlite::cli {

struct HostFeeds {
  // nullptr without --infeed, --outfeed and an outfeed in the module (an
  // infeed then says none was given).
  std::unique_ptr<HostTransfers> transfers;

  // --infeed=FILE.npz holds the infeed blocks in order, one array each; where
  // the module's infeeds read a tuple (they must then all read the same
  // shape), each block is that many consecutive arrays, in the tuple's leaf
  // order (infeeds of () get one empty block each). Every one of `devices`
  // devices gets all blocks, `repeat` times (once per --iterations run).
  // Nothing else feeds the queues during a run, so an infeed finding none
  // fails at once.
  static absl::StatusOr<HostFeeds> Load(const std::string& infeed, const std::string& outfeed,
                                        const HloModule& module, int64_t devices, int64_t repeat);

  // The outfeed values of the last of `runs` runs, tuples flattened, named
  // outfeed0, outfeed1, ... (d<k>_ first on several devices).
  std::vector<std::pair<std::string, Literal>> TakeOutfeeds(int64_t devices, int64_t runs) const;
};

}  // namespace xlite::cli

#endif  // XLITE_TOOLS_XLITE_HOST_FEEDS_H_
