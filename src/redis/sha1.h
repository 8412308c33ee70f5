// Sha1Hex: the SHA-1 digest of a string in lowercase hex, which is how Redis names a script
// (EVALSHA). Computed here so that a node sends EVALSHA from its first command on instead of
// the whole source until the server told it the digest. Pure function, no state.
#pragma once

#include <string>
#include <string_view>

namespace chronoq::redis {

std::string Sha1Hex(std::string_view data);

}  // namespace chronoq::redis
