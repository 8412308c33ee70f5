#include "redis/redis_backend.h"

// Message management of API-EXTENSIONS.md sections 2-3 (issue 14): not implemented yet.
#include "base/status.h"

namespace chronoq::redis {
namespace {
Status NotYet() { return Internal("not implemented yet"); }
}  // namespace

void RedisBackend::SendBatch(std::vector<core::NewMessage>,
                             backend::Callback<Result<std::vector<backend::Sent>>> done) {
  done(NotYet());
}
void RedisBackend::AckBatch(std::string, std::vector<backend::AckItem>,
                            backend::Callback<Result<std::vector<Status>>> done) {
  done(NotYet());
}
void RedisBackend::Update(backend::UpdateRequest, backend::Callback<Result<core::Message>> done) {
  done(NotYet());
}
void RedisBackend::Touch(std::string, std::string, Millis,
                         backend::Callback<Result<core::Message>> done) {
  done(NotYet());
}
void RedisBackend::Count(std::string, std::string, int64_t,
                         backend::Callback<Result<core::Message>> done) {
  done(NotYet());
}
void RedisBackend::List(backend::ListRequest, backend::Callback<Result<backend::ListPage>> done) {
  done(NotYet());
}

}  // namespace chronoq::redis
