// Store: where message records live durably (or, for the memory store, for the life of the
// process). The engine keeps its indexes in memory and reads and writes records through this
// narrow interface; a record's metadata and its payload are stored apart so that state changes
// never rewrite the payload.
//
// Thread-safety: implementations are safe to call from several threads at once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "core/message.h"

namespace chronoq::storage {

// One atomic group of changes: all of it is applied or none of it.
class WriteBatch {
 public:
  enum class Kind { kPutMeta, kPutPayload, kDelete };
  struct Op {
    Kind kind;
    core::MessageRecord record;  // kPutMeta: the record (payload ignored); others: topic + msg_id
    std::string payload;         // kPutPayload only
  };

  // Stores every field of `r` except its payload.
  void PutMeta(const core::MessageRecord& r);
  // Stores the payload of the message r.topic/r.msg_id.
  void PutPayload(const core::MessageRecord& r);
  // Removes the record and its payload.
  void Delete(std::string_view topic, std::string_view msg_id);

  const std::vector<Op>& ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }

 private:
  std::vector<Op> ops_;
};

class Store {
 public:
  virtual ~Store() = default;

  // The record topic/msg_id, with its payload when `with_payload`; std::nullopt when absent.
  // Errors: kIOError, kCorruption.
  virtual Result<std::optional<core::MessageRecord>> Get(std::string_view topic,
                                                         std::string_view msg_id,
                                                         bool with_payload) = 0;

  // Applies the batch atomically. Errors: kIOError (nothing applied).
  virtual Status Write(const WriteBatch& batch) = 0;
};

}  // namespace chronoq::storage
