#include "xlite/runtime/buffer.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <new>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "xlite/ir/primitive_type.h"

namespace xlite::runtime {
namespace {

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return INT64_MAX;
  int64_t bytes;
  if (__builtin_mul_overflow(static_cast<int64_t>(pages), static_cast<int64_t>(page_size), &bytes))
    return INT64_MAX;
  return bytes;
}

Shape WithLayout(Shape shape) {
  shape.SetDefaultLayoutIfMissing();
  return shape;
}

// Large blocks freed by buffers wait here for the next allocation of the
// same size. A large allocation gets fresh pages from the kernel, and the
// first touch of each costs a page fault (on a VM, about 2.6 us per 4 KiB
// page here: a 64 MiB output took 43 ms to fault in, 12x the kernel that
// filled it). A program run again asks for the same output sizes, so its
// outputs come back warm. Blocks from 64 KiB: malloc does not keep those
// reliably either (freed at the top of its heap they go back to the kernel
// once the free space passes its trim threshold): two f32[65536] outputs ran
// 14 us or 1.0 ms a run depending on the process's heap layout, the rest
// faulting their pages in again. Smaller blocks are left to malloc.
class LargeBlockCache {
 public:
  static constexpr int64_t kMinBytes = int64_t{64} << 10;
  static constexpr size_t kMaxBlocks = 64;

  // A cached block of exactly `bytes`, most recently freed first; nullptr if
  // there is none.
  void* Take(int64_t bytes) {
    if (bytes < kMinBytes) return nullptr;
    absl::MutexLock lock(&mu_);
    for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
      if (it->first != bytes) continue;
      void* p = it->second;
      cached_bytes_ -= bytes;
      blocks_.erase(std::next(it).base());
      return p;
    }
    return nullptr;
  }

  // Keeps `p` (of `bytes`) unless it is small or too large to keep; evicts
  // the oldest blocks to stay within kMaxBlocks and MaxCachedBytes().
  // False if the caller must free it.
  bool Put(void* p, int64_t bytes) {
    if (bytes < kMinBytes || bytes > MaxCachedBytes()) return false;
    std::vector<std::pair<int64_t, void*>> evicted;
    {
      absl::MutexLock lock(&mu_);
      blocks_.emplace_back(bytes, p);
      cached_bytes_ += bytes;
      while (blocks_.size() > kMaxBlocks || cached_bytes_ > MaxCachedBytes()) {
        evicted.push_back(blocks_.front());
        cached_bytes_ -= blocks_.front().first;
        blocks_.erase(blocks_.begin());
      }
    }
    for (auto [size, block] : evicted) {
      ::operator delete(block, std::align_val_t(kBufferAlignment));
    }
    return true;
  }

 private:
  // 1 GiB, or an eighth of the machine's memory if that is less.
  static int64_t MaxCachedBytes() {
    static const int64_t max = std::min<int64_t>(int64_t{1} << 30, PhysicalMemoryBytes() / 8);
    return max;
  }

  absl::Mutex mu_;
  std::vector<std::pair<int64_t, void*>> blocks_;  // oldest first
  int64_t cached_bytes_ = 0;
};

LargeBlockCache& BlockCache() {
  static LargeBlockCache* cache = new LargeBlockCache();  // never destroyed
  return *cache;
}

void* AllocateAligned(int64_t bytes) {
  if (void* p = BlockCache().Take(bytes)) return p;
  // At least one byte, so that even an empty array has a distinct address.
  return ::operator new(static_cast<size_t>(bytes > 0 ? bytes : 1),
                        std::align_val_t(kBufferAlignment), std::nothrow);
}

void FreeAligned(void* p, int64_t bytes) {
  if (BlockCache().Put(p, bytes)) return;
  ::operator delete(p, std::align_val_t(kBufferAlignment));
}

// Elements between neighbours along each dimension in the layout's physical
// order (minor_to_major[0] varies fastest).
std::vector<int64_t> PhysicalStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 1);
  int64_t stride = 1;
  for (int64_t dim : shape.layout().minor_to_major) {
    strides[dim] = stride;
    stride *= shape.dimensions(dim);
  }
  return strides;
}

// Copies `count` elements of `element_bytes` between logical (row-major)
// order and the physical order of `shape`'s layout.
enum class Direction { kLogicalToPhysical, kPhysicalToLogical };
void Transpose(const Shape& shape, int element_bytes, const uint8_t* src, uint8_t* dst,
               Direction direction) {
  const int64_t count = shape.ElementCount();
  if (count == 0) return;
  if (shape.HasDefaultLayout() || shape.rank() <= 1) {
    std::memcpy(dst, src, static_cast<size_t>(count) * element_bytes);
    return;
  }
  const std::vector<int64_t> strides = PhysicalStrides(shape);
  const int64_t rank = shape.rank();
  std::vector<int64_t> index(rank, 0);
  int64_t physical = 0;
  for (int64_t logical = 0; logical < count; ++logical) {
    if (direction == Direction::kLogicalToPhysical) {
      std::memcpy(dst + physical * element_bytes, src + logical * element_bytes, element_bytes);
    } else {
      std::memcpy(dst + logical * element_bytes, src + physical * element_bytes, element_bytes);
    }
    // Next row-major index; keep the physical offset in step.
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape.dimensions(d)) {
        physical += strides[d];
        break;
      }
      physical -= (shape.dimensions(d) - 1) * strides[d];
      index[d] = 0;
    }
  }
}

absl::Status CheckUnpacked(const Shape& shape, absl::string_view what) {
  const Layout& layout = shape.layout();
  if (layout.element_size_in_bits != 0 &&
      layout.element_size_in_bits != 8 * PrimitiveByteWidth(shape.element_type())) {
    return absl::UnimplementedError(absl::StrCat(what, " of a packed layout (E(",
                                                 layout.element_size_in_bits,
                                                 ")) is not supported: ", shape.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> BufferSizeBytes(const Shape& shape) {
  if (!shape.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a buffer holds one array, not ", shape.ToString()));
  }
  if (!shape.is_static()) {
    return absl::UnimplementedError(
        absl::StrCat("buffers of dynamic shapes are not supported: ", shape.ToString()));
  }
  int64_t elements = 1;
  for (int64_t d : shape.dimensions()) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("negative dimension in buffer shape ", shape.ToString()));
    }
    if (__builtin_mul_overflow(elements, d, &elements)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("buffer of ", shape.ToString(), " has more elements than fit in int64"));
    }
  }
  int64_t bytes;
  if (shape.has_layout()) {
    const Layout& layout = shape.layout();
    if (!layout.tiles.empty() || !layout.dim_levels.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "buffers with tiled or sparse layouts are not supported: ", shape.ToString()));
    }
    if (layout.minor_to_major.size() != shape.dimensions().size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("layout does not match the rank of ", shape.ToString()));
    }
  }
  const int64_t bits_per_element = shape.has_layout() && shape.layout().element_size_in_bits > 0
                                       ? shape.layout().element_size_in_bits
                                       : 8 * PrimitiveByteWidth(shape.element_type());
  int64_t bits;
  if (__builtin_mul_overflow(elements, bits_per_element, &bits)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("buffer of ", shape.ToString(), " has more bytes than fit in int64"));
  }
  bytes = bits / 8 + (bits % 8 != 0);
  static const int64_t physical_memory = PhysicalMemoryBytes();
  if (bytes > physical_memory) {
    return absl::ResourceExhaustedError(absl::StrCat("buffer of ", shape.ToString(), " needs ",
                                                     bytes, " bytes, more than this machine's ",
                                                     physical_memory, " bytes of memory"));
  }
  return bytes;
}

Buffer::Buffer(Shape shape, int64_t size_bytes, void* data, bool owned)
    : shape_(std::move(shape)), size_bytes_(size_bytes), owned_(owned), data_(data) {}

Buffer::~Buffer() {
  absl::MutexLock lock(&mu_);
  if (owned_ && data_ != nullptr) FreeAligned(data_, size_bytes_);
}

absl::StatusOr<std::unique_ptr<Buffer>> Buffer::Allocate(const Shape& shape) {
  absl::StatusOr<std::unique_ptr<Buffer>> buffer = AllocateUninitialized(shape);
  if (buffer.ok()) std::memset((*buffer)->data_, 0, static_cast<size_t>((*buffer)->size_bytes_));
  return buffer;
}

absl::StatusOr<std::unique_ptr<Buffer>> Buffer::AllocateUninitialized(const Shape& shape) {
  Shape with_layout = WithLayout(shape);
  absl::StatusOr<int64_t> bytes = BufferSizeBytes(with_layout);
  if (!bytes.ok()) return bytes.status();
  void* data = AllocateAligned(*bytes);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "out of memory allocating ", *bytes, " bytes for a buffer of ", with_layout.ToString()));
  }
  return std::unique_ptr<Buffer>(new Buffer(std::move(with_layout), *bytes, data, true));
}

absl::StatusOr<std::unique_ptr<Buffer>> Buffer::Borrow(const Shape& shape, void* data) {
  Shape with_layout = WithLayout(shape);
  absl::StatusOr<int64_t> bytes = BufferSizeBytes(with_layout);
  if (!bytes.ok()) return bytes.status();
  if (data == nullptr && *bytes != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot borrow a null pointer as a buffer of ", with_layout.ToString()));
  }
  return std::unique_ptr<Buffer>(new Buffer(std::move(with_layout), *bytes, data, false));
}

absl::StatusOr<std::unique_ptr<Buffer>> Buffer::FromLiteral(const Literal& literal) {
  return FromLiteral(literal, literal.shape());
}

absl::StatusOr<std::unique_ptr<Buffer>> Buffer::FromLiteral(const Literal& literal,
                                                            const Shape& shape) {
  if (!literal.shape().IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a buffer holds one array, not the literal of ", literal.shape().ToString()));
  }
  if (!literal.shape().EqualIgnoringLayout(shape)) {
    return absl::InvalidArgumentError(absl::StrCat("a literal of ", literal.shape().ToString(),
                                                   " does not fit a buffer of ", shape.ToString()));
  }
  if (literal.elided()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the literal of ", shape.ToString(), " has no values (elided)"));
  }
  absl::StatusOr<std::unique_ptr<Buffer>> buffer = AllocateUninitialized(shape);
  if (!buffer.ok()) return buffer.status();
  if (absl::Status s = CheckUnpacked((*buffer)->shape(), "a buffer"); !s.ok()) return s;
  Transpose((*buffer)->shape(), literal.element_stride(), literal.raw_data().data(),
            static_cast<uint8_t*>((*buffer)->data_), Direction::kLogicalToPhysical);
  return buffer;
}

void* Buffer::data() const {
  absl::MutexLock lock(&mu_);
  return deleted_.load(std::memory_order_relaxed) ? nullptr : data_;
}

absl::StatusOr<Literal> Buffer::ToLiteral() const {
  if (absl::Status s = CheckUnpacked(shape_, "reading a buffer"); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (deleted_.load(std::memory_order_relaxed)) {
    return absl::FailedPreconditionError(
        absl::StrCat("reading a deleted or donated buffer of ", shape_.ToString()));
  }
  Literal literal(shape_);
  Transpose(shape_, literal.element_stride(), static_cast<const uint8_t*>(data_),
            literal.mutable_raw_data(), Direction::kPhysicalToLogical);
  return literal;
}

absl::StatusOr<std::unique_ptr<Buffer>> Buffer::Copy() const {
  absl::StatusOr<std::unique_ptr<Buffer>> copy = AllocateUninitialized(shape_);
  if (!copy.ok()) return copy.status();
  absl::MutexLock lock(&mu_);
  if (deleted_.load(std::memory_order_relaxed)) {
    return absl::FailedPreconditionError(
        absl::StrCat("copying a deleted or donated buffer of ", shape_.ToString()));
  }
  if (size_bytes_ > 0) std::memcpy((*copy)->data_, data_, static_cast<size_t>(size_bytes_));
  return copy;
}

void Buffer::MaybeFreeLocked() {
  if (!deleted_.load(std::memory_order_relaxed) || donating_ || usage_holds_ > 0) return;
  if (owned_ && data_ != nullptr) FreeAligned(data_, size_bytes_);
  data_ = nullptr;
}

void Buffer::Delete() {
  absl::MutexLock lock(&mu_);
  delete_requested_ = true;
  deleted_.store(true, std::memory_order_release);
  MaybeFreeLocked();
}

absl::Status Buffer::AcquireUsage() {
  absl::MutexLock lock(&mu_);
  if (deleted_.load(std::memory_order_relaxed)) {
    return absl::FailedPreconditionError(
        donating_ ? "the buffer is being donated to another call's output"
                  : "the buffer has been deleted or donated");
  }
  ++usage_holds_;
  return absl::OkStatus();
}

void Buffer::ReleaseUsage() {
  absl::MutexLock lock(&mu_);
  if (usage_holds_ > 0) --usage_holds_;
  MaybeFreeLocked();
}

absl::Status Buffer::AcquireDonation() {
  absl::MutexLock lock(&mu_);
  if (deleted_.load(std::memory_order_relaxed)) {
    return absl::FailedPreconditionError(
        donating_ ? "the buffer is being donated to another call's output"
                  : "the buffer has been deleted or donated");
  }
  // Later uses are refused from here on; earlier ones finish first.
  donating_ = true;
  deleted_.store(true, std::memory_order_release);
  mu_.Await(absl::Condition(
      +[](int64_t* holds) { return *holds == 0; }, &usage_holds_));
  return absl::OkStatus();
}

void* Buffer::donated_data() const {
  absl::MutexLock lock(&mu_);
  return donating_ ? data_ : nullptr;
}

void Buffer::CancelDonation() {
  absl::MutexLock lock(&mu_);
  donating_ = false;
  if (!delete_requested_) deleted_.store(false, std::memory_order_release);
  MaybeFreeLocked();
}

std::unique_ptr<Buffer> Buffer::ConfirmDonation(const Shape& shape) {
  absl::MutexLock lock(&mu_);
  if (!donating_) return nullptr;
  void* data = data_;
  data_ = nullptr;
  donating_ = false;
  return std::unique_ptr<Buffer>(new Buffer(WithLayout(shape), size_bytes_, data, owned_));
}

}  // namespace xlite::runtime
