#include "storage/store.h"

namespace chronoq::storage {

void WriteBatch::PutMeta(const core::MessageRecord& r) {
  ops_.push_back(Op{Kind::kPutMeta, core::CopyWithoutPayload(r), {}});
}

void WriteBatch::PutPayload(const core::MessageRecord& r) {
  Op op{Kind::kPutPayload, {}, r.payload};
  op.record.topic = r.topic;
  op.record.msg_id = r.msg_id;
  ops_.push_back(std::move(op));
}

void WriteBatch::Delete(std::string_view topic, std::string_view msg_id) {
  Op op{Kind::kDelete, {}, {}};
  op.record.topic = topic;
  op.record.msg_id = msg_id;
  ops_.push_back(std::move(op));
}

}  // namespace chronoq::storage
