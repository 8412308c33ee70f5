#include "base/block_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace chronoq::base::block_cache {
namespace {

// What a C library relies on of its allocator: every block usable for its size, calloc's
// zeroed, realloc keeping the content, free of null a no-op, blocks freed on any thread.
TEST(BlockCacheTest, BlocksOfEverySizeKeepTheirContentThroughReuseAndRealloc) {
  const std::vector<size_t> sizes = {0, 1, 63, 64, 65, 500, 2048, 2049, 100000};
  for (int round = 0; round < 3; ++round) {  // the second and third rounds reuse kept blocks
    std::vector<void*> blocks;
    for (size_t n : sizes) {
      void* p = Malloc(n, nullptr);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
      std::memset(p, static_cast<int>(n & 0x7f), n);
      blocks.push_back(p);
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      const auto* b = static_cast<const unsigned char*>(blocks[i]);
      for (size_t j = 0; j < sizes[i]; ++j) ASSERT_EQ(b[j], sizes[i] & 0x7f);
      Free(blocks[i], nullptr);
    }
  }
  Free(nullptr, nullptr);

  auto* z = static_cast<unsigned char*>(Calloc(10, 30, nullptr));
  for (size_t j = 0; j < 300; ++j) ASSERT_EQ(z[j], 0);
  std::memset(z, 7, 300);
  Free(z, nullptr);
  z = static_cast<unsigned char*>(Calloc(10, 30, nullptr));  // a kept block again: zeroed
  for (size_t j = 0; j < 300; ++j) ASSERT_EQ(z[j], 0);
  EXPECT_EQ(Calloc(SIZE_MAX / 2, 4, nullptr), nullptr);  // n * size overflows

  // Grown within its class, to a larger class, to a large block; shrunk.
  auto* r = static_cast<unsigned char*>(Realloc(z, 40, nullptr));
  for (size_t n : {60, 1000, 5000, 100}) {
    r = static_cast<unsigned char*>(Realloc(r, n, nullptr));
    ASSERT_NE(r, nullptr);
    for (size_t j = 0; j < 40; ++j) ASSERT_EQ(r[j], 0);
    std::memset(r + 40, 9, n - 40);
  }
  Free(r, nullptr);
  void* fresh = Realloc(nullptr, 100, nullptr);  // realloc of null: malloc
  ASSERT_NE(fresh, nullptr);

  // Freed on another thread: kept there (or released at its exit).
  std::thread([fresh] { Free(fresh, nullptr); }).join();
}

}  // namespace
}  // namespace chronoq::base::block_cache
