#include "xlite/runtime/buffer.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace xlite::runtime {
namespace {
namespace XLITE_UNITY_ID {

Shape F32(std::vector<int64_t> dims) { return Shape::Array(PrimitiveType::F32, std::move(dims)); }

Shape WithMinorToMajor(Shape shape, std::vector<int64_t> minor_to_major) {
  Layout layout;
  layout.minor_to_major = std::move(minor_to_major);
  shape.set_layout(std::move(layout));
  return shape;
}

Literal Iota(const Shape& shape) {
  Literal literal(shape);
  for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetDouble(i, i + 1);
  return literal;
}

TEST(Buffer, AllocateIsZeroedAlignedOwnedWithDefaultLayout) {
  absl::StatusOr<std::unique_ptr<Buffer>> buffer = Buffer::Allocate(F32({3, 5}));
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  Buffer& b = **buffer;
  EXPECT_EQ(b.shape().ToString(), "f32[3,5]{1,0}");
  EXPECT_EQ(b.size_bytes(), 60);
  EXPECT_TRUE(b.owns_memory());
  EXPECT_FALSE(b.is_deleted());
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kBufferAlignment, 0u);
  const auto* bytes = static_cast<const uint8_t*>(b.data());
  for (int i = 0; i < 60; ++i) EXPECT_EQ(bytes[i], 0) << i;
}

TEST(Buffer, AllocateUninitializedHasTheSameShapeAndAlignment) {
  absl::StatusOr<std::unique_ptr<Buffer>> buffer = Buffer::AllocateUninitialized(F32({7}));
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_EQ((*buffer)->size_bytes(), 28);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*buffer)->data()) % kBufferAlignment, 0u);
  EXPECT_EQ(Buffer::AllocateUninitialized(F32({int64_t{1} << 50})).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(Buffer, SizesFollowTheBufferAssignment) {
  EXPECT_EQ(*BufferSizeBytes(Shape::Array(PrimitiveType::C128, {2})), 32);
  EXPECT_EQ(*BufferSizeBytes(Shape::Array(PrimitiveType::PRED, {7})), 7);
  EXPECT_EQ(*BufferSizeBytes(Shape::Array(PrimitiveType::S4, {5})), 5);  // unpacked
  EXPECT_EQ(*BufferSizeBytes(F32({0, 4})), 0);
  EXPECT_EQ(*BufferSizeBytes(F32({})), 4);
  Shape packed = WithMinorToMajor(Shape::Array(PrimitiveType::S4, {5}), {0});
  packed.mutable_layout().element_size_in_bits = 4;
  EXPECT_EQ(*BufferSizeBytes(packed), 3);
  // An empty array still has an address.
  absl::StatusOr<std::unique_ptr<Buffer>> empty = Buffer::Allocate(F32({0}));
  ASSERT_TRUE(empty.ok());
  EXPECT_NE((*empty)->data(), nullptr);
}

TEST(Buffer, AbsurdSizesAreRefusedBeforeAllocating) {
  absl::StatusOr<std::unique_ptr<Buffer>> huge = Buffer::Allocate(F32({int64_t{1} << 50}));
  ASSERT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted) << huge.status();
  EXPECT_NE(huge.status().message().find("4503599627370496 bytes"), std::string::npos)
      << huge.status();
  absl::StatusOr<std::unique_ptr<Buffer>> overflow =
      Buffer::Allocate(F32({int64_t{1} << 40, int64_t{1} << 40}));
  EXPECT_EQ(overflow.status().code(), absl::StatusCode::kResourceExhausted) << overflow.status();
  absl::StatusOr<std::unique_ptr<Buffer>> bytes_overflow =
      Buffer::Allocate(Shape::Array(PrimitiveType::C128, {int64_t{1} << 60}));
  EXPECT_EQ(bytes_overflow.status().code(), absl::StatusCode::kResourceExhausted)
      << bytes_overflow.status();
}

TEST(Buffer, OnlyStaticDenseArrays) {
  EXPECT_EQ(Buffer::Allocate(Shape::Tuple({F32({2})})).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Buffer::Allocate(Shape::Token()).status().code(), absl::StatusCode::kInvalidArgument);
  Shape dynamic = F32({4});
  dynamic.set_dynamic_dimension(0, true);
  EXPECT_EQ(Buffer::Allocate(dynamic).status().code(), absl::StatusCode::kUnimplemented);
  Shape tiled = WithMinorToMajor(F32({8, 128}), {1, 0});
  tiled.mutable_layout().tiles.push_back(Tile{{8, 128}});
  absl::Status s = Buffer::Allocate(tiled).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("tiled"), std::string::npos) << s;
  Shape bad_layout = WithMinorToMajor(F32({2, 3}), {0});
  EXPECT_EQ(Buffer::Allocate(bad_layout).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Buffer, BorrowUsesTheCallersMemoryAndNeverFreesIt) {
  std::vector<float> memory = {1, 2, 3, 4};
  absl::StatusOr<std::unique_ptr<Buffer>> buffer = Buffer::Borrow(F32({4}), memory.data());
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_FALSE((*buffer)->owns_memory());
  EXPECT_EQ((*buffer)->data(), memory.data());
  absl::StatusOr<Literal> literal = (*buffer)->ToLiteral();
  ASSERT_TRUE(literal.ok());
  EXPECT_EQ(literal->GetDouble(3), 4);
  (*buffer)->Delete();
  EXPECT_TRUE((*buffer)->is_deleted());
  EXPECT_EQ((*buffer)->data(), nullptr);
  buffer->reset();
  EXPECT_EQ(memory[3], 4);  // still the caller's

  absl::Status null = Buffer::Borrow(F32({4}), nullptr).status();
  EXPECT_EQ(null.code(), absl::StatusCode::kInvalidArgument) << null;
  EXPECT_TRUE(Buffer::Borrow(F32({0}), nullptr).ok());
}

TEST(Buffer, LiteralRoundTripDefaultLayout) {
  for (PrimitiveType type : {PrimitiveType::PRED, PrimitiveType::S8, PrimitiveType::U16,
                             PrimitiveType::BF16, PrimitiveType::F32, PrimitiveType::S64,
                             PrimitiveType::C64, PrimitiveType::C128, PrimitiveType::S4}) {
    Shape shape = Shape::Array(type, {2, 3});
    Literal literal(shape);
    for (int64_t i = 0; i < 6; ++i)
      literal.SetBits(i, (i * 37 + 1) & (type == PrimitiveType::S4 ? 7 : 0x7f));
    absl::StatusOr<std::unique_ptr<Buffer>> buffer = Buffer::FromLiteral(literal);
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    absl::StatusOr<Literal> back = (*buffer)->ToLiteral();
    ASSERT_TRUE(back.ok()) << back.status();
    for (int64_t i = 0; i < 6; ++i) {
      EXPECT_EQ(back->GetBits(i), literal.GetBits(i)) << PrimitiveTypeName(type) << " " << i;
    }
    if (type == PrimitiveType::C64) {
      Literal c(shape);
      c.SetComplex(4, {1.5, -2.5});
      absl::StatusOr<Literal> cb = (*Buffer::FromLiteral(c))->ToLiteral();
      EXPECT_EQ(cb->GetComplex(4), std::complex<double>(1.5, -2.5));
    }
  }
}

TEST(Buffer, LayoutsArePhysicalOrder) {
  // Column-major f32[2,3]{0,1}: logical {{1,2,3},{4,5,6}} is stored 1,4,2,5,3,6.
  const Shape column_major = WithMinorToMajor(F32({2, 3}), {0, 1});
  absl::StatusOr<std::unique_ptr<Buffer>> buffer =
      Buffer::FromLiteral(Iota(F32({2, 3})), column_major);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_EQ((*buffer)->shape().ToString(), "f32[2,3]{0,1}");
  const auto* data = static_cast<const float*>((*buffer)->data());
  EXPECT_EQ(std::vector<float>(data, data + 6), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  absl::StatusOr<Literal> back = (*buffer)->ToLiteral();
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shape().ToString(), "f32[2,3]{0,1}");
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(back->GetDouble(i), i + 1);

  // Rank 3, {1,0,2}: dimension 1 fastest, then 0, then 2.
  const Shape odd = WithMinorToMajor(F32({2, 3, 4}), {1, 0, 2});
  buffer = Buffer::FromLiteral(Iota(F32({2, 3, 4})), odd);
  ASSERT_TRUE(buffer.ok());
  data = static_cast<const float*>((*buffer)->data());
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(data[k * 6 + i * 3 + j], 1 + i * 12 + j * 4 + k);
      }
    }
  }
  back = (*buffer)->ToLiteral();
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(back->GetDouble(i), i + 1);
  // A literal carrying its own layout keeps it.
  Literal with_layout = Iota(column_major);
  buffer = Buffer::FromLiteral(with_layout);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ((*buffer)->shape().ToString(), "f32[2,3]{0,1}");
}

TEST(Buffer, FromLiteralErrors) {
  EXPECT_EQ(Buffer::FromLiteral(Literal::Tuple({Iota(F32({2}))})).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Buffer::FromLiteral(Iota(F32({2})), F32({3})).status().code(),
            absl::StatusCode::kInvalidArgument);
  Literal elided(F32({2}));
  elided.set_elided(true);
  EXPECT_EQ(Buffer::FromLiteral(elided).status().code(), absl::StatusCode::kInvalidArgument);
  Shape packed = WithMinorToMajor(Shape::Array(PrimitiveType::S4, {4}), {0});
  packed.mutable_layout().element_size_in_bits = 4;
  EXPECT_EQ(
      Buffer::FromLiteral(Literal(Shape::Array(PrimitiveType::S4, {4})), packed).status().code(),
      absl::StatusCode::kUnimplemented);
}

TEST(Buffer, DeletedBuffersCannotBeRead) {
  std::unique_ptr<Buffer> buffer = *Buffer::FromLiteral(Iota(F32({4})));
  buffer->Delete();
  buffer->Delete();  // idempotent
  EXPECT_TRUE(buffer->is_deleted());
  EXPECT_EQ(buffer->data(), nullptr);
  absl::Status read = buffer->ToLiteral().status();
  EXPECT_EQ(read.code(), absl::StatusCode::kFailedPrecondition) << read;
  EXPECT_NE(read.message().find("deleted"), std::string::npos);
  EXPECT_EQ(buffer->Copy().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer->AcquireUsage().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer->AcquireDonation().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(Buffer, CopyIsIndependent) {
  std::unique_ptr<Buffer> buffer = *Buffer::FromLiteral(Iota(F32({4})));
  std::unique_ptr<Buffer> copy = *buffer->Copy();
  EXPECT_NE(copy->data(), buffer->data());
  static_cast<float*>(copy->data())[0] = 42;
  EXPECT_EQ(static_cast<float*>(buffer->data())[0], 1);
  EXPECT_EQ(copy->shape(), buffer->shape());
}

TEST(Buffer, UsageHoldOutlivesDelete) {
  std::unique_ptr<Buffer> buffer = *Buffer::FromLiteral(Iota(F32({4})));
  void* memory = buffer->data();
  {
    UsageHold hold(buffer.get());
    ASSERT_TRUE(hold.ok());
    buffer->Delete();
    EXPECT_TRUE(buffer->is_deleted());
    // The holder still reads valid memory (freed when the hold ends).
    EXPECT_EQ(static_cast<float*>(memory)[3], 4);
  }
  EXPECT_EQ(buffer->data(), nullptr);
}

TEST(Buffer, DonationHoldAndCancel) {
  std::unique_ptr<Buffer> buffer = *Buffer::FromLiteral(Iota(F32({4})));
  void* memory = buffer->data();
  ASSERT_TRUE(buffer->AcquireDonation().ok());
  EXPECT_TRUE(buffer->is_deleted());
  EXPECT_EQ(buffer->data(), nullptr);
  EXPECT_EQ(buffer->donated_data(), memory);
  absl::Status use = buffer->AcquireUsage();
  EXPECT_EQ(use.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(use.message().find("being donated"), std::string::npos) << use;
  EXPECT_FALSE(buffer->AcquireDonation().ok());
  buffer->CancelDonation();
  EXPECT_FALSE(buffer->is_deleted());
  EXPECT_EQ(buffer->data(), memory);
  EXPECT_EQ(buffer->ToLiteral()->GetDouble(2), 3);
}

TEST(Buffer, DonationConfirmedMovesTheMemory) {
  std::unique_ptr<Buffer> buffer = *Buffer::FromLiteral(Iota(F32({4})));
  void* memory = buffer->data();
  ASSERT_TRUE(buffer->AcquireDonation().ok());
  std::unique_ptr<Buffer> output = buffer->ConfirmDonation(F32({4}));
  EXPECT_TRUE(buffer->is_deleted());
  EXPECT_EQ(output->data(), memory);
  EXPECT_TRUE(output->owns_memory());
  EXPECT_EQ(output->ToLiteral()->GetDouble(1), 2);
  buffer.reset();  // frees nothing: the output owns the memory now
  EXPECT_EQ(output->ToLiteral()->GetDouble(3), 4);
}

TEST(Buffer, ConfirmWithoutDonationHoldGivesNothing) {
  std::unique_ptr<Buffer> buffer = *Buffer::FromLiteral(Iota(F32({4})));
  EXPECT_EQ(buffer->ConfirmDonation(F32({4})), nullptr);
  EXPECT_FALSE(buffer->is_deleted());
  EXPECT_EQ(buffer->ToLiteral()->GetDouble(0), 1);
}

TEST(Buffer, DeleteDuringDonationThenCancelStaysDeleted) {
  std::unique_ptr<Buffer> buffer = *Buffer::FromLiteral(Iota(F32({4})));
  ASSERT_TRUE(buffer->AcquireDonation().ok());
  buffer->Delete();
  buffer->CancelDonation();
  EXPECT_TRUE(buffer->is_deleted());
  EXPECT_EQ(buffer->data(), nullptr);
}

TEST(Buffer, DonationWaitsForEarlierReaders) {
  std::unique_ptr<Buffer> buffer = *Buffer::FromLiteral(Iota(F32({4})));
  ASSERT_TRUE(buffer->AcquireUsage().ok());
  std::atomic<bool> donated{false};
  std::thread donor([&] {
    ASSERT_TRUE(buffer->AcquireDonation().ok());
    donated = true;
  });
  // The donation marks the buffer at once, then waits for the reader.
  while (!buffer->is_deleted()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(donated.load());
  EXPECT_FALSE(buffer->AcquireUsage().ok());  // no new reader gets in
  buffer->ReleaseUsage();
  donor.join();
  EXPECT_TRUE(donated.load());
  buffer->CancelDonation();
}

// A large block a buffer frees serves the next buffer of the same size (its
// pages are already mapped: no page faults); Allocate still zeroes it.
TEST(Buffer, LargeBlocksAreReusedBySameSizedBuffers) {
  const Shape big = Shape::Array(PrimitiveType::F32, {1 << 20});  // 4 MiB
  void* first = nullptr;
  {
    auto a = Buffer::AllocateUninitialized(big);
    ASSERT_TRUE(a.ok()) << a.status();
    first = (*a)->data();
    std::memset(first, 0x5A, 4 << 20);
  }
  auto b = Buffer::Allocate(big);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)->data(), first);
  const auto* bytes = static_cast<const unsigned char*>((*b)->data());
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[(4 << 20) - 1], 0);
  // Another size does not take it.
  auto c = Buffer::AllocateUninitialized(Shape::Array(PrimitiveType::F32, {1 << 19}));
  ASSERT_TRUE(c.ok());
  EXPECT_NE((*c)->data(), first);
  // From 64 KiB: malloc may hand a freed block of 256 KiB back to the kernel.
  const Shape medium = Shape::Array(PrimitiveType::F32, {1 << 16});
  void* second = nullptr;
  {
    auto d = Buffer::AllocateUninitialized(medium);
    ASSERT_TRUE(d.ok());
    second = (*d)->data();
  }
  // Without the cache the freed block would be malloc's to reuse (for this
  // allocation of its size) or to give back to the kernel; the cache keeps it
  // for the next buffer.
  void* other = ::operator new (size_t{4} << 16, std::align_val_t(kBufferAlignment));
  auto e = Buffer::AllocateUninitialized(medium);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)->data(), second);
  ::operator delete(other, std::align_val_t(kBufferAlignment));
}

}  // namespace XLITE_UNITY_ID
}  // namespace
}  // namespace xlite::runtime
