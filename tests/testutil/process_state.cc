#include "tests/testutil/process_state.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace chronoq::testutil {
namespace {

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The state letter of /proc/.../stat: the field after the name in parentheses (which may hold
// spaces and parentheses itself).
std::string StateOf(const std::string& stat) {
  const size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? "?" : stat.substr(close + 2, 1);
}

std::string Backtraces(pid_t pid) {
  if (::access("/usr/bin/gdb", X_OK) != 0) return "  (no gdb: no stacks)\n";
  const std::string cmd = fmt::format(
      "timeout 30 /usr/bin/gdb -batch -nx -p {} -ex 'thread apply all bt 15' 2>&1", pid);
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "  (gdb could not be run)\n";
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  ::pclose(p);
  // Only the threads' frames: gdb's own chatter (symbol loading) says nothing about the process.
  std::istringstream lines(out);
  std::string kept;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("Thread ") || line.starts_with("#")) kept += "  " + line + "\n";
  }
  return kept.empty() ? "  (gdb printed no stacks)\n" : kept;
}

}  // namespace

std::string DescribeProcess(pid_t pid) {
  namespace fs = std::filesystem;
  const fs::path tasks = fs::path("/proc") / std::to_string(pid) / "task";
  std::string out = fmt::format("process {}:\n", pid);
  std::error_code ec;
  for (const fs::directory_entry& t : fs::directory_iterator(tasks, ec)) {
    const std::string dir = t.path().string();
    const std::string syscall = FirstLine(dir + "/syscall");
    out += fmt::format("  {} {}: state {}, waits in {}, syscall {}\n", t.path().filename().string(),
                       FirstLine(dir + "/comm"), StateOf(FirstLine(dir + "/stat")),
                       FirstLine(dir + "/wchan"), syscall.substr(0, syscall.find(' ')));
  }
  if (ec) return out + fmt::format("  (no /proc entry: {})\n", ec.message());
  return out + Backtraces(pid);
}

}  // namespace chronoq::testutil
