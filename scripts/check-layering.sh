#!/usr/bin/env bash
# Fails when a module includes a module it may not (STYLE.md section 2) or a third-party header
# outside the module that wraps it. Run from the repository root. The build enforces the module
# table too (cq_library gives each library an include root with only its own headers, so an
# include of a module it does not link does not compile); this script says it sooner and also
# covers third-party headers and file sizes.
set -euo pipefail

declare -A ALLOWED=(
  [base]=""
  [core]="base"
  [metrics]="base"
  [tls]="base"
  [auth]="core metrics base"
  [config]="core base"
  [storage]="core metrics base"
  [backend]="core base"
  [engine]="backend core storage base"
  [redis]="backend core metrics base"
  [service]="auth backend core metrics base"
  [http]="service auth backend core metrics tls base"
  [grpc_api]="service auth backend core metrics tls base"
  [client]="tls base"
  [cli]="client tls base"
  [bench]="client tls base"
  [push]="core base"
  [app]="base auth core storage backend engine redis service http grpc_api metrics config client cli bench push tls"
)

fail=0
for dir in src/*/; do
  module=$(basename "$dir")
  allowed="${ALLOWED[$module]-}"
  if [ -z "${ALLOWED[$module]+x}" ]; then
    echo "layering: module '$module' is not in the table of scripts/check-layering.sh"
    fail=1
    continue
  fi
  # Production sources only; tests may reach across modules.
  while IFS= read -r file; do
    while IFS= read -r inc; do
      dep=${inc%%/*}
      [ "$dep" = "$module" ] && continue
      if [[ " $allowed " != *" $dep "* ]] && [ -d "src/$dep" ]; then
        echo "layering: $file includes \"$inc\" but $module may not depend on $dep"
        fail=1
      fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
    # Third-party types stay inside the module that wraps them.
    # (src/grpc_api's .cc files too: the experimental nghttp2 engine serves on Asio.)
    if grep -qE '^#include <(boost)/' "$file" && [ "$module" != "http" ] && [ "$module" != "push" ] &&
       { [ "$module" != "grpc_api" ] || [[ "$file" == *.h ]]; }; then
      echo "layering: $file includes Boost; only src/http and src/push (and src/grpc_api .cc files) may"
      fail=1
    fi
    # nghttp2: only in src/grpc_api's .cc files (the experimental HTTP/2 engine of the gRPC API)
    # and src/bench/h2_grpc_client.cc (the bench's HTTP/2 gRPC client).
    if grep -qE '^#include <nghttp2/' "$file" && [ "$file" != "src/bench/h2_grpc_client.cc" ] &&
       { [ "$module" != "grpc_api" ] || [[ "$file" == *.h ]]; }; then
      echo "layering: $file includes nghttp2; only src/grpc_api's .cc files (and the bench's h2 client) may"
      fail=1
    fi
    # gRPC and librdkafka: only in src/push's .cc files (push delivery's clients) and gRPC in
    # src/grpc_api's .cc files (the gRPC API), never in a header: they are heavy and their types
    # stay inside the module. The same for protobuf and the C++ generated from the proto.
    # (src/bench's gRPC clients: workloads_grpc.cc alone; workloads_grpc_h2.cc the generated
    # messages and protobuf, not gRPC.)
    grpc_ok=false
    if [ "$module" = "grpc_api" ] || [ "$file" = "src/bench/workloads_grpc.cc" ]; then
      grpc_ok=true
    fi
    proto_ok=$grpc_ok
    [ "$file" = "src/bench/workloads_grpc_h2.cc" ] && proto_ok=true
    if grep -qE '^#include <(grpc|grpcpp|librdkafka)/' "$file" && [ "$module" != "push" ] &&
       { ! $grpc_ok || grep -qE '^#include <librdkafka/' "$file"; }; then
      echo "layering: $file includes gRPC or librdkafka; only src/push (and gRPC in src/grpc_api) may"
      fail=1
    fi
    if grep -qE '^#include [<"](google/protobuf/|chronoq/v1/)' "$file" && ! $proto_ok; then
      echo "layering: $file includes protobuf or the generated gRPC API; only src/grpc_api may"
      fail=1
    fi
    if [[ "$file" == *.h ]] &&
       grep -qE '^#include [<"](boost/|grpc/|grpcpp/|librdkafka/|google/protobuf/|chronoq/v1/|nghttp2/)' "$file" &&
       { [ "$module" = "push" ] || [ "$module" = "grpc_api" ] || [ "$module" = "bench" ]; }; then
      echo "layering: header $file includes a third-party client; keep it in a .cc file"
      fail=1
    fi
    # OpenSSL: src/tls wraps it (openssl_util.h, its one header naming OpenSSL types, is internal);
    # src/http (Asio's ssl::context, in .cc files), src/push (https push targets) and src/auth
    # (SHA-256 digests of the tokens, constant-time comparison, in .cc files) use it too.
    if grep -qE '^#include <openssl/' "$file" && [ "$module" != "tls" ] &&
       { [[ "$file" == *.h ]] || { [ "$module" != "http" ] && [ "$module" != "push" ] && [ "$module" != "auth" ]; }; }; then
      echo "layering: $file includes OpenSSL; only src/tls (and src/http, src/push, src/auth .cc files) may"
      fail=1
    fi
    if grep -qE '^#include <rocksdb/' "$file" && [[ "$file" != src/storage/rocksdb/* ]]; then
      echo "layering: $file includes RocksDB; only src/storage/rocksdb may"
      fail=1
    fi
    if grep -qE '^#include <(hiredis|hiredis/)' "$file" && [ "$module" != "redis" ]; then
      echo "layering: $file includes hiredis; only src/redis may"
      fail=1
    fi
    if [[ "$file" == *.h ]] && grep -qE '^#include <spdlog/' "$file"; then
      echo "layering: header $file includes spdlog; keep it inside base/log.cc"
      fail=1
    fi
  done < <(find "$dir" -name '*.h' -o -name '*.cc' | grep -v '_test\.cc$' | grep -v '_bench\.cc$')
done

# No file in src/ over 800 lines.
while IFS= read -r line; do
  echo "size: $line lines (limit 800; split it by responsibility)"
  fail=1
done < <(find src -name '*.h' -o -name '*.cc' | xargs wc -l | awk '$2 != "total" && $1 > 800 {print $2 " has " $1}')

if [ "$fail" -ne 0 ]; then exit 1; fi
echo "layering: ok"
