// Internal to src/http (tls_context.cc and server.cc): the Boost.Asio side of TlsContext.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include "http/tls_context.h"

namespace chronoq::http {

struct TlsContext::Native {
  // Takes the reference of tls::NewServerContext.
  explicit Native(boost::asio::ssl::context::native_handle_type handle) : ctx(handle) {}
  boost::asio::ssl::context ctx;
};

}  // namespace chronoq::http
