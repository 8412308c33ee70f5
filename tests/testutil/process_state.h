// What a running child process is doing, for the failure message of a test that waited for it in
// vain (a server that did not start in time): each thread's state and kernel wait channel from
// /proc, and, when gdb is installed, each thread's stack. Linux only; tests only.
#pragma once

#include <sys/types.h>

#include <string>

namespace chronoq::testutil {

// Several lines, one per thread ("<tid> <name>: state <S>, waits in <wchan>, syscall <n>"), then
// gdb's backtraces (or why there are none). Empty-handed lines when /proc has nothing (the
// process is gone). Takes up to about 30 s (gdb's limit).
std::string DescribeProcess(pid_t pid);

}  // namespace chronoq::testutil
