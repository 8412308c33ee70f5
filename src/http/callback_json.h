// The `callback` object of API-EXTENSIONS.md section 5 in JSON: parsed from a request (a JSON
// body's member, or its JSON text in a form field) and written into answers. The shape is checked
// here (types of members, known names per type); the values are checked by
// core::ValidateCallback, which the service runs with the server's push allowlist.
#pragma once

#include <string_view>

#include "base/result.h"
#include "core/callback.h"
#include "http/json_writer.h"

namespace chronoq::http {

// `text` is the JSON text of the object. Errors are kInvalidArgument sentences naming
// "callback" or "callback.<member>".
Result<core::Callback> ParseCallbackJson(std::string_view text);

// The callback as an object value (after a Key()): type, the members of its type that are set,
// timeoutMillis, and retryIntervalMillis when set.
void WriteCallbackJson(JsonWriter& w, const core::Callback& cb);

}  // namespace chronoq::http
