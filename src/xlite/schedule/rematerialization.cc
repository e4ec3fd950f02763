#include "xlite/schedule/rematerialization.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "xlite/analysis/hlo_alias_analysis.h"
#include "xlite/analysis/hlo_live_range.h"
#include "xlite/analysis/shape_util.h"
#include "xlite/ir/computation.h"
#include "xlite/ir/name_uniquer.h"
#include "xlite/passes/while_loop_state.h"
#include "xlite/schedule/schedule_module.h"
#include "xlite/support/status.h"

namespace xlite {
namespace {

constexpr int kMaxFusedInstructions = 16;
// A value's operands that are dead at the peak are recomputed with it, up to
// this many levels and instructions, when that keeps fewer bytes alive.
constexpr int kMaxBlockDepth = 4;
constexpr int kMaxBlockSize = 16;
// Values made from scalars tried alone when copying them all together does
// not lower the peak.
constexpr size_t kMaxSingleCopyTries = 8;
// Later work made earlier: at most this many instructions move in one block,
// the block grows by its members' users this many times (trying the largest
// few members read after it each time), the best few blocks are tried per
// round, and the module is analysed at most this many times for such tries.
constexpr size_t kMaxEarlierBlock = 64;
constexpr int kMaxEarlierSteps = 8;
constexpr size_t kMaxEarlierGrowTries = 4;
constexpr size_t kMaxEarlierBlockTries = 2;
constexpr int kMaxEarlierAnalyses = 48;

std::string Where(const HloInstruction& i) {
  return absl::StrCat("%", i.name(), " in %", i.parent()->name());
}

// Reads its operands and writes a new array, deterministically: data
// movement and elementwise math (cheap), and dots, convolutions, reductions
// and gathers (FLOPs, ranked after cheaper values). Never copies (they exist
// for aliasing), in-place updates, sorts, rng, control flow or calls.
bool IsRecomputableOpcode(HloOpcode op) {
  switch (op) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kConstant:
    case HloOpcode::kReshape:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kPad:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kGather:
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormGrad:
      return true;
    case HloOpcode::kCopy:
    case HloOpcode::kStochasticConvert:
      return false;
    default:
      return IsElementwiseOpcode(op);
  }
}

bool IsRecomputableLeaf(const HloInstruction& i) {
  const uint32_t traits = HloOpcodeTraits(i.opcode());
  // Batch norm's training and gradient forms make a tuple of arrays; their
  // elements are recomputed through a get-tuple-element.
  const bool tuple_op =
      i.opcode() == HloOpcode::kBatchNormTraining || i.opcode() == HloOpcode::kBatchNormGrad;
  if (!IsRecomputableOpcode(i.opcode()) || (traits & (kSideEffect | kCollective)) ||
      i.HasSideEffect() || !(i.shape().IsArray() || tuple_op)) {
    return false;
  }
  // Only reductions call a computation: their scalar to_apply, which the
  // clone shares (an embedded computation, not a sequential callee).
  const bool reduction = i.opcode() == HloOpcode::kReduce || i.opcode() == HloOpcode::kReduceWindow;
  return reduction ? i.called_computations().size() == 1 : i.called_computations().empty();
}

// The fused computation of a fusion of at most kMaxFusedInstructions
// recomputable ops; nullptr otherwise.
const HloComputation* RecomputableFusionBody(const HloInstruction& i) {
  if (i.opcode() != HloOpcode::kFusion || i.called_computations().size() != 1 ||
      !i.shape().IsArray()) {
    return nullptr;
  }
  const HloComputation* body = i.called_computations()[0];
  int count = 0;
  for (const auto& f : body->instructions()) {
    if (f->opcode() == HloOpcode::kParameter) continue;
    if (!IsRecomputableLeaf(*f) || ++count > kMaxFusedInstructions) return nullptr;
  }
  return body;
}

bool IsRematerializable(const HloInstruction& i) {
  if (i.opcode() == HloOpcode::kFusion) return RecomputableFusionBody(i) != nullptr;
  return IsRecomputableLeaf(i);
}

int64_t ElementCount(const Shape& s) { return s.IsArray() ? s.ElementCount() : 0; }

int64_t Saturated(double flops) {
  return flops >= 9.0e18 ? int64_t{9'000'000'000'000'000'000} : static_cast<int64_t>(flops);
}

// Estimated FLOPs of computing `i` once: a multiply-add per product term of
// dots and convolutions, an operation per element read by reductions, per
// element written by elementwise math; data movement costs none.
int64_t LeafFlops(const HloInstruction& i) {
  const int64_t out = ElementCount(i.shape());
  switch (i.opcode()) {
    case HloOpcode::kDot: {
      int64_t contracted = 1;
      if (i.attrs().dot_dimension_numbers && i.operand_count() > 0) {
        const Shape& lhs = i.operand(0)->shape();
        for (int64_t d : i.attrs().dot_dimension_numbers->lhs_contracting_dimensions) {
          if (d >= 0 && d < lhs.rank()) contracted *= lhs.dimensions(d);
        }
      }
      return Saturated(2.0 * static_cast<double>(out) * static_cast<double>(contracted));
    }
    case HloOpcode::kConvolution: {
      // Each output element reads the kernel's elements of one output feature.
      if (i.operand_count() < 2 || !i.attrs().convolution_dimension_numbers) return 2 * out;
      const Shape& kernel = i.operand(1)->shape();
      const int64_t feature =
          i.attrs().convolution_dimension_numbers->kernel_output_feature_dimension;
      const int64_t features = feature >= 0 && feature < kernel.rank()
                                   ? std::max<int64_t>(kernel.dimensions(feature), 1)
                                   : 1;
      return Saturated(2.0 * static_cast<double>(out) *
                       static_cast<double>(ElementCount(kernel) / features));
    }
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
      return i.operand_count() > 0 ? ElementCount(i.operand(0)->shape()) : 0;
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormGrad:  // statistics, then normalize: a few per element
      return i.operand_count() > 0 ? 8 * ElementCount(i.operand(0)->shape()) : 0;
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
      return 0;
    default:
      return IsElementwiseOpcode(i.opcode()) ? out : 0;
  }
}

int64_t Flops(const HloInstruction& i) {
  if (const HloComputation* body = RecomputableFusionBody(i)) {
    int64_t flops = 0;
    for (const auto& f : body->instructions()) {
      flops = Saturated(static_cast<double>(flops) + static_cast<double>(LeafFlops(*f)));
    }
    return flops;
  }
  return LeafFlops(i);
}

int64_t BytesAccessed(const HloInstruction& i) {
  int64_t bytes = ShapeSizeBytes(i.shape());
  for (const HloInstruction* op : i.operands()) bytes += ShapeSizeBytes(op->shape());
  return bytes;
}

struct Candidate {
  HloInstruction* instruction = nullptr;
  // What is computed again after the peak: `instruction` last, after the
  // operands (dead at the peak) recomputed with it, each after its own.
  std::vector<HloInstruction*> block;
  // The instructions the later users read the value from: the instruction
  // itself, or the get-tuple-elements of its element `tuple_index`.
  std::vector<HloInstruction*> readers;
  int64_t tuple_index = -1;
  std::vector<HloInstruction*> late_users;
  bool moved = false;  // no earlier user
  int64_t net_bytes = 0;
  int64_t flops = 0;
};

// What Apply did, to keep (the record) or undo.
struct Applied {
  Recomputation record;
  HloComputation* computation = nullptr;
  std::vector<HloInstruction*> order_before;  // the computation's order
  // (user, operand number, what it read before): the later reads rerouted.
  std::vector<std::tuple<HloInstruction*, int64_t, HloInstruction*>> rerouted;
  std::vector<HloInstruction*> readers;  // the get-tuple-elements of an element
  std::vector<HloInstruction*> block;    // the originals recomputed
  std::vector<HloInstruction*> made;     // their clones, operands first
};

// One round's analyses of the module as it is now.
struct Analyses {
  std::unique_ptr<HloAliasAnalysis> alias;
  HloSchedule schedule;
  std::unique_ptr<HloLiveRange> live;

  static absl::StatusOr<Analyses> Run(const HloModule& module) {
    Analyses a;
    ASSIGN_OR_RETURN(a.alias, HloAliasAnalysis::Run(module));
    a.schedule = HloSchedule::FromInstructionOrder(
        ScheduledComputations(a.alias->dataflow_analysis().call_graph()));
    ASSIGN_OR_RETURN(a.live, HloLiveRange::Run(a.schedule, *a.alias));
    return a;
  }

  const HloBuffer& BufferOf(const HloValue& v) const { return alias->GetBufferContainingValue(v); }
  const LiveRange* RangeOf(const HloBuffer& b) const { return live->buffer_live_range(b); }
  bool LiveAt(const HloBuffer& b, int64_t t) const {
    const LiveRange* r = RangeOf(b);
    return r != nullptr && r->start <= t && t <= r->end;
  }
  // Where a computation with this sequence is at time t: the index of its
  // first instruction at t or later (an instruction that runs a callee comes
  // after the callee's), or the sequence's size.
  int64_t SiteIndex(const std::vector<HloInstruction*>& sequence, int64_t t) const {
    auto site = std::lower_bound(
        sequence.begin(), sequence.end(), t,
        [&](const HloInstruction* i, int64_t time) { return live->instruction_time(i) < time; });
    return site - sequence.begin();
  }
};

// XLITE_REMAT_DEBUG=1: a line per try, with the peak level before and after.
bool DebugTries() { return std::getenv("XLITE_REMAT_DEBUG") != nullptr; }

void PrintTry(const std::string& what, int64_t t, std::pair<int64_t, int64_t> from,
              std::pair<int64_t, int64_t> to, const std::string& detail) {
  std::fprintf(stderr, "%s t=%lld level %lld/%lld -> %lld/%lld:%s\n", what.c_str(),
               static_cast<long long>(t), static_cast<long long>(from.first),
               static_cast<long long>(from.second), static_cast<long long>(to.first),
               static_cast<long long>(to.second), detail.c_str());
}

// The peak and how many times of the schedule reach it: a round makes
// progress when this pair decreases.
std::pair<int64_t, int64_t> PeakLevel(const Analyses& a) {
  return {a.live->peak_bytes(), a.live->peak_times()};
}

// The elements of `loop`'s state that SinkLoopState may take out of the loop
// (at some peak): handed on unchanged, made from nothing (copy insertion's
// copies looked through) and not read after the loop.
std::vector<bool> SinkableElements(
    const HloInstruction& loop,
    const absl::flat_hash_map<const HloComputation*, int64_t>& callers) {
  const int64_t n = loop.shape().IsTuple() ? loop.shape().tuple_shapes_size() : 0;
  std::vector<bool> sinkable(n, false);
  if (!HasElementwiseState(loop, callers) || loop.operand(0)->opcode() != HloOpcode::kTuple ||
      loop.parent()->root_instruction() == &loop) {
    return sinkable;
  }
  std::vector<bool> read_after(n, false);
  for (const HloInstruction* user : loop.users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return sinkable;
    read_after[user->attrs().tuple_index] = true;
  }
  for (int64_t i = 0; i < n; ++i) {
    const HloInstruction* v = loop.operand(0)->operand(i);
    while (v->opcode() == HloOpcode::kCopy) v = v->operand(0);
    sinkable[i] = !read_after[i] && IsInvariantElement(loop, i) && IsComputedFromNothing(*v);
  }
  return sinkable;
}

// The buffers live throughout each computation run from one sequential site,
// in any schedule: the operands of a while, conditional or async-start site,
// read at the site's own time, after every instruction of the computations it
// runs, and those of the sites around that one. A call's arguments are not
// held (HloLiveRange ends them at their last reader inside the callee): a
// called computation gets only what holds around its call.
absl::flat_hash_map<const HloComputation*, std::vector<HloBuffer::Id>> BuffersLiveAcrossCalls(
    const Analyses& a, const std::vector<std::pair<int32_t, HloBuffer::Id>>& used) {
  const HloDataflowAnalysis& df = a.alias->dataflow_analysis();
  const CallGraph& call_graph = df.call_graph();
  absl::flat_hash_map<const HloComputation*, std::vector<HloBuffer::Id>> across;
  const std::vector<HloComputation*>& post_order = call_graph.ComputationsInPostOrder();
  for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {  // callers first
    const std::vector<const CallSite*> sites = call_graph.SequentialCallers(*it);
    if (sites.size() != 1) continue;
    const HloInstruction* site = sites[0]->instruction;
    std::vector<HloBuffer::Id> buffers;
    if (auto outer = across.find(site->parent()); outer != across.end()) buffers = outer->second;
    if (site->opcode() != HloOpcode::kCall) {
      const int32_t id = df.instruction_id(site);
      for (auto u = std::lower_bound(used.begin(), used.end(), std::make_pair(id, HloBuffer::Id{}));
           u != used.end() && u->first == id; ++u) {
        buffers.push_back(u->second);
      }
      std::sort(buffers.begin(), buffers.end());
      buffers.erase(std::unique(buffers.begin(), buffers.end()), buffers.end());
    }
    if (!buffers.empty()) across[*it] = std::move(buffers);
  }
  return across;
}

// Values live at an instruction in any schedule the pass can make: those it
// never makes a copy of (loops, calls, copies, sorts, custom calls,
// parameters: IsRematerializable is false; the pass also clones
// get-tuple-elements, which make no array), from their making to each
// reader. Every copy of an instruction made from such a value (directly or
// not) and feeding, directly or not, a copy of one of its readers is made
// while the value is live: after the one making (its operands' copies lead
// back to it) and before that reader, which reads the value itself. Data
// edges only (a copy has no control edges); the largest few (maker, reader)
// pairs with work between them. Loop state the pass may sink is excluded
// (SinkableElements): it changes what the loop reads.
class HeldValues {
 public:
  static constexpr size_t kMaxPairs = 16;
  static constexpr size_t kMaxTries = 64;

  HeldValues(const Analyses& a, const std::vector<bool>& excluded) {
    const HloDataflowAnalysis& df = a.alias->dataflow_analysis();
    struct Candidate {
      const HloInstruction* maker;
      const HloInstruction* reader;
      std::vector<HloBuffer::Id> buffers;
      int64_t bytes = 0;
    };
    std::vector<Candidate> candidates;
    absl::flat_hash_map<std::pair<const HloInstruction*, const HloInstruction*>, size_t> index;
    for (const auto& value : df.values()) {
      const HloInstruction* maker = value->defining_instruction();
      if (!value->shape().IsArray() || IsRematerializable(*maker) ||
          a.live->instruction_time(maker) < 0) {
        continue;
      }
      const HloBuffer& buffer = a.BufferOf(*value);
      if (a.RangeOf(buffer) == nullptr || excluded[buffer.id()]) continue;
      for (const HloUse& use : value->uses()) {
        const HloInstruction* reader = use.instruction;
        if (reader == maker || reader->parent() != maker->parent() ||
            a.live->instruction_time(reader) < 0) {
          continue;
        }
        auto [it, added] = index.try_emplace(std::make_pair(maker, reader), candidates.size());
        if (added) candidates.push_back({maker, reader});
        Candidate& c = candidates[it->second];
        if (!absl::c_linear_search(c.buffers, buffer.id())) {
          c.buffers.push_back(buffer.id());
          c.bytes += a.live->buffer_size(buffer);
        }
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& x, const Candidate& y) { return x.bytes > y.bytes; });
    if (candidates.size() > kMaxTries) candidates.resize(kMaxTries);
    for (Candidate& c : candidates) {
      if (pairs_.size() == kMaxPairs) break;
      const std::vector<const HloInstruction*> between = Between(a, *c.maker, *c.reader);
      if (between.empty()) continue;
      const uint32_t bit = uint32_t{1} << pairs_.size();
      absl::c_sort(c.buffers);
      pairs_.push_back({c.reader, std::move(c.buffers)});
      for (const HloInstruction* i : between) between_[i] |= bit;
      readers_.insert(c.reader);
    }
  }

  // The readers some value is held for at `i`, in the pairs' order.
  std::vector<const HloInstruction*> ReadersAt(const HloInstruction& i) const {
    std::vector<const HloInstruction*> readers;
    for (uint32_t bits = BitsAt(i); bits != 0; bits &= bits - 1) {
      const HloInstruction* r = pairs_[std::countr_zero(bits)].reader;
      if (!absl::c_linear_search(readers, r)) readers.push_back(r);
    }
    return readers;
  }

  // The buffers held at `i` for `reader`, sorted, each once.
  std::vector<HloBuffer::Id> At(const HloInstruction& i, const HloInstruction* reader) const {
    std::vector<HloBuffer::Id> buffers;
    for (uint32_t bits = BitsAt(i); bits != 0; bits &= bits - 1) {
      const Pair& p = pairs_[std::countr_zero(bits)];
      if (p.reader == reader) buffers.insert(buffers.end(), p.buffers.begin(), p.buffers.end());
    }
    absl::c_sort(buffers);
    buffers.erase(std::unique(buffers.begin(), buffers.end()), buffers.end());
    return buffers;
  }

  bool IsReader(const HloInstruction& i) const { return readers_.contains(&i); }

 private:
  struct Pair {
    const HloInstruction* reader;
    std::vector<HloBuffer::Id> buffers;
  };

  uint32_t BitsAt(const HloInstruction& i) const {
    auto it = between_.find(&i);
    return it == between_.end() ? 0 : it->second;
  }

  // What is made from `maker` and feeds `reader`, neither included. Every
  // such instruction runs before the reader in this schedule: the search
  // from the maker stops at the reader's time.
  static std::vector<const HloInstruction*> Between(const Analyses& a, const HloInstruction& maker,
                                                    const HloInstruction& reader) {
    const int64_t end = a.live->instruction_time(&reader);
    absl::flat_hash_set<const HloInstruction*> after;  // made from maker, before the reader
    std::vector<const HloInstruction*> work = {&maker};
    while (!work.empty()) {
      const HloInstruction* i = work.back();
      work.pop_back();
      for (const HloInstruction* u : i->users()) {
        const int64_t t = a.live->instruction_time(u);
        if (t >= 0 && t < end && after.insert(u).second) work.push_back(u);
      }
    }
    std::vector<const HloInstruction*> between;
    absl::flat_hash_set<const HloInstruction*> seen;
    work = {&reader};
    while (!work.empty()) {
      const HloInstruction* i = work.back();
      work.pop_back();
      for (const HloInstruction* o : i->operands()) {
        if (o != &maker && after.contains(o) && seen.insert(o).second) {
          between.push_back(o);
          work.push_back(o);
        }
      }
    }
    return between;
  }

  std::vector<Pair> pairs_;
  absl::flat_hash_map<const HloInstruction*, uint32_t> between_;
  absl::flat_hash_set<const HloInstruction*> readers_;
};

// Every array an instruction reads is made before it runs and stays live
// until then, in any schedule, recomputed or not (the copy it reads, too).
// So an instruction and the arrays it is made from, a few levels up, form a
// tree (each node made before its parent, live from then until the parent
// runs), and the order of making them whose largest live set is least is a
// lower bound on the peak of any schedule: two arrays one instruction reads,
// whichever is made last is made while the other is live, and so on up. The
// least over all orders is found by search over the sets of nodes made so
// far. Leaving a node out only lowers that least peak, so the tree may be cut
// anywhere: at kMaxNodes, the largest few arrays of each nearest the root
// first, without arrays made from no node (mostly scalars: made right before
// their reader they add little to it). A node is an array alone in its buffer
// and defined by the instruction itself (not a parameter, not loop state the
// pass may sink or what it is made from); one instruction may be several
// nodes (several copies), its buffer counted once while any of them is live.
// This rests on what the pass does: a copy of an instruction reads copies of
// the same operands, each in a buffer of its own, live until its readers
// run. Where the root feeds, directly or not, a reader of values the pass
// never copies (or is one), the copies of the tree made for it are made
// while the values held for that reader (HeldValues) are live, those held at
// each node: searched again with them.
class OrderingBound {
 public:
  OrderingBound(const Analyses& a, const std::vector<std::pair<int32_t, HloBuffer::Id>>& touched,
                const std::vector<bool>& excluded, int64_t base_bytes, const HeldValues& held)
      : a_(a),
        touched_(touched),
        excluded_(excluded),
        base_bytes_(base_bytes),
        held_(held),
        memo_(size_t{1} << kMaxNodes),
        memo_generation_(size_t{1} << kMaxNodes, 0) {}

  // The least peak of any schedule running `i`, from the tree of arrays it
  // is made from, when above `above` (`why` then says so); `above` or less
  // otherwise.
  int64_t ForInstruction(const HloInstruction& i, int64_t above, std::string& why) {
    if (!BuildTree(i)) return 0;
    std::vector<const HloInstruction*> readers = {nullptr};  // nullptr: none
    if (held_.IsReader(i)) readers.push_back(&i);
    for (const HloInstruction* reader : held_.ReadersAt(i)) {
      if (reader != &i) readers.push_back(reader);
    }
    int64_t best = 0;
    for (const HloInstruction* reader : readers) {
      const int64_t bound = ForReader(i, reader, std::max(above, best), why);
      best = std::max(best, bound);
    }
    return best;
  }

 private:
  static constexpr int kMaxNodes = 16;
  static constexpr size_t kMaxChildren = 6;

  int64_t ForReader(const HloInstruction& i, const HloInstruction* reader, int64_t above,
                    std::string& why) {
    SetCosts(reader);
    int64_t most_extra = 0;  // no order needs more than all slots and this
    for (const Node& n : nodes_) most_extra = std::max(most_extra, n.extra_bytes);
    if (base_bytes_ + most_extra + AllSlots() <= above) return 0;
    floor_ = above;
    if (++generation_ == 0) {  // wrapped: every entry would look current
      absl::c_fill(memo_generation_, 0);
      generation_ = 1;
    }
    const int64_t bound = Least(0);
    if (bound > above) {
      std::vector<std::string> read;
      absl::flat_hash_set<const HloInstruction*> read_set, above_them;
      for (const Node& n : nodes_) {
        if (n.parent == 0 && read_set.insert(n.instruction).second) {
          read.push_back(absl::StrCat("%", n.instruction->name()));
        }
      }
      for (const Node& n : nodes_) {
        if (n.parent > 0 && !read_set.contains(n.instruction)) above_them.insert(n.instruction);
      }
      why = absl::StrCat(Where(i), " reads ", absl::StrJoin(read, ", "));
      if (!above_them.empty()) {
        absl::StrAppend(&why, ", made from ", above_them.size(), " more arrays");
      }
      absl::StrAppend(&why,
                      ": in every order of making them, one is made while others made before it "
                      "and not yet read are live");
      if (reader != nullptr) {
        absl::StrAppend(&why, "; with what %", reader->name(),
                        " reads later, made by instructions this pass never copies");
      }
    }
    return bound;
  }

  struct Node {
    const HloInstruction* instruction;
    int parent;                  // -1: the root
    uint32_t children = 0;       // node bits
    int slot = -1;               // its buffer (not the root's)
    uint32_t touched_slots = 0;  // slots among its operands and outputs
    int64_t extra_bytes = 0;     // the rest of its working set, excluded buffers left out
  };
  struct Slot {
    HloBuffer::Id buffer;
    int64_t bytes;
  };

  // The buffer of `i`'s result when it is an array alone in its buffer, made
  // by `i` itself.
  std::optional<HloBuffer::Id> PlainBuffer(const HloInstruction& i) const {
    if (i.opcode() == HloOpcode::kParameter || !i.shape().IsArray()) return std::nullopt;
    const HloValue* v = a_.alias->dataflow_analysis().GetValueAt(&i, ShapeIndex{});
    if (v == nullptr || v->defining_instruction() != &i) return std::nullopt;
    const HloBuffer& buffer = a_.BufferOf(*v);
    if (buffer.values().size() != 1 || a_.RangeOf(buffer) == nullptr || excluded_[buffer.id()]) {
      return std::nullopt;
    }
    return buffer.id();
  }

  int64_t BufferBytes(HloBuffer::Id b) const {
    return a_.live->buffer_size(a_.alias->GetBuffer(b));
  }

  // Made from scalars and buffers that are no node: left out of the tree.
  bool MadeFromScalars(const HloInstruction& i) const {
    return absl::c_all_of(i.operands(), [&](const HloInstruction* op) {
      return !PlainBuffer(*op) || op->shape().ElementCount() <= 1;
    });
  }

  // The tree under `root`, level by level, the largest arrays of each level
  // first. False when no node has two children (the working sets alone are
  // the bound then).
  bool BuildTree(const HloInstruction& root) {
    nodes_.clear();
    slots_.clear();
    nodes_.push_back({&root, -1});
    std::vector<int> level = {0};
    bool branches = false;
    const auto largest_first = [](const auto& x, const auto& y) {
      return std::get<0>(x) < std::get<0>(y);
    };
    while (!level.empty() && nodes_.size() < kMaxNodes) {
      std::vector<std::tuple<int64_t, int, const HloInstruction*, HloBuffer::Id>> candidates;
      for (int parent : level) {
        std::vector<std::tuple<int64_t, int, const HloInstruction*, HloBuffer::Id>> children;
        for (const HloInstruction* op : nodes_[parent].instruction->operands()) {
          const std::optional<HloBuffer::Id> b = PlainBuffer(*op);
          if (!b || MadeFromScalars(*op) ||
              absl::c_any_of(children, [&](const auto& c) { return std::get<3>(c) == *b; })) {
            continue;
          }
          children.push_back({-BufferBytes(*b), parent, op, *b});
        }
        // The largest few (an instruction may read many arrays: a tuple).
        std::stable_sort(children.begin(), children.end(), largest_first);
        if (children.size() > kMaxChildren) children.resize(kMaxChildren);
        candidates.insert(candidates.end(), children.begin(), children.end());
      }
      std::stable_sort(candidates.begin(), candidates.end(), largest_first);
      std::vector<int> next;
      for (const auto& [minus_bytes, parent, op, buffer] : candidates) {
        if (nodes_.size() == kMaxNodes) break;
        const int id = static_cast<int>(nodes_.size());
        branches = branches || nodes_[parent].children != 0;
        nodes_[parent].children |= uint32_t{1} << id;
        Node node{op, parent};
        auto slot = absl::c_find_if(slots_, [&](const Slot& s) { return s.buffer == buffer; });
        node.slot = static_cast<int>(slot - slots_.begin());
        if (slot == slots_.end()) slots_.push_back({buffer, -minus_bytes});
        nodes_.push_back(node);
        next.push_back(id);
      }
      level = std::move(next);
    }
    return branches;
  }

  // Each node's working set, and what is held there for `reader` (none:
  // nullptr), as slots and other bytes.
  void SetCosts(const HloInstruction* reader) {
    for (Node& n : nodes_) {
      n.touched_slots = 0;
      n.extra_bytes = 0;
      const int32_t id = a_.alias->dataflow_analysis().instruction_id(n.instruction);
      const auto first =
          std::lower_bound(touched_.begin(), touched_.end(), std::make_pair(id, HloBuffer::Id{}));
      const auto last = std::upper_bound(
          first, touched_.end(), std::make_pair(id, std::numeric_limits<HloBuffer::Id>::max()));
      auto add = [&](HloBuffer::Id b) {
        if (excluded_[b]) return;
        auto slot = absl::c_find_if(slots_, [&](const Slot& s) { return s.buffer == b; });
        if (slot != slots_.end()) {
          n.touched_slots |= uint32_t{1} << (slot - slots_.begin());
        } else {
          n.extra_bytes += BufferBytes(b);
        }
      };
      for (auto t = first; t != last; ++t) add(t->second);
      if (reader == nullptr) continue;
      for (HloBuffer::Id b : held_.At(*n.instruction, reader)) {
        if (!std::binary_search(first, last, std::make_pair(id, b))) add(b);
      }
    }
  }

  int64_t AllSlots() const { return SlotBytes((uint32_t{1} << slots_.size()) - 1); }

  int64_t SlotBytes(uint32_t slots) const {
    int64_t bytes = 0;
    for (; slots != 0; slots &= slots - 1) bytes += slots_[std::countr_zero(slots)].bytes;
    return bytes;
  }

  // The least, over the orders of making the nodes not in `made` (a set
  // closed under children), of the largest live set while making one, or
  // floor_ when that is less.
  int64_t Least(uint32_t made) {
    const uint32_t all = (uint32_t{1} << nodes_.size()) - 1;
    if (made == all) return floor_;
    if (memo_generation_[made] == generation_) return memo_[made];
    uint32_t live = 0;  // slots of made nodes whose parent is not
    for (uint32_t m = made; m != 0; m &= m - 1) {
      const Node& n = nodes_[std::countr_zero(m)];
      if (n.parent >= 0 && (made >> n.parent & 1) == 0) live |= uint32_t{1} << n.slot;
    }
    int64_t best = std::numeric_limits<int64_t>::max();
    for (uint32_t rest = all & ~made; rest != 0 && best > floor_; rest &= rest - 1) {
      const int k = std::countr_zero(rest);
      const Node& n = nodes_[k];
      if ((n.children & ~made) != 0) continue;
      const int64_t bytes = base_bytes_ + n.extra_bytes + SlotBytes(live | n.touched_slots);
      if (bytes >= best) continue;
      best = std::min(best, std::max(bytes, Least(made | uint32_t{1} << k)));
    }
    memo_generation_[made] = generation_;
    memo_[made] = best;
    return best;
  }

  const Analyses& a_;
  const std::vector<std::pair<int32_t, HloBuffer::Id>>& touched_;
  const std::vector<bool>& excluded_;
  const int64_t base_bytes_;
  const HeldValues& held_;
  std::vector<Node> nodes_;
  std::vector<Slot> slots_;
  int64_t floor_ = 0;
  std::vector<int64_t> memo_;
  std::vector<uint32_t> memo_generation_;
  uint32_t generation_ = 0;
};

WorkingSet ComputeLargestWorkingSet(const Analyses& a) {
  const HloDataflowAnalysis& df = a.alias->dataflow_analysis();
  std::vector<std::pair<int32_t, HloBuffer::Id>> touched;  // (instruction id, buffer)
  std::vector<std::pair<int32_t, HloBuffer::Id>> used;     // the operands' part of it
  for (const auto& value : df.values()) {
    const HloBuffer& buffer = a.BufferOf(*value);
    if (a.RangeOf(buffer) == nullptr) continue;
    for (const HloUse& use : value->uses()) {
      touched.push_back({df.instruction_id(use.instruction), buffer.id()});
      used.push_back({df.instruction_id(use.instruction), buffer.id()});
    }
    for (const HloPosition& p : value->positions()) {
      touched.push_back({df.instruction_id(p.instruction), buffer.id()});
    }
  }
  for (auto* list : {&touched, &used}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  const auto across_calls = BuffersLiveAcrossCalls(a, used);
  // Loop state the pass itself may take out of its loop (SinkLoopState) need
  // not stay: the bound leaves those buffers out wherever they are live.
  std::vector<bool> sinkable(a.alias->buffer_count(), false);
  const auto callers = CountCallers(a.alias->module());
  for (const auto& c : a.alias->module().computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() != HloOpcode::kWhile) continue;
      const std::vector<bool> elements = SinkableElements(*i, callers);
      if (!absl::c_linear_search(elements, true)) continue;
      // The state's index table shrinks with it.
      for (int64_t e = -1; e < static_cast<int64_t>(elements.size()); ++e) {
        if (e >= 0 && !elements[e]) continue;
        const HloValue* value = df.GetValueAt(i.get(), e < 0 ? ShapeIndex{} : ShapeIndex{e});
        if (value != nullptr) sinkable[a.BufferOf(*value).id()] = true;
        if (e < 0) continue;
        // So may the element's initial value and what it is made from, where
        // nothing else reads them (RemoveDeadElements removes those): none of
        // their buffers counts either.
        std::vector<const HloInstruction*> chain = {i->operand(0)->operand(e)};
        for (size_t k = 0; k < chain.size(); ++k) {
          df.ForEachValueAt(chain[k], [&](const ShapeIndex&, const HloValue& v) {
            sinkable[a.BufferOf(v).id()] = true;
          });
          for (const HloInstruction* op : chain[k]->operands()) chain.push_back(op);
        }
      }
    }
  }
  WorkingSet best;
  // Entry parameters live from the start to the end (not donated ones) in
  // every schedule; outputs from their definition to the end.
  std::vector<bool> parameter(a.alias->buffer_count(), false);
  int64_t parameter_bytes = 0;
  const HloComputation* entry = a.alias->module().entry_computation();
  for (const HloBuffer& buffer : a.alias->buffers()) {
    const LiveRange* r = a.RangeOf(buffer);
    if (r == nullptr || r->end < a.live->schedule_end_time()) continue;
    best.resident_bytes += a.live->buffer_size(buffer);
    for (const HloValue* v : buffer.values()) {
      const HloInstruction* d = v->defining_instruction();
      if (d->opcode() == HloOpcode::kParameter && d->parent() == entry && r->start == 0) {
        parameter[buffer.id()] = true;
      }
    }
    if (parameter[buffer.id()]) parameter_bytes += a.live->buffer_size(buffer);
  }
  std::vector<bool> excluded(a.alias->buffer_count(), false);
  for (size_t b = 0; b < excluded.size(); ++b) excluded[b] = parameter[b] || sinkable[b];
  const HeldValues held(a, excluded);
  std::vector<HloBuffer::Id> live;  // one instruction's working set and what its sites hold
  for (size_t k = 0; k < touched.size();) {
    const int32_t id = touched[k].first;
    int64_t bytes = 0;
    live.clear();
    const size_t first = k;
    for (; k < touched.size() && touched[k].first == id; ++k) {
      bytes += a.live->buffer_size(a.alias->GetBuffer(touched[k].second));
    }
    const HloInstruction* instr = id < 0 ? nullptr : df.instruction(id);
    if (instr == nullptr) continue;
    const int64_t time = a.live->instruction_time(instr);
    if (time < 0) continue;
    if (bytes > best.bytes) {
      best.bytes = bytes;
      best.instruction = Where(*instr);
    }
    // A call adds nothing to the bound: its arguments may end at their last
    // reader inside the callee (in HloLiveRange, in any schedule), and its
    // results are the callee root's, counted there.
    if (instr->opcode() == HloOpcode::kCall) continue;
    for (size_t j = first; j < k; ++j) live.push_back(touched[j].second);
    if (auto it = across_calls.find(instr->parent()); it != across_calls.end()) {
      for (HloBuffer::Id b : it->second) {
        // True for while, conditional and async-start sites (their operands
        // are read at the site's time, after the callee's instructions).
        if (a.LiveAt(a.alias->GetBuffer(b), time)) live.push_back(b);
      }
      std::sort(live.begin(), live.end());
      live.erase(std::unique(live.begin(), live.end()), live.end());
    }
    int64_t others = 0;
    int64_t held_bytes = 0;
    const HloInstruction* held_reader = nullptr;
    for (HloBuffer::Id b : live) {
      if (!excluded[b]) others += a.live->buffer_size(a.alias->GetBuffer(b));
    }
    // And the most held there for one reader.
    for (const HloInstruction* reader : held.ReadersAt(*instr)) {
      int64_t bytes = 0;
      for (HloBuffer::Id b : held.At(*instr, reader)) {
        if (!std::binary_search(live.begin(), live.end(), b)) {
          bytes += a.live->buffer_size(a.alias->GetBuffer(b));
        }
      }
      if (bytes > held_bytes) {
        held_bytes = bytes;
        held_reader = reader;
      }
    }
    others += held_bytes;
    if (others + parameter_bytes > best.bound_bytes) {
      best.bound_bytes = others + parameter_bytes;
      best.bound_reason =
          absl::StrCat("the working set of ", Where(*instr), " with what is live throughout it");
      if (held_reader != nullptr) {
        absl::StrAppend(&best.bound_reason, ", ", held_bytes,
                        " bytes of it made by instructions this pass never copies (loops, calls, "
                        "copies, sorts, custom calls...) and read by %",
                        held_reader->name());
      }
    }
  }
  if (best.resident_bytes > best.bound_bytes) {
    best.bound_bytes = best.resident_bytes;
    best.bound_reason = "the entry's parameters and outputs, live when it ends";
  }
  OrderingBound ordering(a, touched, excluded, parameter_bytes, held);
  for (const auto& c : a.alias->module().computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == HloOpcode::kCall || a.live->instruction_time(i.get()) < 0) continue;
      best.bound_bytes = std::max(best.bound_bytes,
                                  ordering.ForInstruction(*i, best.bound_bytes, best.bound_reason));
    }
  }
  return best;
}

class Rematerializer {
 public:
  Rematerializer(HloModule& module, const RematerializationOptions& options)
      : module_(module), options_(options) {
    for (const auto& c : module.computations()) {
      computation_names_.insert(c->name());
      for (const auto& i : c->instructions()) instruction_names_.insert(i->name());
    }
  }

  absl::StatusOr<RematerializationResult> Run() {
    RematerializationResult result;
    result.limit_bytes = options_.memory_limit_bytes;
    ASSIGN_OR_RETURN(Analyses a, Analyses::Run(module_));
    result.peak_before = a.live->peak_bytes();
    result.floor = ComputeLargestWorkingSet(a);
    // One loop at a time, each with fresh analyses (the last one's rewrite
    // moved the peak and made and removed instructions).
    while (options_.memory_limit_bytes > 0 && a.live->peak_bytes() > options_.memory_limit_bytes &&
           SinkLoopState(a, result)) {
      ASSIGN_OR_RETURN(a, Analyses::Run(module_));
    }
    // The copies and the rounds after them each get max_rounds (a module
    // needing many copies still gets its rounds).
    for (bool kept = true; kept && options_.memory_limit_bytes > 0 &&
                           a.live->peak_bytes() > options_.memory_limit_bytes &&
                           result.rounds < options_.max_rounds;) {
      ASSIGN_OR_RETURN(kept, MakeAtEachUse(a, result));
    }
    const int rounds_before = result.rounds;
    std::pair<int64_t, int64_t> level = PeakLevel(a);
    bool one_at_a_time = false;  // after a round of several made no progress
    while (options_.memory_limit_bytes > 0 && a.live->peak_bytes() > options_.memory_limit_bytes &&
           result.rounds - rounds_before < options_.max_rounds) {
      ASSIGN_OR_RETURN(bool earlier, MakeLaterWorkEarlier(a, result));
      if (earlier) {
        level = PeakLevel(a);
        one_at_a_time = false;
        continue;
      }
      const int64_t t = a.live->peak_time();
      std::vector<Candidate> chosen =
          Choose(a, t, a.live->peak_bytes() - options_.memory_limit_bytes, one_at_a_time);
      if (chosen.empty()) break;
      ++result.rounds;
      std::vector<Applied> round;
      for (Candidate& c : chosen) round.push_back(Apply(c, t));
      ASSIGN_OR_RETURN(a, Analyses::Run(module_));
      // A round stays only if it lowers the peak, or leaves it at fewer
      // times: the clones, placed before later uses, may make another peak.
      const std::pair<int64_t, int64_t> now = PeakLevel(a);
      if (DebugTries()) {
        std::string names;
        for (const Candidate& c : chosen) {
          absl::StrAppend(&names, " ", c.instruction->name(), "(", c.block.size(), ",", c.net_bytes,
                          ")");
        }
        PrintTry(absl::StrCat("round ", result.rounds), t, level, now, names);
      }
      if (now < level) {
        level = now;
        one_at_a_time = false;
        for (Applied& applied : round) {
          maybe_dead_.insert(applied.block.begin(), applied.block.end());
          maybe_dead_.insert(applied.readers.begin(), applied.readers.end());
          result.recomputed.push_back(std::move(applied.record));
        }
        continue;
      }
      for (auto it = round.rbegin(); it != round.rend(); ++it) Undo(*it);
      // Several at once: try them one at a time; one alone: not again.
      if (chosen.size() > 1) {
        one_at_a_time = true;
      } else {
        refused_.insert(chosen[0].instruction);
      }
      ASSIGN_OR_RETURN(a, Analyses::Run(module_));
    }
    // The originals nothing reads any more (moved values and the operands
    // only they read): removing one may leave its operands unread, so until
    // none is left.
    bool removed = false;
    for (bool again = true; again;) {
      again = false;
      for (auto it = maybe_dead_.begin(); it != maybe_dead_.end();) {
        HloInstruction* i = *it;
        if (!i->users().empty() || i->parent()->root_instruction() == i) {
          ++it;
          continue;
        }
        maybe_dead_.erase(it++);  // other iterators stay valid
        const HloComputation* body = RecomputableFusionBody(*i);
        i->parent()->RemoveInstruction(i);
        if (body != nullptr) module_.RemoveComputation(const_cast<HloComputation*>(body));
        removed = again = true;
      }
    }
    if (removed) {
      ASSIGN_OR_RETURN(a, Analyses::Run(module_));
    }
    result.peak_after = a.live->peak_bytes();
    const auto& sequence = a.live->flattened_instruction_sequence();
    const int64_t t = a.live->peak_time();
    if (t >= 0 && t < static_cast<int64_t>(sequence.size())) {
      result.peak_instruction = Where(*sequence[t]);
    } else {
      result.peak_instruction = "the end of the program";
    }
    result.met =
        options_.memory_limit_bytes <= 0 || result.peak_after <= options_.memory_limit_bytes;
    return result;
  }

 private:
  // Values made from scalars, live at the peak but not read there, each
  // alone in its buffer and read directly by instructions of its own
  // computation (no tuple, not the root), are made again right before each
  // of their users after the peak: a copy per user, the whole chain cloned
  // (its scalar too, or it would stay live over the peak). All at once; kept
  // (and true) only when the peak level falls, undone otherwise; the copies
  // are not held to max_clones_per_value.
  // `a` is the module's analyses, then (when kept) the new module's; an
  // undone attempt leaves the module as `a` saw it.
  absl::StatusOr<bool> MakeAtEachUse(Analyses& a, RematerializationResult& result) {
    const int64_t t = a.live->peak_time();
    const auto& sequence = a.live->flattened_instruction_sequence();
    if (t < 0 || t >= static_cast<int64_t>(sequence.size())) return false;
    const HloInstruction* at_peak = sequence[t];
    // (value, its users after t in schedule order), found before any rewrite.
    std::vector<std::pair<HloInstruction*, std::vector<HloInstruction*>>> values;
    for (const auto& c : module_.computations()) {
      if (c->fusion_instruction() != nullptr || c->IsAsyncComputation()) continue;
      for (const auto& i : c->instructions()) {
        HloInstruction* v = i.get();
        // Made from scalars: a broadcast or iota, through reshapes and converts,
        // of constants of at most one element.
        if (v->opcode() == HloOpcode::kConstant || !IsComputedFromNothing(*v, 1) ||
            c->root_instruction() == v || v->users().empty()) {
          continue;
        }
        const HloValue* value = a.alias->dataflow_analysis().GetValueAt(v, ShapeIndex{});
        if (value == nullptr || value->defining_instruction() != v) continue;
        const HloBuffer& buffer = a.BufferOf(*value);
        const int64_t time = a.live->instruction_time(v);
        if (buffer.values().size() != 1 || !a.LiveAt(buffer, t) || time < 0 || time >= t) continue;
        // Users that run no computation of their own (a call or a loop
        // holding the peak would keep its copy live there).
        bool fits = true;
        std::vector<HloInstruction*> late;
        for (HloInstruction* user : v->users()) {
          const bool runs_computations =
              user->opcode() != HloOpcode::kFusion && !user->called_computations().empty();
          fits = fits && user != at_peak && user->opcode() != HloOpcode::kTuple &&
                 !runs_computations && !user->HasControlEdges() &&
                 a.live->instruction_time(user) >= 0;
          if (a.live->instruction_time(user) > t) late.push_back(user);
        }
        if (!fits || late.empty()) continue;
        absl::c_sort(late, [&](const HloInstruction* l, const HloInstruction* r) {
          return a.live->instruction_time(l) < a.live->instruction_time(r);
        });
        values.push_back({v, std::move(late)});
      }
    }
    if (values.empty()) return false;
    ASSIGN_OR_RETURN(bool kept, TryCopies(a, values, t, result));
    if (kept) return true;
    // One whose copies land on a higher point undoes them all: then the
    // largest few alone.
    if (values.size() == 1) return false;
    absl::c_stable_sort(values, [&](const auto& l, const auto& r) {
      return ShapeSizeBytes(l.first->shape()) > ShapeSizeBytes(r.first->shape());
    });
    for (size_t k = 0; k < values.size() && k < kMaxSingleCopyTries; ++k) {
      ASSIGN_OR_RETURN(kept, TryCopies(a, {values[k]}, t, result));
      if (kept) return true;
    }
    return false;
  }

  // Copies `values` before their later users; kept (and `a` analyses the
  // module again) when the peak level falls, undone otherwise.
  absl::StatusOr<bool> TryCopies(
      Analyses& a,
      const std::vector<std::pair<HloInstruction*, std::vector<HloInstruction*>>>& values,
      int64_t t, RematerializationResult& result) {
    const std::pair<int64_t, int64_t> level = PeakLevel(a);
    std::vector<Applied> applied;
    for (const auto& [v, late] : values) applied.push_back(CopyBeforeEachUser(*v, late, t, a));
    ASSIGN_OR_RETURN(Analyses now, Analyses::Run(module_));
    const std::pair<int64_t, int64_t> now_level = PeakLevel(now);
    if (DebugTries()) {
      std::string names;
      for (const auto& [v, late] : values)
        absl::StrAppend(&names, " ", v->name(), "x", late.size());
      PrintTry("copies", t, level, now_level, names);
    }
    if (now_level < level) {
      ++result.rounds;
      a = std::move(now);
      for (Applied& done : applied) {
        maybe_dead_.insert(done.block.begin(), done.block.end());
        result.recomputed.push_back(std::move(done.record));
      }
      return true;
    }
    for (auto it = applied.rbegin(); it != applied.rend(); ++it) Undo(*it);
    return false;
  }

  // `v` (made from scalars) made again right before each of `late`, which
  // read the copies; the record says how many.
  Applied CopyBeforeEachUser(HloInstruction& v, const std::vector<HloInstruction*>& late, int64_t t,
                             const Analyses& a) {
    HloComputation* computation = v.parent();
    Applied applied;
    applied.computation = computation;
    for (const auto& i : computation->instructions()) applied.order_before.push_back(i.get());
    // The instructions to clone, operands first: the whole chain down to its
    // scalar constant or iota (a shared scalar would stay live over the
    // peak).
    std::vector<HloInstruction*> tree;
    for (HloInstruction* i = &v; i != nullptr;) {
      tree.insert(tree.begin(), i);
      i = i->operand_count() == 1 ? i->operand(0) : nullptr;
    }
    applied.block = tree;
    Recomputation& r = applied.record;
    r.instruction = v.name();
    r.computation = computation->name();
    r.peak_time = t;
    r.bytes_freed = a.live->buffer_size(a.BufferOf(*a.alias->dataflow_analysis().GetValueAt(&v)));
    r.with_operands = static_cast<int>(tree.size()) - 1;
    r.copies = static_cast<int>(late.size());
    r.moved = late.size() == v.users().size();
    // Each user's copy goes right before it. A moved value is made as many
    // times as before, in other places.
    int64_t chain_bytes = 0;
    for (const HloInstruction* i : tree) chain_bytes += BytesAccessed(*i);
    r.bytes_accessed = chain_bytes * static_cast<int64_t>(late.size() - (r.moved ? 1 : 0));
    absl::flat_hash_map<const HloInstruction*, std::vector<HloInstruction*>> before;
    for (HloInstruction* user : late) {
      std::vector<HloInstruction*> made = CloneBlock(tree);
      if (r.clone.empty()) r.clone = made.back()->name();
      for (int64_t k = 0; k < user->operand_count(); ++k) {
        if (user->operand(k) != &v) continue;
        user->ReplaceOperandWith(k, made.back());
        applied.rerouted.push_back({user, k, &v});
      }
      applied.made.insert(applied.made.end(), made.begin(), made.end());
      before[user] = std::move(made);
    }
    PlaceBefore(*computation, before);
    return applied;
  }

  // A block of later work to make earlier: `value`, live across the peak,
  // is freed before it when its users after the peak run before it, with
  // the work after the peak they need and, where that leaves fewer bytes
  // live across the peak, their own users.
  struct EarlierBlock {
    HloInstruction* value = nullptr;
    HloComputation* computation = nullptr;
    absl::flat_hash_set<HloInstruction*> members;
    int64_t net_bytes = 0;  // estimated bytes no longer live at the peak
  };

  // Whether `i` may run earlier than it does: deterministic work that writes
  // a new array into a buffer of its own (no in-place update: moving a write
  // could overwrite what another instruction still reads), no control
  // edges, not its computation's root.
  bool MayMoveEarlier(const Analyses& a, const HloInstruction& i) {
    if (!i.shape().IsArray() || !IsRematerializable(i) || i.HasControlEdges() ||
        i.parent()->root_instruction() == &i) {
      return false;
    }
    const HloValue* v = a.alias->dataflow_analysis().GetValueAt(&i);
    return v != nullptr && v->defining_instruction() == &i && ReadOnlyBuffer(a, &i) != nullptr;
  }

  // Adds `start` and, transitively, its operands made after the peak (after
  // `site_time`, the computation's site of the peak) to `members`; false
  // when one may not move, reads what the peak makes, or the block grows
  // past kMaxEarlierBlock (`members` is then partly filled).
  bool AddWithOperands(const Analyses& a, HloInstruction* start, int64_t t, int64_t site_time,
                       absl::flat_hash_set<HloInstruction*>& members) {
    std::vector<HloInstruction*> work = {start};
    while (!work.empty()) {
      HloInstruction* i = work.back();
      work.pop_back();
      if (members.contains(i)) continue;
      if (!MayMoveEarlier(a, *i)) return false;
      members.insert(i);
      if (members.size() > kMaxEarlierBlock) return false;
      for (HloInstruction* op : i->operands()) {
        const int64_t time = a.live->instruction_time(op);
        if (time < 0 || (time >= t && time <= site_time)) return false;
        if (time > site_time) work.push_back(op);
      }
    }
    return true;
  }

  static bool ReadOutside(const HloInstruction& m,
                          const absl::flat_hash_set<HloInstruction*>& members) {
    for (HloInstruction* user : m.users()) {
      if (!members.contains(user)) return true;
    }
    return false;
  }

  // Per operand, at the peak being worked on: how many of its users run at
  // or after t and when the last of them runs (EarlierNet asks for the same
  // operands many times; an operand read by thousands would make it
  // quadratic).
  struct LateReads {
    int64_t count = 0;
    int64_t last = -1;
  };
  LateReads LateReadsOf(const Analyses& a, const HloInstruction* op, int64_t t) {
    auto [it, inserted] = late_reads_.try_emplace(op);
    if (inserted) {
      for (const HloInstruction* user : op->users()) {
        const int64_t time = a.live->instruction_time(user);
        it->second.last = std::max(it->second.last, time);
        if (time >= t) ++it->second.count;
      }
    }
    return it->second;
  }

  // Estimated bytes no longer live at t when `members` run before it: the
  // operands live at t that only they read at t or later, less the members
  // read after the block.
  int64_t EarlierNet(const Analyses& a, const absl::flat_hash_set<HloInstruction*>& members,
                     int64_t t) {
    int64_t freed = 0, kept = 0;
    // Per operand outside the block, the members reading it.
    absl::flat_hash_map<const HloInstruction*, int64_t> readers;
    for (const HloInstruction* m : members) {
      if (ReadOutside(*m, members)) kept += a.live->buffer_size(*ReadOnlyBuffer(a, m));
      absl::flat_hash_set<const HloInstruction*> operands;
      for (const HloInstruction* op : m->operands()) {
        if (!members.contains(op) && operands.insert(op).second) ++readers[op];
      }
    }
    absl::flat_hash_set<HloBuffer::Id> counted;
    for (const auto& [op, count] : readers) {
      const HloBuffer* buffer = ReadOnlyBuffer(a, op);
      if (buffer == nullptr || !a.LiveAt(*buffer, t) || counted.contains(buffer->id())) continue;
      const LateReads late = LateReadsOf(a, op, t);
      // Only members read it from t on, and nothing else (a tuple, the
      // program's end) holds it past its last read.
      if (count == late.count && a.RangeOf(*buffer)->end <= late.last) {
        counted.insert(buffer->id());
        freed += a.live->buffer_size(*buffer);
      }
    }
    return freed - kept;
  }

  // The later work that would free `x` at t, grown by its members' users
  // while that frees more; nullopt when it cannot move or frees nothing.
  std::optional<EarlierBlock> EarlierBlockFor(const Analyses& a, HloInstruction* x, int64_t t,
                                              int64_t site_time) {
    EarlierBlock block;
    block.value = x;
    block.computation = x->parent();
    bool late = false;
    for (HloInstruction* user : x->users()) {
      const int64_t time = a.live->instruction_time(user);
      if (time < 0 || (time >= t && time <= site_time)) return std::nullopt;  // read at the peak
      if (time > site_time) {
        late = true;
        if (!AddWithOperands(a, user, t, site_time, block.members)) return std::nullopt;
      }
    }
    if (!late) return std::nullopt;
    block.net_bytes = EarlierNet(a, block.members, t);
    for (int step = 0; step < kMaxEarlierSteps; ++step) {
      std::vector<HloInstruction*> crossing;
      for (HloInstruction* m : block.members) {
        if (ReadOutside(*m, block.members)) crossing.push_back(m);
      }
      absl::c_sort(crossing, [&](const HloInstruction* l, const HloInstruction* r) {
        const int64_t sl = ShapeSizeBytes(l->shape()), sr = ShapeSizeBytes(r->shape());
        return sl != sr ? sl > sr : l->name() < r->name();
      });
      if (crossing.size() > kMaxEarlierGrowTries) crossing.resize(kMaxEarlierGrowTries);
      bool grew = false;
      for (HloInstruction* m : crossing) {
        absl::flat_hash_set<HloInstruction*> trial = block.members;
        bool fits = true;
        for (HloInstruction* user : m->users()) {
          fits = fits && AddWithOperands(a, user, t, site_time, trial);
        }
        if (!fits) continue;
        const int64_t net = EarlierNet(a, trial, t);
        if (net > block.net_bytes) {
          block.members = std::move(trial);
          block.net_bytes = net;
          grew = true;
          break;
        }
      }
      if (!grew) break;
    }
    if (block.net_bytes <= 0) return std::nullopt;
    return block;
  }

  // Makes later work earlier (EarlierBlock) at the peak: the best few
  // blocks, each tried after its last operand, right before the site of the
  // peak and at the lowest point between; kept (true, `a` analyses the new
  // module) when the peak level falls, undone otherwise. A value is looked
  // at once per instruction at the peak.
  absl::StatusOr<bool> MakeLaterWorkEarlier(Analyses& a, RematerializationResult& result) {
    const int64_t t = a.live->peak_time();
    const auto& flat = a.live->flattened_instruction_sequence();
    if (earlier_analyses_ >= kMaxEarlierAnalyses || t < 0 ||
        t >= static_cast<int64_t>(flat.size())) {
      return false;
    }
    const HloInstruction* at_peak = flat[t];
    late_reads_.clear();
    std::vector<EarlierBlock> blocks;
    for (const auto& c : module_.computations()) {
      if (c->fusion_instruction() != nullptr || c->IsAsyncComputation() ||
          !a.schedule.is_computation_scheduled(c.get())) {
        continue;
      }
      const std::vector<HloInstruction*>& sequence = a.schedule.sequence(c.get());
      const int64_t site = a.SiteIndex(sequence, t);
      if (site == static_cast<int64_t>(sequence.size())) continue;
      const int64_t site_time = a.live->instruction_time(sequence[site]);
      for (int64_t k = 0; k < site; ++k) {
        HloInstruction* x = sequence[k];
        const HloBuffer* buffer = ReadOnlyBuffer(a, x);
        if (buffer == nullptr || !a.LiveAt(*buffer, t) ||
            !looked_at_earlier_.insert({x, at_peak}).second) {
          continue;
        }
        std::optional<EarlierBlock> block = EarlierBlockFor(a, x, t, site_time);
        if (block.has_value()) blocks.push_back(*std::move(block));
      }
    }
    absl::c_sort(blocks, [](const EarlierBlock& l, const EarlierBlock& r) {
      if (l.net_bytes != r.net_bytes) return l.net_bytes > r.net_bytes;
      return l.value->name() < r.value->name();
    });
    const std::pair<int64_t, int64_t> level = PeakLevel(a);
    const std::vector<int64_t>& profile = a.live->live_bytes();
    std::vector<absl::flat_hash_set<HloInstruction*>> tried;
    for (const EarlierBlock& block : blocks) {
      if (tried.size() >= kMaxEarlierBlockTries) break;
      if (absl::c_find(tried, block.members) != tried.end()) continue;
      tried.push_back(block.members);
      // Where the block may go: after its last operand made outside it, up
      // to the computation's site of the peak (indexes into the sequence;
      // the block goes before the instruction at the index). Every member
      // runs after the site and reads nothing made at it (AddWithOperands),
      // so first <= site.
      HloComputation& c = *block.computation;
      const std::vector<HloInstruction*> sequence = a.schedule.sequence(&c);
      std::vector<HloInstruction*> members;
      int64_t first = 0;
      const int64_t site = a.SiteIndex(sequence, t);
      for (int64_t k = 0; k < static_cast<int64_t>(sequence.size()); ++k) {
        HloInstruction* i = sequence[k];
        if (block.members.contains(i)) {
          members.push_back(i);
          continue;
        }
        for (HloInstruction* user : i->users()) {
          if (block.members.contains(user)) first = std::max(first, k + 1);
        }
      }
      // Bytes live right before sequence[k] (after the one before it).
      auto live_before = [&](int64_t k) {
        return k == 0 ? int64_t{0} : profile[a.live->instruction_time(sequence[k - 1])];
      };
      int64_t lowest = first;
      for (int64_t k = first + 1; k <= site; ++k) {
        if (live_before(k) < live_before(lowest)) lowest = k;
      }
      std::vector<int64_t> places = {lowest};
      for (int64_t k : {first, site}) {
        if (absl::c_find(places, k) == places.end()) places.push_back(k);
      }
      std::vector<HloInstruction*> order_before;
      for (const auto& i : c.instructions()) order_before.push_back(i.get());
      // The best place and the analyses of the module with the block there.
      std::optional<std::pair<int64_t, Analyses>> best;
      for (int64_t place : places) {
        if (earlier_analyses_ >= kMaxEarlierAnalyses) break;
        PlaceBefore(c, {{sequence[place], members}});
        ++earlier_analyses_;
        ASSIGN_OR_RETURN(Analyses now, Analyses::Run(module_));
        const std::pair<int64_t, int64_t> now_level = PeakLevel(now);
        if (DebugTries()) {
          PrintTry("earlier", t, level, now_level,
                   absl::StrCat(" ", block.value->name(), "'s ", members.size(), " later before ",
                                sequence[place]->name()));
        }
        if (now_level < level && (!best.has_value() || now_level < PeakLevel(best->second))) {
          best.emplace(place, std::move(now));
        }
        c.SetInstructionOrder(order_before);
      }
      if (!best.has_value()) continue;
      // The order best's analyses saw, with the same instructions.
      PlaceBefore(c, {{sequence[best->first], members}});
      a = std::move(best->second);
      ++result.rounds;
      Recomputation r;
      r.instruction = block.value->name();
      r.computation = c.name();
      r.clone = sequence[best->first]->name();
      r.peak_time = t;
      r.bytes_freed = block.net_bytes;
      r.peak_lowered = level.first - a.live->peak_bytes();
      r.made_earlier = static_cast<int>(members.size());
      result.recomputed.push_back(std::move(r));
      return true;
    }
    return false;
  }

  // Loop state made again inside the loop instead of carried: an element the
  // body hands on unchanged, that nothing reads after the loop, whose initial
  // value is computed from nothing (a constant, an iota, a broadcast of one;
  // copy insertion's copies looked through) and whose buffer is live at the
  // peak. Its readers in the body and condition read a copy made right
  // before them (while_loop_state.h), and the element leaves the loop. The
  // peak cannot rise: the copy is live only where the element was, and
  // shorter. Rewrites the first loop that has such elements and returns
  // true (the caller analyses the module again), false when none has.
  bool SinkLoopState(const Analyses& a, RematerializationResult& result) {
    std::vector<HloInstruction*> loops;
    for (const auto& c : module_.computations()) {
      if (c->fusion_instruction() != nullptr || c->IsAsyncComputation()) continue;
      for (const auto& i : c->instructions()) {
        if (i->opcode() == HloOpcode::kWhile) loops.push_back(i.get());
      }
    }
    if (loops.empty()) return false;
    const int64_t t = a.live->peak_time();
    const auto callers = CountCallers(module_);
    NameUniquer names = NameUniquer::ForInstructions(module_);
    for (HloInstruction* loop : loops) {
      const std::vector<bool> sinkable = SinkableElements(*loop, callers);
      const int64_t n = static_cast<int64_t>(sinkable.size());
      std::vector<Recomputation> records;
      std::vector<bool> sunk(n, false);
      for (int64_t i = 0; i < n; ++i) {
        if (!sinkable[i]) continue;
        const HloInstruction* v = loop->operand(0)->operand(i);
        while (v->opcode() == HloOpcode::kCopy) v = v->operand(0);
        const HloValue* value = a.alias->dataflow_analysis().GetValueAt(loop, {i});
        if (value == nullptr || !a.LiveAt(a.BufferOf(*value), t) || CopyLiveAt(a, *loop, i, t)) {
          continue;
        }
        Recomputation r;
        r.instruction = v->name();
        r.computation = loop->called_computations()[1]->name();
        r.loop_state = true;
        r.peak_time = t;
        r.bytes_freed = a.live->buffer_size(a.BufferOf(*value));
        std::vector<const HloInstruction*> tree = {v};
        for (size_t k = 0; k < tree.size(); ++k) {
          r.flops += Flops(*tree[k]);
          r.bytes_accessed += BytesAccessed(*tree[k]);
          for (const HloInstruction* op : tree[k]->operands()) tree.push_back(op);
        }
        std::vector<HloInstruction*> copies = SinkInvariantElement(*loop, i, *v, names);
        r.clone = copies.empty() ? "" : copies.front()->name();
        if (copies.empty()) r.flops = r.bytes_accessed = 0;  // nothing read it
        records.push_back(std::move(r));
        sunk[i] = true;
      }
      if (records.empty()) continue;
      // Nothing reads the sunk elements now but the root's hand-on, and
      // nothing after the loop (checked above): they go, and nothing else
      // (the lower bound counts what the other elements' code holds). The
      // module changed: the caller analyses it again before looking at
      // another loop.
      RemoveDeadElements(*loop, names, &sunk);
      for (const auto& c : module_.computations()) {
        for (const auto& i : c->instructions()) instruction_names_.insert(i->name());
      }
      for (Recomputation& r : records) result.recomputed.push_back(std::move(r));
      return true;
    }
    return false;
  }

  // Whether a copy of loop state element `index` made right before its first
  // reader in the body (or the condition) would be live at time t: t lies
  // between that reader and the last (a fusion that reads the element whole
  // at the peak, say). Sinking it then frees nothing there.
  static bool CopyLiveAt(const Analyses& a, const HloInstruction& loop, int64_t index, int64_t t) {
    for (const HloComputation* c : loop.called_computations()) {
      int64_t first = -1, last = -1;
      for (const HloInstruction* e : c->parameter_instruction(0)->users()) {
        if (e->attrs().tuple_index != index) continue;
        for (const HloInstruction* user : e->users()) {
          // The body's root hands the element on at its own index (not a
          // read); at another index it reads it at the end of the iteration.
          if (user == c->root_instruction() && user->opcode() == HloOpcode::kTuple) {
            bool elsewhere = false;
            for (int64_t k = 0; k < user->operand_count(); ++k) {
              elsewhere = elsewhere || (user->operand(k) == e && k != index);
            }
            if (!elsewhere) continue;
          } else if (user->opcode() == HloOpcode::kTuple || user->opcode() == HloOpcode::kWhile ||
                     user->opcode() == HloOpcode::kCall ||
                     user->opcode() == HloOpcode::kConditional) {
            return true;  // held on (an inner loop's state, a call): assume live throughout
          }
          const int64_t time = a.live->instruction_time(user);
          if (time < 0) return true;  // not scheduled: assume the worst
          first = first < 0 ? time : std::min(first, time);
          last = std::max(last, time);
        }
      }
      if (first >= 0 && first <= t && t <= last) return true;
    }
    return false;
  }

  // The candidates live across time t, best first, taken until they save
  // `need` bytes (only the best with `one`); none reads another's result.
  std::vector<Candidate> Choose(const Analyses& a, int64_t t, int64_t need, bool one) {
    std::vector<Candidate> candidates;
    for (const HloBuffer& buffer : a.alias->buffers()) {
      if (buffer.values().size() != 1 || !a.LiveAt(buffer, t)) continue;
      std::optional<Candidate> c = Evaluate(a, *buffer.values()[0], t);
      if (c.has_value()) candidates.push_back(*std::move(c));
    }
    // Cheapest per byte freed first (data movement and elementwise math
    // before dots and convolutions), then the most bytes.
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
      const double cx = static_cast<double>(x.flops) / static_cast<double>(x.net_bytes);
      const double cy = static_cast<double>(y.flops) / static_cast<double>(y.net_bytes);
      const bool cheap_x = cx <= 1, cheap_y = cy <= 1;
      if (cheap_x != cheap_y) return cheap_x;
      if (!cheap_x && cx != cy) return cx < cy;
      if (x.net_bytes != y.net_bytes) return x.net_bytes > y.net_bytes;
      if (x.flops != y.flops) return x.flops < y.flops;
      return x.instruction->name() < y.instruction->name();
    });
    std::vector<Candidate> chosen;
    // Blocks apart: none recomputes or reads what another recomputes.
    absl::flat_hash_set<const HloInstruction*> taken;  // chosen blocks and readers
    absl::flat_hash_set<const HloInstruction*> read;   // what chosen blocks read
    int64_t saved = 0;
    for (Candidate& c : candidates) {
      if (saved >= need || (one && !chosen.empty())) break;
      bool related = false;
      for (const HloInstruction* i : c.block) {
        related |= taken.contains(i) || read.contains(i);
        for (const HloInstruction* op : i->operands()) related |= taken.contains(op);
      }
      for (const HloInstruction* i : c.readers) related |= taken.contains(i);
      if (related) continue;
      taken.insert(c.block.begin(), c.block.end());
      taken.insert(c.readers.begin(), c.readers.end());
      for (const HloInstruction* i : c.block)
        read.insert(i->operands().begin(), i->operands().end());
      saved += c.net_bytes;
      chosen.push_back(std::move(c));
    }
    return chosen;
  }

  // A candidate if `value` may be recomputed after time t and that saves
  // bytes at t.
  std::optional<Candidate> Evaluate(const Analyses& a, const HloValue& value, int64_t t) {
    HloInstruction* d = value.defining_instruction();
    const HloComputation* c = d->parent();
    const int64_t defined = a.live->instruction_time(d);
    const bool element = value.defining_index().size() == 1 && d->shape().IsTuple();
    if (defined < 0 || defined >= t || (!value.defining_index().empty() && !element) ||
        c->IsAsyncComputation() || c->root_instruction() == d || d->HasControlEdges() ||
        !IsRematerializable(*d) || refused_.contains(d)) {
      return std::nullopt;
    }
    auto origin = origin_.find(d->name());
    if (clones_[origin == origin_.end() ? d->name() : origin->second] >=
        options_.max_clones_per_value) {
      return std::nullopt;
    }
    // Read only directly (an element: through get-tuple-elements of it);
    // held only by tuples that read it directly.
    Candidate candidate;
    candidate.instruction = d;
    if (element) {
      candidate.tuple_index = value.defining_index()[0];
      for (const HloPosition& p : value.positions()) {
        if (p.instruction == d) continue;
        if (p.instruction->opcode() != HloOpcode::kGetTupleElement || !p.index.empty() ||
            p.instruction->operand(0) != d || p.instruction->HasControlEdges() ||
            p.instruction->attrs().tuple_index != candidate.tuple_index) {
          return std::nullopt;
        }
        candidate.readers.push_back(p.instruction);
      }
    } else {
      candidate.readers.push_back(d);
      for (const HloPosition& p : value.positions()) {
        if (p.instruction == d) continue;
        if (p.instruction->opcode() != HloOpcode::kTuple || p.index.size() != 1 ||
            p.instruction->operand(p.index[0]) != d) {
          return std::nullopt;
        }
      }
    }
    for (const HloUse& use : value.uses()) {
      const HloInstruction* operand = use.instruction->operand(use.operand_number);
      if (!use.operand_index.empty() ||
          std::find(candidate.readers.begin(), candidate.readers.end(), operand) ==
              candidate.readers.end()) {
        return std::nullopt;
      }
    }
    const std::vector<HloInstruction*>& sequence = a.schedule.sequence(c);
    const int64_t site = a.SiteIndex(sequence, t);
    if (site == static_cast<int64_t>(sequence.size())) return std::nullopt;
    const int64_t site_time = a.live->instruction_time(sequence[site]);
    bool early = false;
    absl::flat_hash_set<const HloInstruction*> late;
    for (const HloInstruction* reader : candidate.readers) {
      for (HloInstruction* user : reader->users()) {
        const int64_t time = a.live->instruction_time(user);
        if (time < 0) return std::nullopt;
        if (time < t) {
          early = true;
        } else if (time > site_time) {
          if (late.insert(user).second) candidate.late_users.push_back(user);
        } else {
          return std::nullopt;  // read at the peak itself
        }
      }
    }
    if (candidate.late_users.empty()) return std::nullopt;
    candidate.moved = !early;
    // The operands it reads after t: those live at t cost nothing, those dead
    // by then are kept alive over it or recomputed too, whichever keeps fewer
    // bytes.
    absl::flat_hash_set<HloBuffer::Id> kept_buffers;
    std::optional<int64_t> kept = BlockOperands(a, d, t, 0, candidate.block, kept_buffers);
    if (!kept.has_value()) return std::nullopt;
    candidate.block.push_back(d);
    candidate.net_bytes = a.live->buffer_size(a.BufferOf(value)) - *kept;
    if (candidate.net_bytes <= 0) return std::nullopt;
    for (const HloInstruction* i : candidate.block) {
      candidate.flops =
          Saturated(static_cast<double>(candidate.flops) + static_cast<double>(Flops(*i)));
    }
    return candidate;
  }

  // The buffer of `op`'s value when nothing writes it in place later (one
  // value), with a live range; nullptr otherwise.
  const HloBuffer* ReadOnlyBuffer(const Analyses& a, const HloInstruction* op) {
    if (!op->shape().IsArray()) return nullptr;
    const HloValue* v = a.alias->dataflow_analysis().GetValueAt(op);
    if (v == nullptr) return nullptr;
    const HloBuffer& buffer = a.BufferOf(*v);
    if (buffer.values().size() != 1 || a.RangeOf(buffer) == nullptr) return nullptr;
    return &buffer;
  }

  // Whether `op`, an operand of a recomputed value, may be recomputed with it
  // (after t): a rematerializable instruction of the same computation,
  // defined before t, with no control edges.
  bool RecomputableOperand(const Analyses& a, const HloInstruction* op, int64_t t) {
    const int64_t defined = a.live->instruction_time(op);
    return defined >= 0 && defined < t && op->parent()->root_instruction() != op &&
           !op->HasControlEdges() && IsRematerializable(*op);
  }

  // Bytes of i's operands kept alive over t when i is recomputed after it;
  // appends to `block` (operands first) the operands recomputed instead;
  // nullopt when an operand may be written in place later.
  std::optional<int64_t> BlockOperands(const Analyses& a, HloInstruction* i, int64_t t, int depth,
                                       std::vector<HloInstruction*>& block,
                                       absl::flat_hash_set<HloBuffer::Id>& kept_buffers) {
    int64_t kept = 0;
    for (HloInstruction* op : i->operands()) {
      if (std::find(block.begin(), block.end(), op) != block.end()) continue;
      const HloBuffer* buffer = ReadOnlyBuffer(a, op);
      if (buffer == nullptr) return std::nullopt;
      if (a.RangeOf(*buffer)->end >= t || kept_buffers.contains(buffer->id())) continue;
      const int64_t size = a.live->buffer_size(*buffer);
      // Recompute op too when its own dead operands take fewer bytes.
      if (depth < kMaxBlockDepth && static_cast<int>(block.size()) + 2 < kMaxBlockSize &&
          RecomputableOperand(a, op, t)) {
        std::vector<HloInstruction*> sub = block;
        absl::flat_hash_set<HloBuffer::Id> sub_kept = kept_buffers;
        std::optional<int64_t> below = BlockOperands(a, op, t, depth + 1, sub, sub_kept);
        if (below.has_value() && *below < size &&
            static_cast<int>(sub.size()) + 1 < kMaxBlockSize) {
          block = std::move(sub);
          block.push_back(op);
          kept_buffers = std::move(sub_kept);
          kept += *below;
          continue;
        }
      }
      kept_buffers.insert(buffer->id());
      kept += size;
    }
    return kept;
  }

  std::string UniqueName(absl::flat_hash_set<std::string>& names, const std::string& base) {
    std::string name = base;
    for (int n = 1; names.contains(name); ++n) name = absl::StrCat(base, ".", n);
    names.insert(name);
    return name;
  }

  // A copy of a recomputable fusion's body for the clone `fusion` (the
  // reductions in it share their to_apply).
  HloComputation* CloneFusionBody(const HloComputation& body, HloInstruction* fusion) {
    auto copy = std::make_unique<HloComputation>(UniqueName(computation_names_, body.name()));
    copy->set_execution_thread(body.execution_thread());
    HloComputation* clone = module_.AddComputationAfter(std::move(copy), &body);
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (const auto& instr : body.instructions()) {
      auto c = std::make_unique<HloInstruction>(
          instr->opcode(), UniqueName(instruction_names_, instr->name()), instr->shape());
      c->attrs() = instr->attrs();
      c->set_called_computations(instr->called_computations());
      map[instr.get()] = clone->AddInstruction(std::move(c));
    }
    for (const auto& instr : body.instructions()) {
      HloInstruction* c = map.at(instr.get());
      for (HloInstruction* op : instr->operands()) c->AppendOperand(map.at(op));
      if (instr->opcode() == HloOpcode::kParameter) {
        clone->SetParameter(instr->attrs().parameter_number, c);
      }
    }
    clone->set_root_instruction(map.at(body.root_instruction()));
    clone->set_fusion_instruction(fusion);
    return clone;
  }

  // A clone of `i` reading `operands` (shares a reduction's to_apply; a
  // fusion gets its own body).
  // Only IsRematerializable instructions and get-tuple-elements (no array of
  // their own) come here: the lower bound's HeldValues relies on it.
  HloInstruction* CloneInstruction(HloInstruction* i, const std::string& origin,
                                   const std::vector<HloInstruction*>& operands) {
    auto instr = std::make_unique<HloInstruction>(
        i->opcode(), UniqueName(instruction_names_, absl::StrCat(origin, ".remat")), i->shape());
    instr->attrs() = i->attrs();
    for (HloInstruction* op : operands) instr->AppendOperand(op);
    HloInstruction* clone = i->parent()->AddInstruction(std::move(instr));
    if (const HloComputation* body = RecomputableFusionBody(*i)) {
      clone->set_called_computations({CloneFusionBody(*body, clone)});
    } else {
      clone->set_called_computations(i->called_computations());
    }
    return clone;
  }

  Applied Apply(const Candidate& c, int64_t t) {
    HloInstruction* d = c.instruction;
    HloComputation* computation = d->parent();
    Applied applied;
    applied.computation = computation;
    for (const auto& i : computation->instructions()) applied.order_before.push_back(i.get());
    applied.block = c.block;
    if (c.tuple_index >= 0) applied.readers = c.readers;
    Recomputation& r = applied.record;
    r.instruction = d->name();
    r.computation = computation->name();
    r.moved = c.moved;
    r.peak_time = t;
    r.bytes_freed = c.net_bytes;
    // A moved value is computed once still; the operands recomputed with it
    // are computed twice where their originals stay.
    r.flops = c.moved ? c.flops - Flops(*d) : c.flops;
    for (const HloInstruction* i : c.block) {
      if (!(c.moved && i == d)) r.bytes_accessed += BytesAccessed(*i);
    }
    r.with_operands = static_cast<int>(c.block.size()) - 1;

    std::vector<HloInstruction*> made = CloneBlock(c.block);
    HloInstruction* clone = made.back();  // d's: the block ends with d
    if (c.tuple_index >= 0) {
      // The later users read the element through a get-tuple-element of the
      // clone, made like the original's.
      HloInstruction* gte = c.readers.front();
      clone = CloneInstruction(gte, gte->name(), {clone});
      made.push_back(clone);
    }
    r.clone = clone->name();

    absl::flat_hash_set<const HloInstruction*> late(c.late_users.begin(), c.late_users.end());
    for (HloInstruction* user : c.late_users) {
      for (int64_t k = 0; k < user->operand_count(); ++k) {
        HloInstruction* operand = user->operand(k);
        if (std::find(c.readers.begin(), c.readers.end(), operand) == c.readers.end()) continue;
        user->ReplaceOperandWith(k, clone);
        applied.rerouted.push_back({user, k, operand});
      }
    }
    // The order stays a schedule: the clones go right before the first later
    // user (after their operands, which came before d), operands first.
    for (const auto& i : computation->instructions()) {
      if (late.contains(i.get())) {
        PlaceBefore(*computation, {{i.get(), made}});
        break;
      }
    }
    applied.made = std::move(made);
    return applied;
  }

  // Clones of `block` (operands first), each reading the clones of the
  // block's members and the originals of the rest, counted against their
  // originals (Undo takes the count back); appended to the computation, for
  // PlaceBefore to place.
  std::vector<HloInstruction*> CloneBlock(const std::vector<HloInstruction*>& block) {
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> clones;
    std::vector<HloInstruction*> made;
    for (HloInstruction* i : block) {
      auto origin_it = origin_.find(i->name());
      const std::string origin = origin_it == origin_.end() ? i->name() : origin_it->second;
      std::vector<HloInstruction*> operands;
      for (HloInstruction* op : i->operands()) {
        auto it = clones.find(op);
        operands.push_back(it == clones.end() ? op : it->second);
      }
      HloInstruction* clone = CloneInstruction(i, origin, operands);
      clones[i] = clone;
      made.push_back(clone);
      origin_[clone->name()] = origin;
      ++clones_[origin];
    }
    return made;
  }

  // Moves each list of `before`'s values, in its order, right before its
  // key; the order stays a schedule when every list's operands come before
  // its key.
  static void PlaceBefore(
      HloComputation& computation,
      const absl::flat_hash_map<const HloInstruction*, std::vector<HloInstruction*>>& before) {
    absl::flat_hash_set<const HloInstruction*> placed;
    for (const auto& [key, list] : before) placed.insert(list.begin(), list.end());
    std::vector<HloInstruction*> order;
    order.reserve(computation.instructions().size());
    for (const auto& i : computation.instructions()) {
      if (placed.contains(i.get())) continue;
      if (auto it = before.find(i.get()); it != before.end()) {
        order.insert(order.end(), it->second.begin(), it->second.end());
      }
      order.push_back(i.get());
    }
    computation.SetInstructionOrder(order);  // holds every instruction once
  }

  // Takes back what Apply did: the later users read the original again, the
  // clones (and their fusion bodies) go, the order is as it was.
  void Undo(Applied& applied) {
    for (auto it = applied.rerouted.rbegin(); it != applied.rerouted.rend(); ++it) {
      std::get<0>(*it)->ReplaceOperandWith(std::get<1>(*it), std::get<2>(*it));
    }
    for (auto it = applied.made.rbegin(); it != applied.made.rend(); ++it) {
      HloInstruction* clone = *it;
      const HloComputation* body =
          clone->opcode() == HloOpcode::kFusion ? clone->called_computations()[0] : nullptr;
      auto origin = origin_.find(clone->name());
      if (origin != origin_.end()) --clones_[origin->second];
      applied.computation->RemoveInstruction(clone);
      if (body != nullptr) module_.RemoveComputation(const_cast<HloComputation*>(body));
    }
    applied.computation->SetInstructionOrder(applied.order_before);
  }

  HloModule& module_;
  const RematerializationOptions& options_;
  absl::flat_hash_set<std::string> computation_names_, instruction_names_;
  absl::flat_hash_map<std::string, std::string> origin_;  // clone -> original
  absl::flat_hash_map<std::string, int> clones_;          // original -> clones made
  // Values whose recomputation made no progress: not tried again.
  absl::flat_hash_set<const HloInstruction*> refused_;
  // (value, instruction at the peak) whose later work was looked at for
  // MakeLaterWorkEarlier: not again at that peak.
  absl::flat_hash_set<std::pair<const HloInstruction*, const HloInstruction*>> looked_at_earlier_;
  absl::flat_hash_map<const HloInstruction*, LateReads> late_reads_;  // at this peak
  int earlier_analyses_ = 0;  // analyses run for MakeLaterWorkEarlier
  // Originals recomputed by kept rounds: removed at the end if unread.
  absl::flat_hash_set<HloInstruction*> maybe_dead_;
};

std::string Bytes(int64_t b) { return absl::StrCat(b, " bytes"); }

}  // namespace

int64_t RematerializationResult::total_flops() const {
  int64_t total = 0;
  for (const Recomputation& r : recomputed) total += r.flops;
  return total;
}

int64_t RematerializationResult::total_bytes_accessed() const {
  int64_t total = 0;
  for (const Recomputation& r : recomputed) total += r.bytes_accessed;
  return total;
}

std::string RematerializationResult::Summary() const {
  int moved = 0, earlier = 0;
  for (const Recomputation& r : recomputed) {
    moved += r.moved ? 1 : 0;
    earlier += r.made_earlier > 0 ? 1 : 0;
  }
  std::string out = absl::StrCat(
      "rematerialization: limit ", Bytes(limit_bytes), "; peak ", Bytes(peak_before), " -> ",
      Bytes(peak_after), met ? " (met)" : " (NOT met)", " in ", rounds, " round",
      rounds == 1 ? "" : "s", "; ", recomputed.size() - moved - earlier, " recomputed, ", moved,
      " moved", earlier > 0 ? absl::StrCat(", ", earlier, " with later uses made earlier") : "",
      "; extra cost ", total_flops(), " FLOPs, ", Bytes(total_bytes_accessed()),
      " accessed; largest instruction working set ", Bytes(floor.bytes), " (", floor.instruction,
      "); parameters and outputs ", Bytes(floor.resident_bytes), "; lower bound ",
      Bytes(floor.bound_bytes), "\n");
  for (const Recomputation& r : recomputed) {
    if (r.loop_state) {
      absl::StrAppend(&out, "  %", r.instruction, ": no longer loop state of %", r.computation,
                      r.clone.empty() ? " (nothing read it)"
                                      : absl::StrCat(", made again as %", r.clone,
                                                     " before its reads in each iteration"),
                      "; ", Bytes(r.bytes_freed), " freed at the peak (time ", r.peak_time, "); ",
                      r.flops, " FLOPs, ", Bytes(r.bytes_accessed), " accessed per iteration\n");
      continue;
    }
    if (r.made_earlier > 0) {
      absl::StrAppend(&out, "  %", r.instruction, " in %", r.computation,
                      ": its later uses made earlier, ", r.made_earlier, " instruction",
                      r.made_earlier == 1 ? "" : "s", " moved before %", r.clone, "; ",
                      Bytes(r.bytes_freed), " no longer live at the peak (time ", r.peak_time,
                      "), the peak ", Bytes(r.peak_lowered), " lower; 0 FLOPs\n");
      continue;
    }
    if (r.copies > 1) {
      absl::StrAppend(&out, "  %", r.instruction, " in %", r.computation,
                      ": made again before each of ", r.copies, " later users (first as %", r.clone,
                      ")", r.moved ? ", the original gone" : "", "; ", Bytes(r.bytes_freed),
                      " freed at the peak (time ", r.peak_time, "); ", r.flops, " FLOPs, ",
                      Bytes(r.bytes_accessed), " accessed\n");
      continue;
    }
    absl::StrAppend(
        &out, "  %", r.instruction, " in %", r.computation,
        r.moved ? ": moved to %" : ": recomputed as %", r.clone,
        r.with_operands > 0 ? absl::StrCat(" with ", r.with_operands, " of its operands") : "",
        " before its later uses; ", Bytes(r.bytes_freed), " freed at the peak (time ", r.peak_time,
        "); ", r.flops, " FLOPs, ", Bytes(r.bytes_accessed), " accessed\n");
  }
  return out;
}

absl::StatusOr<WorkingSet> LargestWorkingSet(const HloModule& module) {
  ASSIGN_OR_RETURN(Analyses a, Analyses::Run(module));
  return ComputeLargestWorkingSet(a);
}

absl::StatusOr<RematerializationResult> Rematerialize(HloModule& module,
                                                      const RematerializationOptions& options) {
  if (options.memory_limit_bytes < 0) {
    return InvalidArgument("memory limit ", options.memory_limit_bytes, " bytes is negative");
  }
  ASSIGN_OR_RETURN(RematerializationResult result, Rematerializer(module, options).Run());
  if (!result.met && options.error_if_not_met) return NotMetError(module, result);
  return result;
}

absl::Status NotMetError(const HloModule& module, const RematerializationResult& result) {
  return absl::ResourceExhaustedError(
      absl::StrCat("module ", module.name(), ": the memory limit of ", Bytes(result.limit_bytes),
                   " cannot be met: the schedule's peak is ", Bytes(result.peak_after), " at ",
                   result.peak_instruction, " after rematerialization (", Bytes(result.peak_before),
                   " before; ", result.recomputed.size(),
                   " values recomputed or moved); the largest "
                   "single instruction's working set (operands + outputs) is ",
                   Bytes(result.floor.bytes), " (", result.floor.instruction,
                   ") and the entry's parameters and outputs, live when it ends, take ",
                   Bytes(result.floor.resident_bytes),
                   "; with the parameters, live throughout, "
                   "no schedule goes below ",
                   Bytes(result.floor.bound_bytes), " (", result.floor.bound_reason, ")"));
}

}  // namespace xlite
