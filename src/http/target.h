// Request targets: the origin-form the router sees. Shared by the server and ServeInProcess.
#pragma once

#include <string>
#include <string_view>

namespace chronoq::http {

// The origin-form of a request target: an absolute-form one ("http://host:port/path?q", which
// RFC 9112 section 3.2.2 says a server must accept) loses its scheme and authority.
// Returns a view of `target` (or of *storage, when the path must be made up).
std::string_view OriginForm(std::string_view target, std::string* storage);

// ASCII case-insensitive equality (header values, URI schemes). Not boost::beast::iequals: in
// Boost 1.81 it reads one byte past both strings when they differ in case (found by fuzzing).
bool EqualsIgnoringCase(std::string_view a, std::string_view b);

}  // namespace chronoq::http
