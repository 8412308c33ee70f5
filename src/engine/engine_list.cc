// listMsg in the embedded engine (API-EXTENSIONS.md section 3): not implemented yet.
#include "base/status.h"
#include "engine/engine.h"

namespace chronoq::engine {

void Engine::List(backend::ListRequest, Callback<Result<backend::ListPage>> done) {
  done(Internal("not implemented yet"));
}

}  // namespace chronoq::engine
