// The in-process collectives on N = 1, 2, 4, 8 threads acting as devices,
// checked bitwise against the reference interpreter on the same inputs, and
// the pieces the interpreter has no form for (split != concat all-to-all,
// ragged-all-to-all, timeouts) against hand-computed results.
#include "xlite/collectives/in_process_communicator.h"

#include <chrono>
#include <complex>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "xlite/collectives/collectives_test_util.h"
#include "xlite/collectives/replica_groups.h"
#include "xlite/eval/evaluator.h"
#include "xlite/support/status.h"
#include "xlite/text/parser.h"

namespace xlite::collectives {
namespace {
namespace XLITE_UNITY_ID {

using testing::OnThreads;
using testing::RandomLiteral;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  return module.ok() ? std::move(*module) : nullptr;
}

// Runs `hlo` on the interpreter and the library with the same random inputs
// of `input_shape`; expects identical bytes on every device.
void ExpectSameAsInterpreter(const std::string& hlo, int64_t replicas, int64_t partitions,
                             const Shape& input_shape, uint64_t seed = 1) {
  SCOPED_TRACE(absl::StrCat(replicas, "x", partitions, " devices:\n", hlo));
  std::unique_ptr<HloModule> module = Parse(hlo);
  ASSERT_NE(module, nullptr);
  std::mt19937_64 rng(seed);
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < replicas * partitions; ++d) {
    args.emplace_back();
    args.back().push_back(RandomLiteral(input_shape, rng));
  }
  EvalOptions options;
  options.replica_count = replicas;
  options.num_partitions = partitions;
  absl::StatusOr<std::vector<Literal>> expected = EvaluateReplicated(*module, args, options);
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<std::vector<std::vector<Literal>>> actual = testing::RunLibrary(
      *module->entry_computation()->root_instruction(), replicas, partitions, args);
  ASSERT_TRUE(actual.ok()) << actual.status();
  for (size_t d = 0; d < expected->size(); ++d) {
    EXPECT_EQ((*expected)[d].raw_data(), (*actual)[d][0].raw_data())
        << "device " << d << ": interpreter " << (*expected)[d].ToStringOneline() << " library "
        << (*actual)[d][0].ToStringOneline();
  }
}

std::string Reducer(const std::string& type, const std::string& op) {
  return absl::StrCat("red {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  ROOT r = ", type, "[] ", op, "(a, b)\n}\n");
}

TEST(InProcessCommunicator, AllReduceMatchesInterpreterForEveryTypeAndKind) {
  const std::vector<std::string> ints = {"pred", "s4", "s8",  "s16", "s32", "s64",
                                         "u4",   "u8", "u16", "u32", "u64"};
  const std::vector<std::string> floats = {"f16",    "bf16",       "f32",    "f64",     "f8e4m3fn",
                                           "f8e5m2", "f8e4m3fnuz", "f8e3m4", "f4e2m1fn"};
  std::vector<std::pair<std::string, std::string>> cases;
  for (const std::string& t : ints) {
    for (const char* op : {"add", "multiply", "minimum", "maximum", "and", "or", "xor"}) {
      cases.emplace_back(t, op);
    }
  }
  for (const std::string& t : floats) {
    for (const char* op : {"add", "multiply", "minimum", "maximum"}) cases.emplace_back(t, op);
  }
  for (const char* t : {"c64", "c128"}) {
    for (const char* op : {"add", "multiply", "minimum", "maximum"}) cases.emplace_back(t, op);
  }
  for (int64_t n : {1, 2, 4, 8}) {
    for (const auto& [type, op] : cases) {
      const std::string hlo =
          absl::StrCat("HloModule m\n", Reducer(type, op), "ENTRY e {\n  x = ", type,
                       "[37] parameter(0)\n  ROOT r = ", type,
                       "[37] all-reduce(x), replica_groups={}, to_apply=red\n}\n");
      std::optional<PrimitiveType> pt = PrimitiveTypeFromName(type);
      ASSERT_TRUE(pt.has_value());
      ExpectSameAsInterpreter(hlo, n, 1, Shape::Array(*pt, {37}), n * 1000 + cases.size());
    }
  }
}

TEST(InProcessCommunicator, AllReduceWithAComputationOfItsOwn) {
  // Not a plain kind: runs as an element callback (here: the interpreter).
  const std::string hlo = R"(HloModule m
red {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] multiply(a, b)
  ROOT r = f32[] add(m, a)
}
ENTRY e {
  x = f32[9] parameter(0)
  ROOT r = f32[9] all-reduce(x), replica_groups={{0,2},{1,3}}, to_apply=red
})";
  ExpectSameAsInterpreter(hlo, 4, 1, Shape::Array(PrimitiveType::F32, {9}));
  // Swapped parameters are not the plain kind either (NaN order).
  ExpectSameAsInterpreter(
      absl::StrCat("HloModule m\n",
                   "red {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                   "  ROOT r = f32[] maximum(b, a)\n}\n",
                   "ENTRY e {\n  x = f32[9] parameter(0)\n"
                   "  ROOT r = f32[9] all-reduce(x), replica_groups={}, to_apply=red\n}\n"),
      8, 1, Shape::Array(PrimitiveType::F32, {9}), 99);
}

// Every group form and mode on 8 devices.
TEST(InProcessCommunicator, AllReduceGroupFormsMatchInterpreter) {
  const std::string body = absl::StrCat("HloModule m\n", Reducer("f32", "add"),
                                        "ENTRY e {\n  x = f32[5] parameter(0)\n  ROOT r = f32[5] "
                                        "all-reduce(x), ATTRS, to_apply=red\n}\n");
  struct Form {
    const char* attrs;
    int64_t replicas, partitions;
  };
  const Form forms[] = {
      {"replica_groups={}", 8, 1},
      {"replica_groups={{0,1,2,3},{4,5,6,7}}", 8, 1},
      {"replica_groups={{7,0},{1,6},{5,2},{3,4}}", 8, 1},
      {"replica_groups=[2,4]<=[8]", 8, 1},
      {"replica_groups=[4,2]<=[2,4]T(1,0)", 8, 1},
      {"replica_groups=mesh['x'=2,'y'=4] {'x'}", 8, 1},
      {"replica_groups=mesh['x'=2,'y'=4] {'y', 'x'}", 8, 1},
      {"replica_groups={{0,1}}", 2, 4},                // per partition
      {"channel_id=1, replica_groups={{0,1}}", 2, 4},  // replica+partition
      {"channel_id=1, replica_groups={{0},{1}}", 2, 4},
      {"channel_id=1, replica_groups={{0,5,2},{1,3,4},{6,7}}, use_global_device_ids=true", 2, 4},
      {"channel_id=1, replica_groups=[2,4]<=[4,2]T(1,0), use_global_device_ids=true", 4, 2},
  };
  for (const Form& f : forms) {
    ExpectSameAsInterpreter(absl::StrReplaceAll(body, {{"ATTRS", f.attrs}}), f.replicas,
                            f.partitions, Shape::Array(PrimitiveType::F32, {5}));
  }
}

TEST(InProcessCommunicator, DataMovementMatchesInterpreter) {
  for (int64_t n : {1, 2, 4, 8}) {
    const std::string ns = absl::StrCat(n);
    ExpectSameAsInterpreter(
        absl::StrCat("HloModule m\nENTRY e {\n  x = s32[3,2] parameter(0)\n  ROOT r = s32[", 3 * n,
                     ",2] all-gather(x), replica_groups={}, dimensions={0}\n}\n"),
        n, 1, Shape::Array(PrimitiveType::S32, {3, 2}));
    ExpectSameAsInterpreter(
        absl::StrCat("HloModule m\n", Reducer("bf16", "add"), "ENTRY e {\n  x = bf16[", 2 * n,
                     ",3] parameter(0)\n  ROOT r = bf16[2,3] reduce-scatter(x), "
                     "replica_groups={}, dimensions={0}, to_apply=red\n}\n"),
        n, 1, Shape::Array(PrimitiveType::BF16, {2 * n, 3}));
    ExpectSameAsInterpreter(
        absl::StrCat("HloModule m\nENTRY e {\n  x = s8[3,2] parameter(0)\n  ROOT r = s8[3,", 2 * n,
                     "] all-gather(x), replica_groups={}, dimensions={1}\n}\n"),
        n, 1, Shape::Array(PrimitiveType::S8, {3, 2}));
    ExpectSameAsInterpreter(
        absl::StrCat("HloModule m\n", Reducer("f32", "add"), "ENTRY e {\n  x = f32[3,", 2 * n,
                     "] parameter(0)\n  ROOT r = f32[3,2] reduce-scatter(x), "
                     "replica_groups={}, dimensions={1}, to_apply=red\n}\n"),
        n, 1, Shape::Array(PrimitiveType::F32, {3, 2 * n}));
    for (int64_t dim : {0, 1, 2}) {
      std::vector<int64_t> dims = {2, 3, 4};
      dims[dim] *= n;
      const std::string shape = absl::StrCat("f64[", dims[0], ",", dims[1], ",", dims[2], "]");
      ExpectSameAsInterpreter(
          absl::StrCat("HloModule m\nENTRY e {\n  x = ", shape, " parameter(0)\n  ROOT r = ", shape,
                       " all-to-all(x), replica_groups={}, dimensions={", dim, "}\n}\n"),
          n, 1, Shape::Array(PrimitiveType::F64, dims));
    }
    // A cycle shifted by one, and a chain that leaves device 0 without a source.
    std::string cycle, chain;
    for (int64_t i = 0; i < n; ++i) {
      absl::StrAppend(&cycle, i ? "," : "", "{", i, ",", (i + 1) % n, "}");
      if (i + 1 < n) absl::StrAppend(&chain, i ? "," : "", "{", i, ",", i + 1, "}");
    }
    for (const std::string& pairs : {cycle, chain}) {
      ExpectSameAsInterpreter(
          absl::StrCat("HloModule m\nENTRY e {\n  x = u8[7] parameter(0)\n  ROOT r = u8[7] "
                       "collective-permute(x), source_target_pairs={",
                       pairs, "}\n}\n"),
          n, 1, Shape::Array(PrimitiveType::U8, {7}));
    }
    ExpectSameAsInterpreter(absl::StrCat("HloModule m\nENTRY e {\n  x = c64[4] parameter(0)\n  "
                                         "ROOT r = c64[4] collective-broadcast(x), "
                                         "replica_groups={}\n}\n"),
                            n, 1, Shape::Array(PrimitiveType::C64, {4}));
  }
  // Cross-partition permute and broadcast on a 2 x 4 grid.
  ExpectSameAsInterpreter(R"(HloModule m
ENTRY e {
  x = s16[3] parameter(0)
  ROOT r = s16[3] collective-permute(x), channel_id=1, source_target_pairs={{0,3},{3,1},{1,0}}
})",
                          2, 4, Shape::Array(PrimitiveType::S16, {3}));
  ExpectSameAsInterpreter(R"(HloModule m
ENTRY e {
  x = s16[3] parameter(0)
  ROOT r = s16[3] collective-broadcast(x), channel_id=1, replica_groups={{3,1},{2,0}}
})",
                          2, 4, Shape::Array(PrimitiveType::S16, {3}));
}

// all-to-all with split != concat on row-major s32 arrays, against the
// definition: block j of the split dimension goes to rank j, received blocks
// are concatenated in rank order along the concat dimension.
TEST(InProcessCommunicator, AllToAllSplitNotConcatAndVariadic) {
  for (int64_t n : {1, 2, 4, 8}) {
    const std::vector<int64_t> dims = {3, 2 * n};  // split dim 1, concat dim 0
    const int64_t elements = dims[0] * dims[1];
    auto input = [&](int64_t rank, int64_t operand, int64_t i) {
      return static_cast<int32_t>(rank * 1000 + operand * 100 + i);
    };
    std::vector<std::vector<std::vector<int32_t>>> in(n), out(n);
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t o = 0; o < 2; ++o) {
        in[r].emplace_back(elements);
        out[r].emplace_back(elements, -1);
        for (int64_t i = 0; i < elements; ++i) in[r][o][i] = input(r, o, i);
      }
    }
    auto rendezvous = std::make_shared<Rendezvous>();
    std::vector<int64_t> devices(n);
    for (int64_t i = 0; i < n; ++i) devices[i] = i;
    std::vector<absl::Status> status = OnThreads(n, [&](int64_t r) -> absl::Status {
      InProcessCommunicator comm(rendezvous, devices, r);
      std::vector<ChunkMove> moves;
      for (int64_t o = 0; o < 2; ++o) {
        ASSIGN_OR_RETURN(std::vector<ChunkMove> m, AllToAllMoves(dims, 1, 0, n, r, 4, o));
        moves.insert(moves.end(), m.begin(), m.end());
      }
      const void* sends[] = {in[r][0].data(), in[r][1].data()};
      void* recvs[] = {out[r][0].data(), out[r][1].data()};
      const int64_t sizes[] = {elements * 4, elements * 4};
      return comm.AllToAllChunks(OpKey{}, sends, recvs, sizes, moves);
    });
    for (const absl::Status& s : status) ASSERT_TRUE(s.ok()) << s;
    // Result of rank r: [3 * n, 2]; row s*3 + i, column c = sender s's
    // element (i, r * 2 + c).
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t o = 0; o < 2; ++o) {
        for (int64_t s = 0; s < n; ++s) {
          for (int64_t i = 0; i < 3; ++i) {
            for (int64_t c = 0; c < 2; ++c) {
              EXPECT_EQ(out[r][o][(s * 3 + i) * 2 + c], input(s, o, i * dims[1] + r * 2 + c))
                  << "n=" << n << " rank " << r << " operand " << o;
            }
          }
        }
      }
    }
  }
}

TEST(InProcessCommunicator, AllToAllPlainBuffers) {
  for (int64_t n : {1, 2, 4, 8}) {
    auto rendezvous = std::make_shared<Rendezvous>();
    std::vector<int64_t> devices(n);
    for (int64_t i = 0; i < n; ++i) devices[i] = 100 + i;
    std::vector<std::vector<std::vector<uint16_t>>> in(n), out(n);
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t p = 0; p < n; ++p) {
        in[r].push_back({static_cast<uint16_t>(r * 10 + p), 7});
        out[r].push_back({0, 0});
      }
    }
    std::vector<absl::Status> status = OnThreads(n, [&](int64_t r) {
      InProcessCommunicator comm(rendezvous, devices, r);
      std::vector<const void*> sends;
      std::vector<void*> recvs;
      for (int64_t p = 0; p < n; ++p) {
        sends.push_back(in[r][p].data());
        recvs.push_back(out[r][p].data());
      }
      return comm.AllToAll(OpKey{}, sends, recvs, PrimitiveType::U16, 2);
    });
    for (const absl::Status& s : status) ASSERT_TRUE(s.ok()) << s;
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t p = 0; p < n; ++p) {
        EXPECT_EQ(out[r][p], (std::vector<uint16_t>{static_cast<uint16_t>(p * 10 + r), 7}));
      }
    }
  }
}

// XLA's ragged-all-to-all: rank r sends rows [input_offsets[p], +send_sizes[p])
// to rank p, which places them at output_offsets[p] (the sender's choice).
TEST(InProcessCommunicator, RaggedAllToAll) {
  for (int64_t n : {1, 2, 4, 8}) {
    auto rendezvous = std::make_shared<Rendezvous>();
    std::vector<int64_t> devices(n);
    for (int64_t i = 0; i < n; ++i) devices[i] = i;
    // Rank r sends (p + r) % 2 + 1 rows to p; they land in p's output after
    // the rows of lower-ranked senders.
    auto rows = [](int64_t from, int64_t to) { return (from + to) % 2 + 1; };
    constexpr int64_t kWidth = 3;
    std::vector<std::vector<float>> in(n), out(n);
    std::vector<RaggedAllToAllArgs> args(n);
    for (int64_t r = 0; r < n; ++r) {
      RaggedAllToAllArgs& a = args[r];
      int64_t offset = 0;
      for (int64_t p = 0; p < n; ++p) {
        a.input_offsets.push_back(offset);
        a.send_sizes.push_back(rows(r, p));
        offset += rows(r, p);
        int64_t at = 0;
        for (int64_t s = 0; s < r; ++s) at += rows(s, p);
        a.output_offsets.push_back(at);
        a.recv_sizes.push_back(rows(p, r));
      }
      in[r].resize(offset * kWidth);
      for (size_t i = 0; i < in[r].size(); ++i) in[r][i] = r * 100 + i;
      out[r].assign(2 * n * kWidth + kWidth, -1);  // one spare row keeps its value
      a.input = in[r].data();
      a.output = out[r].data();
      a.type = PrimitiveType::F32;
      a.row_elements = kWidth;
      a.input_rows = offset;
      a.output_rows = 2 * n + 1;
    }
    std::vector<absl::Status> status = OnThreads(n, [&](int64_t r) {
      InProcessCommunicator comm(rendezvous, devices, r);
      return comm.RaggedAllToAll(OpKey{}, args[r]);
    });
    for (const absl::Status& s : status) ASSERT_TRUE(s.ok()) << s;
    for (int64_t p = 0; p < n; ++p) {
      int64_t row = 0;
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t k = 0; k < rows(s, p); ++k, ++row) {
          for (int64_t c = 0; c < kWidth; ++c) {
            const float expected = s * 100 + (args[s].input_offsets[p] + k) * kWidth + c;
            EXPECT_EQ(out[p][row * kWidth + c], expected) << "n=" << n << " rank " << p;
          }
        }
      }
      EXPECT_EQ(out[p].back(), -1);
    }
  }
}

// The two-device case of JAX's ragged_all_to_all test: rows are scalars.
TEST(InProcessCommunicator, RaggedAllToAllAsJaxDefinesIt) {
  auto rendezvous = std::make_shared<Rendezvous>();
  std::vector<std::vector<int32_t>> in = {{1, 2, 2}, {3, 4, 0}};
  std::vector<std::vector<int32_t>> out = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  std::vector<RaggedAllToAllArgs> args(2);
  const std::vector<std::vector<int64_t>> input_offsets = {{0, 1}, {0, 1}},
                                          send_sizes = {{1, 2}, {1, 1}},
                                          output_offsets = {{0, 0}, {1, 2}},
                                          recv_sizes = {{1, 1}, {2, 1}};
  for (int r = 0; r < 2; ++r) {
    args[r].input = in[r].data();
    args[r].output = out[r].data();
    args[r].type = PrimitiveType::S32;
    args[r].row_elements = 1;
    args[r].input_rows = 3;
    args[r].output_rows = 4;
    args[r].input_offsets = input_offsets[r];
    args[r].send_sizes = send_sizes[r];
    args[r].output_offsets = output_offsets[r];
    args[r].recv_sizes = recv_sizes[r];
  }
  std::vector<absl::Status> status = OnThreads(2, [&](int64_t r) {
    InProcessCommunicator comm(rendezvous, {0, 1}, r);
    return comm.RaggedAllToAll(OpKey{}, args[r]);
  });
  for (const absl::Status& s : status) ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(out[0], (std::vector<int32_t>{1, 3, 0, 0}));
  EXPECT_EQ(out[1], (std::vector<int32_t>{2, 2, 4, 0}));
}

TEST(InProcessCommunicator, RaggedAllToAllChecksBounds) {
  auto rendezvous = std::make_shared<Rendezvous>();
  InProcessCommunicator comm(rendezvous, {0}, 0);
  std::vector<float> in(4), out(4);
  RaggedAllToAllArgs a;
  a.input = in.data();
  a.output = out.data();
  a.input_rows = 4;
  a.output_rows = 4;
  a.input_offsets = {2};
  a.send_sizes = {3};
  a.output_offsets = {0};
  a.recv_sizes = {3};
  absl::Status s = comm.RaggedAllToAll(OpKey{}, a);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("outside"), std::string::npos) << s;
  a.input_offsets = {0};
  a.output_offsets = {2};
  s = comm.RaggedAllToAll(OpKey{}, a);
  EXPECT_NE(s.message().find("output rows"), std::string::npos) << s;
}

// One device never arrives: the others end with DeadlineExceeded naming it,
// within the timeout.
TEST(InProcessCommunicator, MissingDeviceTimesOutNamingIt) {
  for (int64_t n : {2, 4, 8}) {
    auto rendezvous = std::make_shared<Rendezvous>();
    std::vector<int64_t> devices(n);
    for (int64_t i = 0; i < n; ++i) devices[i] = 10 * i;
    const OpKey key{3, 17, std::chrono::milliseconds(150)};
    const auto start = std::chrono::steady_clock::now();
    std::vector<absl::Status> status = OnThreads(n - 1, [&](int64_t r) {
      InProcessCommunicator comm(rendezvous, devices, r);
      float x = 1, y = 0;
      return comm.AllReduce(key, &x, &y, PrimitiveType::F32, 1, Reduction::Of(ReductionKind::kSum));
    });
    const auto elapsed = std::chrono::steady_clock::now() - start;
    for (const absl::Status& s : status) {
      EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
      EXPECT_NE(s.message().find(absl::StrCat("device ", 10 * (n - 1), " did not arrive")),
                std::string::npos)
          << s;
    }
    EXPECT_LT(elapsed, std::chrono::seconds(10));
  }
}

TEST(InProcessCommunicator, DisagreementsAreErrors) {
  auto rendezvous = std::make_shared<Rendezvous>();
  std::vector<absl::Status> status = OnThreads(2, [&](int64_t r) {
    InProcessCommunicator comm(rendezvous, {0, 1}, r);
    float x[2] = {1, 2}, y[2];
    return comm.AllReduce(OpKey{}, x, y, PrimitiveType::F32, r + 1,
                          Reduction::Of(ReductionKind::kSum));
  });
  for (const absl::Status& s : status) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find("disagree"), std::string::npos) << s;
  }
  // A permute whose pairs the two sides see differently.
  status = OnThreads(2, [&](int64_t r) {
    InProcessCommunicator comm(rendezvous, {0, 1}, r);
    int32_t x = 1, y = 0;
    std::vector<int64_t> targets;
    if (r == 0) targets = {1};
    return comm.CollectivePermute(OpKey{}, &x, &y, PrimitiveType::S32, 1, std::nullopt, targets);
  });
  EXPECT_FALSE(status[0].ok());
  EXPECT_FALSE(status[1].ok());
  InProcessCommunicator comm(rendezvous, {0}, 0);
  float x = 0;
  EXPECT_EQ(
      comm.AllReduce(OpKey{}, &x, &x, PrimitiveType::F32, 1, Reduction::Of(ReductionKind::kXor))
          .code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(InProcessCommunicator, InPlaceAllReduce) {
  for (int64_t n : {1, 2, 4, 8}) {
    auto rendezvous = std::make_shared<Rendezvous>();
    std::vector<int64_t> devices(n);
    for (int64_t i = 0; i < n; ++i) devices[i] = i;
    std::vector<std::vector<int64_t>> data(n, std::vector<int64_t>(11));
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t i = 0; i < 11; ++i) data[r][i] = r + i;
    }
    std::vector<absl::Status> status = OnThreads(n, [&](int64_t r) {
      InProcessCommunicator comm(rendezvous, devices, r);
      return comm.AllReduce(OpKey{}, data[r].data(), data[r].data(), PrimitiveType::S64, 11,
                            Reduction::Of(ReductionKind::kSum));
    });
    for (const absl::Status& s : status) ASSERT_TRUE(s.ok()) << s;
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t i = 0; i < 11; ++i) EXPECT_EQ(data[r][i], n * i + n * (n - 1) / 2);
    }
  }
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::collectives
