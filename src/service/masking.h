// What read answers show of a message's callback: each header value masked, its name kept. Used
// where QueueService builds an answer (send, pull, long poll, get) and by Session for the rest.
#pragma once

#include "core/message.h"

namespace chronoq::service {

// Replaces each header value of the message's callback by core::kMaskedHeaderValue (what a client
// reading a message sees of them), names kept.
void MaskCallbackHeaders(core::Message& m);

}  // namespace chronoq::service
