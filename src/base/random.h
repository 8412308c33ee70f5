// Random identifiers. Thread-safe (one generator per thread, seeded from std::random_device).
#pragma once

#include <string>

namespace chronoq::base {

// 32 lowercase hexadecimal characters, like camellia's generated msgIds: 48 bits of wall-clock
// milliseconds, a 16-bit per-thread counter, then 64 random bits. Unique, and ordered by time,
// so that stores append rather than insert at random.
std::string NewMsgId();

}  // namespace chronoq::base
