#include "engine/engine.h"

// Message management of API-EXTENSIONS.md sections 2-3 (issue 14): not implemented yet.
#include "base/status.h"

namespace chronoq::engine {
namespace {
Status NotYet() { return Internal("not implemented yet"); }
}  // namespace

void Engine::SendBatch(std::vector<core::NewMessage>,
                       Callback<Result<std::vector<backend::Sent>>> done) {
  done(NotYet());
}
void Engine::AckBatch(std::string, std::vector<backend::AckItem>,
                      Callback<Result<std::vector<Status>>> done) {
  done(NotYet());
}
void Engine::Update(backend::UpdateRequest, Callback<Result<core::Message>> done) {
  done(NotYet());
}
void Engine::Touch(std::string, std::string, Millis, Callback<Result<core::Message>> done) {
  done(NotYet());
}
void Engine::Count(std::string, std::string, int64_t, Callback<Result<core::Message>> done) {
  done(NotYet());
}
}  // namespace chronoq::engine
