// The only file that includes oneDNN's C++ header.
#include "xlite/hostlib/onednn.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "xlite/hostlib/threads.h"
#include "xlite/support/status.h"

namespace xlite::hostlib::onednn {
namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

dnnl::engine& Engine() {
  static auto* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

std::optional<memory::data_type> DataType(ElementType type) {
  switch (type) {
    case ElementType::kF32:
      return memory::data_type::f32;
    case ElementType::kBF16:
      return memory::data_type::bf16;
    case ElementType::kF16:
      return memory::data_type::f16;
    case ElementType::kS8:
      return memory::data_type::s8;
    case ElementType::kU8:
      return memory::data_type::u8;
    case ElementType::kS32:
      return memory::data_type::s32;
    default:
      return std::nullopt;
  }
}

// Integer products are exact only where oneDNN multiplies 8-bit values with
// VNNI or AMX; without them it pairs products in saturating 16-bit adds
// (vpmaddubsw), which is not XLA's arithmetic.
bool HasExactInt8() {
  static const bool exact = [] {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::avx512_core_vnni:
      case dnnl::cpu_isa::avx512_core_bf16:
      case dnnl::cpu_isa::avx512_core_amx:
      case dnnl::cpu_isa::avx2_vnni:
        return true;
      default:
        return false;
    }
  }();
  return exact;
}

// The type combinations hostlib hands to oneDNN: the float types with a
// same-type or f32 result, and 8-bit integers with an s8 kernel and an s32
// result (its sum wraps as XLA's s32 arithmetic does while it fits; the
// caller bounds k so that it cannot overflow).
absl::Status CheckTypes(ElementType lhs, ElementType rhs, ElementType out) {
  const bool float_ok =
      lhs == rhs &&
      (lhs == ElementType::kF32 || lhs == ElementType::kBF16 || lhs == ElementType::kF16) &&
      (out == lhs || out == ElementType::kF32);
  const bool int_ok = (lhs == ElementType::kS8 || lhs == ElementType::kU8) &&
                      rhs == ElementType::kS8 && out == ElementType::kS32 && HasExactInt8();
  if (float_ok || int_ok) return absl::OkStatus();
  return Unimplemented("oneDNN: no kernel for ", ElementTypeName(lhs), " x ", ElementTypeName(rhs),
                       " -> ", ElementTypeName(out));
}

// A primitive oneDNN will not create (no kernel for the types on this CPU,
// or arguments it does not take, such as negative padding) is Unimplemented,
// so that the caller falls back to another backend; a failure while running
// is Internal.
absl::Status FromDnnl(const dnnl::error& e, absl::string_view what, bool creating) {
  if (creating && (e.status == dnnl_unimplemented || e.status == dnnl_invalid_arguments)) {
    return Unimplemented("oneDNN has no ", what, " kernel for this case on this CPU (", e.what(),
                         ")");
  }
  return Internal("oneDNN ", what, " failed: ", e.what(), " (status ", e.status, ")");
}

// A primitive ready to run, with the memory descriptors it was made for.
// Shared by every thread that runs the shape (several devices, the
// concurrent executor's independent thunks), so it holds nothing a run
// writes: the scratchpad and the reordered weights are the calling thread's
// (ThreadBuffer), the memory objects are made per run.
struct CachedPrimitive {
  dnnl::primitive primitive;
  memory::desc src, weights, dst, scratchpad;
  // When the primitive wants its weights in another layout: the reorder from
  // the caller's layout and the layout it wants.
  std::optional<dnnl::reorder> weights_reorder;
  memory::desc user_weights, reorder_scratchpad;
};

// Every primitive takes its scratchpad from the caller. In oneDNN's default
// mode (scratchpad_mode::library) a primitive object brings its own, so the
// documented rules are: one primitive never runs on two threads at once, and,
// in builds without DNNL_ENABLE_CONCURRENT_EXEC (Debian's), a primitive runs
// only on the thread that created it. The cache hands one primitive to every
// thread that asks, and the brgemm matmul and convolution kernels keep
// per-thread working state in the scratchpad: two runs at once then computed
// blocks from each other's operands (1% to 37% of the concurrent runs of
// hostlib's OneDnnConcurrency tests; 1,152 elements of a device's dot in a
// two-device spmd.hlo).
dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// Memory of the calling thread for the length of one oneDNN call: never
// shared between threads, reused by the thread's next call, grown to the
// largest request seen (so a thread that keeps running the same shapes
// allocates nothing per call).
class ThreadBuffer {
 public:
  // `bytes` of 64-byte-aligned memory (contents unspecified), or null when
  // the allocation fails.
  void* Get(size_t bytes) {
    if (bytes > capacity_) {
      constexpr size_t kAlignment = 64;
      const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
      data_.reset(static_cast<char*>(std::aligned_alloc(kAlignment, rounded)));
      capacity_ = data_ == nullptr ? 0 : rounded;
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t capacity_ = 0;
};

// Primitives by shape, types and OpenMP team size (oneDNN plans a primitive,
// its scratchpad included, for the team of the thread that creates it; the
// caller applies the budget first, so creating and running threads agree).
// Creating one costs far more than running a small one, so they are kept;
// the cache is cleared when it grows past kMaxEntries (a program has a
// bounded number of distinct shapes).
class PrimitiveCache {
 public:
  static constexpr size_t kMaxEntries = 512;

  template <typename Make>
  absl::StatusOr<std::shared_ptr<const CachedPrimitive>> Get(const std::string& key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end()) return it->second;
    }
    absl::StatusOr<std::shared_ptr<const CachedPrimitive>> made = make();
    if (!made.ok()) return made.status();
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() >= kMaxEntries) entries_.clear();
    entries_.emplace(key, *made);
    return *made;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const CachedPrimitive>> entries_;
};

PrimitiveCache& Cache() {
  static auto* cache = new PrimitiveCache;
  return *cache;
}

dnnl::stream& Stream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

// `bytes` from the calling thread's `buffer` (null for none).
absl::StatusOr<void*> Take(ThreadBuffer& buffer, size_t bytes, absl::string_view what) {
  if (bytes == 0) return nullptr;
  void* data = buffer.Get(bytes);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("oneDNN: cannot allocate ", bytes, " bytes for the ", what));
  }
  return data;
}

// Runs `p` on the caller's buffers (weights reordered first if it asks) with
// the calling thread's scratchpad. Any number of threads may run the same
// primitive at once: nothing a run writes is shared.
absl::Status Execute(const CachedPrimitive& p, const void* src, const void* weights, void* dst,
                     absl::string_view what) {
  thread_local ThreadBuffer scratchpad_buffer, weights_buffer;
  // The reorder and the primitive run one after the other: one scratchpad
  // serves both.
  ASSIGN_OR_RETURN(
      void* scratchpad,
      Take(scratchpad_buffer, std::max(p.scratchpad.get_size(), p.reorder_scratchpad.get_size()),
           "scratchpad"));
  try {
    dnnl::stream& stream = Stream();
    memory weights_mem(p.user_weights, Engine(), const_cast<void*>(weights));
    if (p.weights_reorder) {
      ASSIGN_OR_RETURN(void* reordered,
                       Take(weights_buffer, p.weights.get_size(), "reordered weights"));
      memory reordered_mem(p.weights, Engine(), reordered);
      std::unordered_map<int, memory> reorder_args = {{DNNL_ARG_FROM, weights_mem},
                                                      {DNNL_ARG_TO, reordered_mem}};
      if (p.reorder_scratchpad.get_size() > 0) {
        reorder_args.emplace(DNNL_ARG_SCRATCHPAD,
                             memory(p.reorder_scratchpad, Engine(), scratchpad));
      }
      p.weights_reorder->execute(stream, reorder_args);
      weights_mem = reordered_mem;
    }
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, memory(p.src, Engine(), const_cast<void*>(src))},
        {DNNL_ARG_WEIGHTS, weights_mem},
        {DNNL_ARG_DST, memory(p.dst, Engine(), dst)}};
    if (p.scratchpad.get_size() > 0) {
      args.emplace(DNNL_ARG_SCRATCHPAD, memory(p.scratchpad, Engine(), scratchpad));
    }
    p.primitive.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& e) {
    return FromDnnl(e, what, /*creating=*/false);
  }
  return absl::OkStatus();
}

std::string TypesKey(ElementType lhs, ElementType rhs, ElementType out) {
  return absl::StrCat(ElementTypeName(lhs), ",", ElementTypeName(rhs), ",", ElementTypeName(out));
}

}  // namespace

absl::Status Matmul(const MatmulShape& shape, ElementType lhs_type, const void* lhs,
                    ElementType rhs_type, const void* rhs, ElementType out_type, void* out,
                    int max_threads) {
  RETURN_IF_ERROR(CheckTypes(lhs_type, rhs_type, out_type));
  const double flops = MatmulFlops(shape);
  const ScopedHostThreadLimit limit(max_threads > 0                ? max_threads
                                    : flops < kParallelMatmulFlops ? 1
                                                                   : HostThreads());
  const int threads = limit.threads();
  const std::string key =
      absl::StrCat("matmul:", TypesKey(lhs_type, rhs_type, out_type), ":", shape.batch, "x",
                   shape.m, "x", shape.k, "x", shape.n, shape.transpose_lhs ? ":lhsT" : "",
                   shape.transpose_rhs ? ":rhsT" : "", ":threads=", threads);
  ASSIGN_OR_RETURN(
      std::shared_ptr<const CachedPrimitive> p,
      Cache().Get(key, [&]() -> absl::StatusOr<std::shared_ptr<const CachedPrimitive>> {
        try {
          auto made = std::make_shared<CachedPrimitive>();
          // acb: the last two dimensions stored transposed.
          made->src = memory::desc({shape.batch, shape.m, shape.k}, *DataType(lhs_type),
                                   shape.transpose_lhs ? tag::acb : tag::abc);
          made->user_weights = memory::desc({shape.batch, shape.k, shape.n}, *DataType(rhs_type),
                                            shape.transpose_rhs ? tag::acb : tag::abc);
          made->weights = made->user_weights;
          made->dst = memory::desc({shape.batch, shape.m, shape.n}, *DataType(out_type), tag::abc);
          dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(made->src, made->weights, made->dst),
                                          UserScratchpad(), Engine());
          made->scratchpad = pd.scratchpad_desc();
          made->primitive = dnnl::matmul(pd);
          return made;
        } catch (const dnnl::error& e) {
          return FromDnnl(e, "matmul", /*creating=*/true);
        }
      }));
  return Execute(*p, lhs, rhs, out, "matmul");
}

namespace {
std::atomic<int64_t> sgemm_block_calls{0};
}  // namespace

int64_t SgemmBlockCalls() { return sgemm_block_calls.load(std::memory_order_relaxed); }

absl::Status SgemmBlock(bool transpose_lhs, bool transpose_rhs, int64_t m, int64_t n, int64_t k,
                        const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                        int64_t ldc, int threads) {
  sgemm_block_calls.fetch_add(1, std::memory_order_relaxed);
  const ScopedHostThreadLimit limit(threads);
  const dnnl_status_t status = dnnl_sgemm(transpose_lhs ? 'T' : 'N', transpose_rhs ? 'T' : 'N', m,
                                          n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  if (status == dnnl_out_of_memory) {
    return absl::ResourceExhaustedError("oneDNN sgemm: out of memory for its packing buffers");
  }
  if (status != dnnl_success) {
    return absl::InternalError(absl::StrCat("oneDNN sgemm failed (status ", status, ")"));
  }
  return absl::OkStatus();
}

absl::Status Convolution(const ConvolutionShape& shape, ElementType lhs_type, const void* lhs,
                         ElementType rhs_type, const void* rhs, ElementType out_type, void* out) {
  RETURN_IF_ERROR(CheckTypes(lhs_type, rhs_type, out_type));
  const size_t spatial = shape.input_spatial.size();
  if (spatial > 3) {
    return Unimplemented("oneDNN convolution takes 1 to 3 spatial dimensions, got ", spatial);
  }
  if (shape.batch_group_count != 1) return Unimplemented("oneDNN has no batch groups");
  for (size_t i = 0; i < spatial; ++i) {
    if (shape.lhs_dilation[i] != 1) return Unimplemented("oneDNN convolution: lhs dilation");
  }
  const int threads = ApplyHostThreads();
  const std::string key = absl::StrCat("conv:", TypesKey(lhs_type, rhs_type, out_type), ":",
                                       shape.ToString(), ":threads=", threads);
  ASSIGN_OR_RETURN(
      std::shared_ptr<const CachedPrimitive> p,
      Cache().Get(key, [&]() -> absl::StatusOr<std::shared_ptr<const CachedPrimitive>> {
        // No spatial dimensions: one of size 1.
        const size_t n = std::max<size_t>(spatial, 1);
        memory::dims in(n, 1), kernel(n, 1), outs(n, 1), strides(n, 1), dilates(n, 0), pad_l(n, 0),
            pad_r(n, 0);
        for (size_t i = 0; i < spatial; ++i) {
          in[i] = shape.input_spatial[i];
          kernel[i] = shape.kernel_spatial[i];
          outs[i] = shape.output_spatial[i];
          strides[i] = shape.strides[i];
          dilates[i] = shape.rhs_dilation[i] - 1;  // oneDNN counts the holes
          pad_l[i] = shape.padding_low[i];
          pad_r[i] = shape.padding_high[i];
        }
        const int64_t groups = shape.feature_group_count;
        memory::dims src_dims = {shape.batch, shape.input_features};
        memory::dims dst_dims = {shape.batch, shape.output_features};
        memory::dims weight_dims;
        if (groups > 1) {
          weight_dims = {groups, shape.output_features / groups, shape.input_features / groups};
        } else {
          weight_dims = {shape.output_features, shape.input_features};
        }
        src_dims.insert(src_dims.end(), in.begin(), in.end());
        dst_dims.insert(dst_dims.end(), outs.begin(), outs.end());
        weight_dims.insert(weight_dims.end(), kernel.begin(), kernel.end());
        // b01f data; 01io kernels (01i(g)o grouped: HLO's output features
        // are group-major).
        static constexpr tag kData[] = {tag::nwc, tag::nhwc, tag::ndhwc};
        static constexpr tag kWeights[] = {tag::wio, tag::hwio, tag::dhwio};
        static constexpr tag kGroupedWeights[] = {tag::wigo, tag::hwigo, tag::dhwigo};
        try {
          auto made = std::make_shared<CachedPrimitive>();
          made->src = memory::desc(src_dims, *DataType(lhs_type), kData[n - 1]);
          made->dst = memory::desc(dst_dims, *DataType(out_type), kData[n - 1]);
          made->user_weights = memory::desc(weight_dims, *DataType(rhs_type),
                                            groups > 1 ? kGroupedWeights[n - 1] : kWeights[n - 1]);
          // Let oneDNN pick the kernel's layout (blocked layouts are much
          // faster); the caller's kernel is reordered into it per call.
          const memory::desc any_weights(weight_dims, *DataType(rhs_type), tag::any);
          dnnl::convolution_forward::desc desc(
              dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, made->src,
              any_weights, made->dst, strides, dilates, pad_l, pad_r);
          dnnl::convolution_forward::primitive_desc pd(desc, UserScratchpad(), Engine());
          made->weights = pd.weights_desc();
          made->scratchpad = pd.scratchpad_desc();
          if (made->weights != made->user_weights) {
            dnnl::reorder::primitive_desc reorder_pd(Engine(), made->user_weights, Engine(),
                                                     made->weights, UserScratchpad());
            made->reorder_scratchpad = reorder_pd.scratchpad_desc();
            made->weights_reorder = dnnl::reorder(reorder_pd);
          }
          made->primitive = dnnl::convolution_forward(pd);
          return made;
        } catch (const dnnl::error& e) {
          return FromDnnl(e, "convolution", /*creating=*/true);
        }
      }));
  return Execute(*p, lhs, rhs, out, "convolution");
}

}  // namespace xlite::hostlib::onednn
