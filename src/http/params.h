// Request parameters as API.md section 1 defines them: from the URL query string and/or an
// application/x-www-form-urlencoded body (merged; the body wins), or a JSON object body. A
// parameter given twice in one place, broken percent-encoding or a malformed JSON body is a
// request error (HTTP 400). ParamReader then reads typed values with the API's rules and latches
// the first error.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/result.h"

namespace chronoq::http {

class Params {
 public:
  // kInvalidArgument with a sentence naming the problem when the request is malformed. The
  // Params keep views into `query` and `body` (a name or value with nothing to decode is not
  // copied): they must outlive it.
  static Result<Params> Parse(std::string_view query, bool has_content_type,
                              std::string_view content_type, std::string_view body);

  // A parameter's value as given (possibly empty), or nullptr when absent. A JSON object or array
  // value is reported by NonScalar(); its text is its JSON text.
  const std::string_view* Find(std::string_view name) const;
  bool NonScalar(std::string_view name) const;
  // Find and NonScalar in one search: the value or nullptr, and sets *non_scalar when found.
  const std::string_view* Find(std::string_view name, bool* non_scalar) const;
  // The first parameter's name (in the order given) that is not in `known`, or nullptr: for the
  // endpoints that refuse unknown names (setTopicConfig) instead of ignoring them like camellia's.
  const std::string_view* FirstUnknown(std::initializer_list<std::string_view> known) const;
  // Set when a body was present but ignored because of its Content-Type (e.g. "text/plain").
  const std::string& ignored_body_type() const { return ignored_body_type_; }

  // Used by the parsers: adds a value from `source` ("query string", "form body", "JSON body";
  // a string literal, kept by reference); kInvalidArgument when `name` was already given there.
  Status Add(std::string_view source, std::string name, std::string value, bool non_scalar = false);
  // The same for a name and value that outlive the Params (the request's bytes): kept as views.
  Status AddView(std::string_view source, std::string_view name, std::string_view value);
  // Replaces the value of `name`, when given, with `text` (the JSON body's parser: an object's or
  // array's JSON text).
  void Replace(std::string_view name, std::string text);

 private:
  friend class ParamReader;
  // A name and a value: views into the request's bytes, or into strings of `owned_` (a decoded
  // one, or a JSON body's), which stay where they are when the Params move. Small and trivially
  // copied: a request's values are added, searched and moved without touching a string.
  struct Value {
    std::string_view name;
    std::string_view text;
    std::string_view source;            // a string literal: "query string", "form body", ...
    std::string* owned_text = nullptr;  // text's bytes when the Params own them (in owned_)
    bool non_scalar = false;

    // The text as a string of its own: moved out when the Params own it (read each value once).
    std::string TakeText();
  };
  const Value* FindValue(std::string_view name) const;
  Value* FindValue(std::string_view name) {
    return const_cast<Value*>(std::as_const(*this).FindValue(name));
  }
  Status Insert(const Value& v);
  // Keeps `s` for the Params' life: its bytes do not move.
  std::string* Own(std::string s);
  // A request has a handful of parameters: a vector searched linearly beats a hash map. A hostile
  // one may carry a million (an 8 MiB body of "a1=&a2=&..."): past kIndexFrom values, index_ maps
  // each name to its place in values_, so that checking for duplicates stays linear in all.
  static constexpr size_t kIndexFrom = 32;
  std::vector<Value> values_;
  // The bytes of decoded names and values, each in a string of its own (which a move of the
  // Params, or of this vector, leaves in place): empty for the common request.
  std::vector<std::unique_ptr<std::string>> owned_;
  // Made only past kIndexFrom values, so that the common request's Params move without it.
  std::unique_ptr<std::unordered_map<std::string, size_t>> index_;
  std::string ignored_body_type_;
};

// Parses one application/x-www-form-urlencoded string into `out`.
Status ParseUrlEncoded(std::string_view text, std::string_view source, Params* out);
// Parses a JSON object body into `out`.
Status ParseJsonBody(std::string_view body, Params* out);
// The first key given twice in one object of `json` (at any depth), or nullopt (also when `json`
// is not valid JSON: the caller's parse reports that).
std::optional<std::string> DuplicateJsonKey(std::string_view json);

// Decimal integer with optional sign, nothing else (API.md section 1).
std::optional<int64_t> ParseInt64(std::string_view s);
// true/false, 1/0, yes/no, on/off, case-insensitive.
std::optional<bool> ParseBool(std::string_view s);

class ParamReader {
 public:
  // Reads (and takes) values out of `params`: read each parameter once.
  explicit ParamReader(Params& params) : p_(params) {}

  // Absent -> nullopt (and an error when required). Empty strings are returned as given. The
  // value is moved out of the Params.
  std::optional<std::string> String(std::string_view name, bool required);
  // Empty counts as absent. Values outside the type's range are errors.
  std::optional<int64_t> Long(std::string_view name, bool required);
  std::optional<int32_t> Int(std::string_view name, bool required);
  std::optional<bool> Bool(std::string_view name, bool required);
  // A parameter holding a JSON value (a callback): a JSON body's object or array member as its
  // JSON text, or a string parameter's text (a form field holding JSON). Empty counts as absent.
  std::optional<std::string> JsonText(std::string_view name);

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  // Latches a problem the caller found in a value it read (the first one is kept).
  void Fail(std::string msg);

 private:
  // The raw text of a scalar parameter, or nullptr if absent/empty-and-numeric; latches errors.
  Params::Value* Raw(std::string_view name, bool required, bool empty_is_absent);
  Params& p_;
  Status status_;
};

}  // namespace chronoq::http
