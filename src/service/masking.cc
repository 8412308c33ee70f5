#include "service/masking.h"

#include <utility>

#include "core/callback.h"

namespace chronoq::service {

void MaskCallbackHeaders(core::Message& m) {
  // The callback is shared, immutable (core::CallbackRef): the answer gets a masked copy.
  if (!m.record.callback || m.record.callback->headers.empty()) return;
  core::Callback shown = *m.record.callback;
  for (auto& header : shown.headers) header.second = core::kMaskedHeaderValue;
  m.record.callback = core::CallbackRef(std::move(shown));
}

}  // namespace chronoq::service
