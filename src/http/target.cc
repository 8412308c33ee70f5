#include "http/target.h"

namespace chronoq::http {

std::string_view OriginForm(std::string_view target, std::string* storage) {
  for (std::string_view scheme : {std::string_view("http://"), std::string_view("https://")}) {
    if (target.size() < scheme.size() ||
        !EqualsIgnoringCase(target.substr(0, scheme.size()), scheme)) {
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

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace chronoq::http
