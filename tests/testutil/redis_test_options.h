// The Redis connection options of an in-process test node: a loopback endpoint and a reply limit
// of 10 s instead of the default second. The tests are about answers, not about that limit
// (connection_test holds it): a sanitizer build on a loaded 2-core CI host once waited more than a
// second for redis-server's reply (docs/testing.md).
//
//   redis::ConnectionOptions co = testutil::TestConnectionOptions(redis_.port());
#pragma once

#include <chrono>

#include "redis/connection.h"

namespace chronoq::testutil {

inline redis::ConnectionOptions TestConnectionOptions(int port) {
  redis::ConnectionOptions co;
  co.command_timeout = std::chrono::seconds(10);
  co.endpoint = redis::RedisEndpoint{"127.0.0.1", port};
  return co;
}

}  // namespace chronoq::testutil
