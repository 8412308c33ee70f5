// Blocks kept per thread (block_cache.h): a block carries its size class in a 16-byte header (16
// keeps malloc's alignment); each thread keeps up to kKept freed blocks per class.
#include "base/block_cache.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace chronoq::base::block_cache {
namespace {

constexpr size_t kHeader = 16;
constexpr size_t kClasses = 6;  // 64, 128, 256, 512, 1024, 2048 bytes
constexpr size_t kSmallest = 64;
constexpr uint32_t kLarge = kClasses;  // above the largest class: the general allocator's
constexpr size_t kKept = 32;           // freed blocks kept per class and thread

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPooled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPooled = false;
#else
constexpr bool kPooled = true;
#endif
#else
constexpr bool kPooled = true;
#endif

struct FreeBlock {
  FreeBlock* next;
};

// Set when the thread's lists are destroyed (its exit): a block freed later (a session deleted
// by a thread-exit destructor) goes to the general allocator. Trivially destructible.
thread_local bool lists_gone = false;

struct Lists {
  std::array<FreeBlock*, kClasses> head{};
  std::array<size_t, kClasses> count{};
  ~Lists() {
    lists_gone = true;
    for (FreeBlock* b : head) {
      while (b != nullptr) {
        FreeBlock* next = b->next;
        std::free(reinterpret_cast<char*>(b) - kHeader);
        b = next;
      }
    }
  }
};
thread_local Lists lists;

uint32_t ClassOf(size_t size) {
  uint32_t c = 0;
  for (size_t cap = kSmallest; c < kClasses; ++c, cap <<= 1) {
    if (size <= cap) return c;
  }
  return kLarge;
}
size_t ClassBytes(uint32_t c) { return kSmallest << c; }

uint32_t ClassOfBlock(void* ptr) {
  uint32_t c = 0;
  std::memcpy(&c, static_cast<char*>(ptr) - kHeader, sizeof(c));
  return c;
}

}  // namespace

void* Malloc(size_t size, void*) {
  if (!kPooled) return std::malloc(size);
  const uint32_t c = ClassOf(size);
  if (c != kLarge && !lists_gone && lists.head[c] != nullptr) {
    FreeBlock* b = lists.head[c];
    lists.head[c] = b->next;
    --lists.count[c];
    return b;
  }
  auto* p = static_cast<char*>(std::malloc(kHeader + (c == kLarge ? size : ClassBytes(c))));
  if (p == nullptr) return nullptr;
  std::memcpy(p, &c, sizeof(c));
  return p + kHeader;
}

void Free(void* ptr, void*) {
  if (!kPooled) return std::free(ptr);
  if (ptr == nullptr) return;
  const uint32_t c = ClassOfBlock(ptr);
  if (c != kLarge && !lists_gone && lists.count[c] < kKept) {
    auto* b = static_cast<FreeBlock*>(ptr);
    b->next = lists.head[c];
    lists.head[c] = b;
    ++lists.count[c];
    return;
  }
  std::free(static_cast<char*>(ptr) - kHeader);
}

void* Calloc(size_t n, size_t size, void* user) {
  if (size != 0 && n > SIZE_MAX / size) return nullptr;  // (ASan's calloc would abort)
  if (!kPooled) return std::calloc(n, size);
  void* p = Malloc(n * size, user);
  if (p != nullptr) std::memset(p, 0, n * size);
  return p;
}

void* Realloc(void* ptr, size_t size, void* user) {
  if (!kPooled) return std::realloc(ptr, size);
  if (ptr == nullptr) return Malloc(size, user);
  const uint32_t c = ClassOfBlock(ptr);
  if (c == kLarge) {
    // Large stays large: the header moves with the block.
    auto* p = static_cast<char*>(std::realloc(static_cast<char*>(ptr) - kHeader, kHeader + size));
    return p == nullptr ? nullptr : p + kHeader;
  }
  if (size <= ClassBytes(c)) return ptr;
  void* p = Malloc(size, user);
  if (p == nullptr) return nullptr;
  std::memcpy(p, ptr, ClassBytes(c));
  Free(ptr, user);
  return p;
}

}  // namespace chronoq::base::block_cache
