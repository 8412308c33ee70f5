// JSON object bodies as request parameters (API.md section 1, extension): one object whose
// top-level members are the parameters. Strings are taken as given, numbers by their literal text
// (so 1.5 or 1e3 later fail integer parsing with a clear message), booleans as true/false, null as
// absent. Nested objects or arrays are remembered as non-scalar values.
#include <fmt/format.h>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <unordered_set>
#include <vector>

#include "http/params.h"

namespace chronoq::http {
namespace {

using boost::json::error_code;
using boost::json::string_view;

struct Handler {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  // basic_parser constructs its handler as Handler(args...): parenthesised aggregate
  // initialisation, which clang 14 does not implement.
  Handler(Params* o, Status* e) : out(o), err(e) {}

  Params* out;
  Status* err;
  bool saw_non_scalar = false;  // a member is an object or array: its text is filled in after
  int depth = 0;                // 1 = inside the top-level object
  std::string key;
  std::string text;

  bool Fail(Status s, error_code& ec) {
    *err = std::move(s);
    ec = boost::json::error::syntax;
    return false;
  }
  bool Put(std::string value, bool non_scalar, error_code& ec) {
    Status s = out->Add("JSON body", std::move(key), std::move(value), non_scalar);
    key.clear();
    if (!s.ok()) return Fail(std::move(s), ec);
    return true;
  }
  bool PutNonScalar(error_code& ec) {
    saw_non_scalar = true;
    return Put("", true, ec);
  }
  bool ScalarAtTop(error_code& ec) {
    if (depth == 0) return Fail(InvalidArgument("the JSON body must be an object"), ec);
    return true;
  }

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_object_begin(error_code& ec) {
    if (depth == 1 && !PutNonScalar(ec)) return false;
    ++depth;
    return true;
  }
  bool on_object_end(std::size_t, error_code&) {
    --depth;
    return true;
  }
  bool on_array_begin(error_code& ec) {
    if (depth == 0) return Fail(InvalidArgument("the JSON body must be an object"), ec);
    if (depth == 1 && !PutNonScalar(ec)) return false;
    ++depth;
    return true;
  }
  bool on_array_end(std::size_t, error_code&) {
    --depth;
    return true;
  }
  bool on_key_part(string_view s, std::size_t, error_code&) {
    if (depth == 1) key.append(s.data(), s.size());
    return true;
  }
  bool on_key(string_view s, std::size_t, error_code&) {
    if (depth == 1) key.append(s.data(), s.size());
    return true;
  }
  bool on_string_part(string_view s, std::size_t, error_code& ec) {
    if (!ScalarAtTop(ec)) return false;
    if (depth == 1) text.append(s.data(), s.size());
    return true;
  }
  bool on_string(string_view s, std::size_t, error_code& ec) {
    if (!ScalarAtTop(ec)) return false;
    if (depth != 1) return true;
    text.append(s.data(), s.size());
    std::string v = std::move(text);
    text.clear();
    return Put(std::move(v), false, ec);
  }
  bool on_number_part(string_view s, error_code& ec) {
    if (!ScalarAtTop(ec)) return false;
    if (depth == 1) text.append(s.data(), s.size());
    return true;
  }
  bool Number(string_view s, error_code& ec) {
    if (!ScalarAtTop(ec)) return false;
    if (depth != 1) return true;
    text.append(s.data(), s.size());
    std::string v = std::move(text);
    text.clear();
    return Put(std::move(v), false, ec);
  }
  bool on_int64(int64_t, string_view s, error_code& ec) { return Number(s, ec); }
  bool on_uint64(uint64_t, string_view s, error_code& ec) { return Number(s, ec); }
  bool on_double(double, string_view s, error_code& ec) { return Number(s, ec); }
  bool on_bool(bool b, error_code& ec) {
    if (!ScalarAtTop(ec)) return false;
    if (depth != 1) return true;
    return Put(b ? "true" : "false", false, ec);
  }
  bool on_null(error_code& ec) {
    if (!ScalarAtTop(ec)) return false;
    key.clear();  // null: the parameter counts as absent
    return true;
  }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }
};

// Finds a key given twice in one object, at any depth (json::parse keeps only the last).
struct DuplicateKeyFinder {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  explicit DuplicateKeyFinder(std::string* d) : duplicate(d) {}

  std::string* duplicate;
  std::vector<std::unordered_set<std::string>> objects;  // the keys of each open object
  std::string key;

  bool on_object_begin(error_code&) {
    objects.emplace_back();
    return true;
  }
  bool on_object_end(std::size_t, error_code&) {
    objects.pop_back();
    return true;
  }
  bool on_key_part(string_view s, std::size_t, error_code&) {
    key.append(s.data(), s.size());
    return true;
  }
  bool on_key(string_view s, std::size_t, error_code& ec) {
    key.append(s.data(), s.size());
    if (!objects.back().insert(key).second) {
      *duplicate = std::move(key);
      ec = boost::json::error::syntax;
      return false;
    }
    key.clear();
    return true;
  }
  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_array_begin(error_code&) { return true; }
  bool on_array_end(std::size_t, error_code&) { return true; }
  bool on_string_part(string_view, std::size_t, error_code&) { return true; }
  bool on_string(string_view, std::size_t, error_code&) { return true; }
  bool on_number_part(string_view, error_code&) { return true; }
  bool on_int64(int64_t, string_view, error_code&) { return true; }
  bool on_uint64(uint64_t, string_view, error_code&) { return true; }
  bool on_double(double, string_view, error_code&) { return true; }
  bool on_bool(bool, error_code&) { return true; }
  bool on_null(error_code&) { return true; }
  bool on_comment_part(string_view, error_code&) { return true; }
  bool on_comment(string_view, error_code&) { return true; }
};

}  // namespace

std::optional<std::string> DuplicateJsonKey(std::string_view json) {
  std::string duplicate;
  boost::json::basic_parser<DuplicateKeyFinder> parser(boost::json::parse_options{}, &duplicate);
  error_code ec;
  parser.write_some(false, json.data(), json.size(), ec);
  if (ec && !duplicate.empty()) return duplicate;
  return std::nullopt;
}

Status ParseJsonBody(std::string_view body, Params* out) {
  Status err;
  boost::json::basic_parser<Handler> parser(boost::json::parse_options{}, out, &err);
  error_code ec;
  std::size_t n = parser.write_some(false, body.data(), body.size(), ec);
  if (!err.ok()) return err;
  if (ec) {
    return InvalidArgument(fmt::format("malformed JSON body: {} at byte {}", ec.message(), n));
  }
  if (n != body.size()) return InvalidArgument("malformed JSON body: data after the object");
  if (parser.handler().saw_non_scalar) {
    // Rare (a callback object): parse again as a tree to keep each object's or array's text.
    boost::json::monotonic_resource mr;
    boost::json::value v = boost::json::parse(body, ec, &mr);
    if (ec || !v.is_object()) return InvalidArgument("malformed JSON body");
    for (const auto& kv : v.get_object()) {
      if (!kv.value().is_object() && !kv.value().is_array()) continue;
      out->Replace(std::string_view(kv.key()), boost::json::serialize(kv.value()));
    }
  }
  return Status::Ok();
}

}  // namespace chronoq::http
