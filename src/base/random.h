// Random identifiers. Thread-safe (one generator per thread, seeded from std::random_device).
#pragma once

#include <string>

namespace chronoq::base {

// 32 lowercase hexadecimal characters (128 random bits), as camellia's generated msgIds.
std::string NewMsgId();

}  // namespace chronoq::base
