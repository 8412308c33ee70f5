// chronoq: one binary. `chronoq serve` runs the server; other subcommands are clients.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "app/import_camellia.h"
#include "app/redis_migrate_cmd.h"
#include "app/serve.h"
#include "bench/bench.h"
#include "cli/cli.h"

namespace {

std::string Usage() {
  return "Usage: chronoq <command> [options]\n\n"
         "Server:\n"
         "  serve      run the delay-queue server (chronoq serve --help for its settings)\n\n"
         "Client (chronoq <command> --help; --server=URL, default $CHRONOQ_SERVER or "
         "http://127.0.0.1:8080):\n" +
         chronoq::cli::CommandsUsage() +
         "\nOther:\n"
         "  bench      benchmark a running server (chronoq bench --help)\n"
         "  import-camellia  copy a camellia-delay-queue deployment's messages from its Redis\n"
         "  redis-migrate    move a Redis namespace's topics to redis-format 4 (offline)\n"
         "  version    print the version\n";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) {
      std::fputs(Usage().c_str(), stderr);
      return 2;
    }
    std::string cmd = argv[1];
    std::vector<std::string> args(argv + 2, argv + argc);
    if (cmd == "serve") return chronoq::app::RunServe(args);
    if (cmd == "bench") return chronoq::bench::RunBench(args);
    if (cmd == "import-camellia") return chronoq::app::RunImportCamellia(args);
    if (cmd == "redis-migrate") return chronoq::app::RunRedisMigrate(args);
    if (chronoq::cli::IsCliCommand(cmd)) return chronoq::cli::RunCli(cmd, args);
    if (cmd == "version" || cmd == "--version") {
      std::printf("chronoq %s\n", CQ_VERSION);
      return 0;
    }
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      std::fputs(Usage().c_str(), stdout);
      return 0;
    }
    std::fprintf(stderr, "chronoq: unknown command '%s'\n\n%s", cmd.c_str(), Usage().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chronoq: fatal: %s\n", e.what());
    return 1;
  }
}
