#include "http/tls_context.h"

#include "http/tls_context_internal.h"
#include "tls/server_context.h"

namespace chronoq::http {
namespace {

Result<std::shared_ptr<TlsContext::Native>> Build(const tls::TlsIdentity& id) {
  // The settings are the tls module's (tls/server_context.h), shared with the gRPC API.
  CQ_ASSIGN_OR_RETURN(ssl_ctx_st * ctx, tls::NewServerContext(id, {}));
  return std::make_shared<TlsContext::Native>(ctx);
}

}  // namespace

Result<std::unique_ptr<TlsContext>> TlsContext::Create(const tls::TlsIdentity& identity) {
  std::unique_ptr<TlsContext> out(new TlsContext());
  CQ_RETURN_IF_ERROR(out->Reload(identity));
  return out;
}

TlsContext::~TlsContext() = default;

Status TlsContext::Reload(const tls::TlsIdentity& identity) {
  CQ_ASSIGN_OR_RETURN(std::shared_ptr<Native> next, Build(identity));
  base::MutexLock lock(mu_);
  current_ = std::move(next);
  return Status::Ok();
}

std::shared_ptr<TlsContext::Native> TlsContext::Current() const {
  base::MutexLock lock(mu_);
  return current_;
}

}  // namespace chronoq::http
