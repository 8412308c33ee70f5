// KafkaMock: librdkafka's mock cluster (rdkafka_mock.h), a real Kafka protocol broker running in
// this process on loopback, for the push tests: a producer elsewhere (the Pusher, or a chronoq
// server process) produces to brokers(); Consume() reads the records back with a consumer.
// Started by its constructor, stopped by its destructor.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace chronoq::push::testing {

struct KafkaRecord {
  int32_t partition = 0;
  std::string key;
  std::string value;
  std::map<std::string, std::string> headers;
};

class KafkaMock {
 public:
  explicit KafkaMock(int brokers = 1);
  ~KafkaMock();
  KafkaMock(const KafkaMock&) = delete;
  KafkaMock& operator=(const KafkaMock&) = delete;

  // The bootstrap servers, "127.0.0.1:<port>[,...]" (a callback's `brokers`).
  std::string brokers() const;
  // Creates `topic` with `partitions` partitions (replication 1).
  Status CreateTopic(const std::string& topic, int partitions = 1);

  // Reads every partition of `topic` from the beginning until `n` records came or `bound`
  // passed, in partition order then offset order. `end`, when given, gets the number of records
  // the topic holds (the sum of its partitions' high watermarks; -1 when unknown).
  std::vector<KafkaRecord> Consume(const std::string& topic, size_t n,
                                   std::chrono::milliseconds bound, int64_t* end = nullptr) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace chronoq::push::testing
