// Internal to src/http (tls_context.cc and server.cc): the Boost.Asio side of TlsContext.
#pragma once

#include <boost/asio/ssl/context.hpp>

#include "http/tls_context.h"

namespace chronoq::http {

struct TlsContext::Native {
  boost::asio::ssl::context ctx{boost::asio::ssl::context::tls_server};
};

}  // namespace chronoq::http
