// One server per data directory: a second `chronoq serve` on a directory a running server holds
// exits at once with its own exit code (3), which the systemd unit does not restart after
// (RestartPreventExitStatus), and says which server holds it; the first one keeps serving.
#include "tests/integration/it_util.h"

namespace chronoq::it {
namespace {

using namespace std::chrono_literals;
using testutil::ExitResult;
using testutil::RunBinary;

constexpr int kExitDataDirInUse = 3;  // src/app/start_checks.h

TEST(DataDirTest, ASecondServerOnTheSameDataDirExits3AndNamesTheFirst) {
  ServerProcess first;
  Status st = first.Start({"--storage=embedded", "--log-level=warn"});
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_FALSE(first.data_dir().empty());

  ExitResult second = RunBinary(
      {"serve", "--listen=127.0.0.1:0", "--storage=embedded", "--data-dir=" + first.data_dir()},
      10s);
  EXPECT_EQ(second.exit_code, kExitDataDirInUse) << second.err;
  EXPECT_EQ(second.out, "") << "it never listened";
  EXPECT_NE(second.err.find("chronoq: data directory " + first.data_dir() +
                            " is in use by another chronoq server (pid " +
                            std::to_string(first.pid()) + ")"),
            std::string::npos)
      << second.err;

  ApiClient c(first.endpoint());
  EXPECT_EQ(c.Get("/camellia/health/check").code(), 200);
  EXPECT_EQ(first.Stop(SIGTERM), 0);
}

}  // namespace
}  // namespace chronoq::it
