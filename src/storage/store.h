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

// One atomic group of changes: all of it is applied or none of it. A batch refers to the records
// and strings it was given, without copying them: they must outlive Store::Write().
class WriteBatch {
 public:
  enum class Kind { kPutMeta, kPutPayload, kDelete };
  struct Op {
    Kind kind;
    const core::MessageRecord* record;  // kPutMeta, kPutPayload
    std::string_view topic;             // every kind
    std::string_view msg_id;            // every kind
  };

  WriteBatch() { ops_.reserve(2); }

  // Stores every field of `r` except its payload.
  void PutMeta(const core::MessageRecord& r) {
    ops_.push_back(Op{Kind::kPutMeta, &r, r.topic, r.msg_id});
  }
  // Stores the payload of the message r.topic/r.msg_id.
  void PutPayload(const core::MessageRecord& r) {
    ops_.push_back(Op{Kind::kPutPayload, &r, r.topic, r.msg_id});
  }
  // Removes the record and its payload.
  void Delete(std::string_view topic, std::string_view msg_id) {
    ops_.push_back(Op{Kind::kDelete, nullptr, topic, msg_id});
  }

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
