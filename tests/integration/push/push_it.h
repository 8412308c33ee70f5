// Shared pieces of the push delivery integration tests (docs/push.md): a server fixture allowed
// to push to loopback, callback JSON for the push module's test receivers, and a bounded wait
// for a message's status (the pushes are real network I/O in another process).
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <string_view>
#include <thread>

#include "push/testing/http_receiver.h"
#include "tests/integration/it_util.h"

namespace chronoq::it {

using namespace std::chrono_literals;
using push::testing::HttpReceiver;

inline HttpReceiver::Options Answering(int status, std::string body = "ok") {
  HttpReceiver::Options o;
  o.status = status;
  o.body = std::move(body);
  return o;
}

inline HttpReceiver::Options Hanging() {
  HttpReceiver::Options o;
  o.mode = HttpReceiver::Mode::kHang;
  return o;
}

class PushTest : public ServerTest {
 protected:
  std::vector<std::string> Flags() const override { return {"--push-allowed-targets=127.0.0.1"}; }

  static std::string HttpCallback(const HttpReceiver& r, std::string_view path,
                                  std::string_view extra = "") {
    return fmt::format(R"({{"type":"http","url":"{}"{}}})", r.Url(path), extra);
  }

  json::object Message(const std::string& topic, const std::string& id) { return GetOk(topic, id); }

  // Waits (real time, bounded) until getMsg shows `status`; answers the last message read.
  json::object WaitForStatus(const std::string& topic, const std::string& id, int64_t status,
                             std::chrono::milliseconds bound = 10s) {
    const auto until = std::chrono::steady_clock::now() + bound;
    json::object m;
    while (true) {
      m = GetOk(topic, id);
      if (m.contains("status") && Int(m.at("status")) == status) return m;
      if (std::chrono::steady_clock::now() > until) break;
      std::this_thread::sleep_for(5ms);  // polling another process's progress, not time
    }
    ADD_FAILURE() << "message " << id << " never reached status " << status << ": "
                  << json::serialize(m);
    return m;
  }
};

}  // namespace chronoq::it
