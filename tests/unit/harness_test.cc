// The test harness's sanitizer check (tests/testutil/server_harness.h): a report in a server's or
// a command's stderr must fail the test that ran it, whichever sanitizer wrote it; an ordinary
// log must not.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "tests/testutil/server_harness.h"

namespace chronoq::testutil {
namespace {

TEST(SanitizerReportTest, EachSanitizersReportFailsTheTestAndIsQuoted) {
  const char* reports[] = {
      "==12==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020",
      "==12==ERROR: LeakSanitizer: detected memory leaks",
      "WARNING: ThreadSanitizer: data race (pid=12)",
      "src/http/params.cc:40:7: runtime error: null pointer passed as argument 1",
  };
  for (const char* report : reports) {
    std::string log = std::string("2026-11-22T05:00:00.000Z info  cq.app started\n") + report +
                      "\n    #0 0x55 in Decode\n";
    EXPECT_NONFATAL_FAILURE(ExpectNoSanitizerReport("the server", log), report);
  }
}

TEST(SanitizerReportTest, AnOrdinaryLogPasses) {
  ExpectNoSanitizerReport("the server",
                          "2026-11-22T05:00:00.000Z warn  cq.http accept failed: Too many open "
                          "files; retrying every 500 ms at most until it succeeds\n");
}

}  // namespace
}  // namespace chronoq::testutil
