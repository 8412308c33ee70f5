#include "http/target.h"

#include <boost/beast/core/string.hpp>

namespace chronoq::http {

std::string_view OriginForm(std::string_view target, std::string* storage) {
  for (std::string_view scheme : {std::string_view("http://"), std::string_view("https://")}) {
    if (target.size() < scheme.size() ||
        !boost::beast::iequals(target.substr(0, scheme.size()), scheme)) {
      continue;
    }
    std::string_view rest = target.substr(scheme.size());
    size_t start = rest.find_first_of("/?");
    if (start == std::string_view::npos) return "/";
    if (rest[start] == '?') {
      *storage = "/" + std::string(rest.substr(start));
      return *storage;
    }
    return rest.substr(start);
  }
  return target;
}

}  // namespace chronoq::http
