#include "http/dashboard_history.h"

#include <algorithm>
#include <cmath>

#include "http/json_writer.h"

namespace chronoq::http {
namespace {

using metrics::QueueEvent;

// JSON names of the fields, by DashboardHistory::Field.
constexpr std::array<std::string_view, DashboardHistory::kTotalFields> kFieldNames = {
    "sends",     "deliveries",        "acks",  "deadLetters", "waiting", "ready",
    "consuming", "latenessP99Millis", "topics"};

// The rate fields and the counter each differences.
constexpr std::array<std::pair<int, QueueEvent>, 4> kRates = {{
    {DashboardHistory::kSends, QueueEvent::kSend},
    {DashboardHistory::kDeliveries, QueueEvent::kDelivery},
    {DashboardHistory::kAcks, QueueEvent::kAck},
    {DashboardHistory::kDeadLetters, QueueEvent::kDeadLetter},
}};

// Rates and counts are written with at most 3 decimals: enough for a chart, and short.
void WriteNumber(JsonWriter& w, double v) {
  if (std::isnan(v)) {
    w.Null();
  } else {
    w.Double(std::round(v * 1000) / 1000);
  }
}

}  // namespace

DashboardHistory::DashboardHistory(HistoryOptions options)
    : options_(options),
      times_(options.points, 0),
      total_(options.points * kTotalFields, std::nanf("")) {}

void DashboardHistory::Put(Series& s, int field, size_t slot, double v) const {
  s[static_cast<size_t>(field) * options_.points + slot] = static_cast<float>(v);
}

std::vector<size_t> DashboardHistory::Slots() const {
  std::vector<size_t> out;
  out.reserve(size_);
  const size_t n = options_.points;
  for (size_t i = 0; i < size_; ++i) out.push_back((next_ + n - size_ + i) % n);
  return out;
}

double DashboardHistory::P99Millis(const metrics::HistogramData& before,
                                   const metrics::HistogramData& now) {
  const size_t buckets = now.counts.size();
  std::vector<uint64_t> delta(buckets, 0);
  uint64_t total = 0;
  for (size_t i = 0; i < buckets; ++i) {
    const uint64_t b = i < before.counts.size() ? before.counts[i] : 0;
    delta[i] = now.counts[i] >= b ? now.counts[i] - b : 0;
    total += delta[i];
  }
  if (total == 0) return kUnknown;
  const double rank = std::ceil(0.99 * static_cast<double>(total));
  double seen = 0;
  for (size_t i = 0; i < buckets; ++i) {
    if (delta[i] == 0) continue;
    if (seen + static_cast<double>(delta[i]) >= rank) {
      const double lo = i == 0 ? 0 : now.bounds_seconds[i - 1];
      // The +Inf bucket has no upper bound: its lower one is the best answer.
      if (i >= now.bounds_seconds.size()) return lo * 1000;
      const double hi = now.bounds_seconds[i];
      return (lo + (hi - lo) * (rank - seen) / static_cast<double>(delta[i])) * 1000;
    }
    seen += static_cast<double>(delta[i]);
  }
  return kUnknown;
}

void DashboardHistory::Viewed(std::string_view topic, TimePoint now) {
  if (topic.empty()) return;
  base::MutexLock lock(mu_);
  auto it = viewed_.find(topic);
  if (it != viewed_.end()) {
    it->second = now;
    return;
  }
  // At most half of the series are viewed ones: forget the least recently viewed.
  const size_t cap = std::max<size_t>(1, options_.max_topic_series / 2);
  while (viewed_.size() >= cap) {
    auto oldest =
        std::min_element(viewed_.begin(), viewed_.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    viewed_.erase(oldest);
  }
  viewed_.emplace(std::string(topic), now);
}

void DashboardHistory::Retrack(const Map<int64_t>& depth, TimePoint now) {
  std::vector<std::string> chosen;
  for (auto it = viewed_.begin(); it != viewed_.end();) {
    if (now - it->second > options_.viewed_for) {
      it = viewed_.erase(it);
      continue;
    }
    chosen.push_back(it->first);
    ++it;
  }
  // The rest: the busiest, then the deepest, among topics with something to show.
  struct Candidate {
    const std::string* topic;
    double activity;
    int64_t depth;
  };
  std::vector<Candidate> candidates;
  for (const auto& [topic, d] : depth) {
    auto a = activity_.find(topic);
    const double act = a == activity_.end() ? 0 : a->second;
    if ((act > 0 || d > 0) && !viewed_.contains(topic)) candidates.push_back({&topic, act, d});
  }
  const size_t room =
      options_.max_topic_series > chosen.size() ? options_.max_topic_series - chosen.size() : 0;
  auto better = [](const Candidate& a, const Candidate& b) {
    if (a.activity != b.activity) return a.activity > b.activity;
    if (a.depth != b.depth) return a.depth > b.depth;
    return *a.topic < *b.topic;
  };
  if (candidates.size() > room) {
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(room),
                      candidates.end(), better);
    candidates.resize(room);
  }
  for (const Candidate& c : candidates) chosen.push_back(*c.topic);

  Map<Series> next;
  for (std::string& topic : chosen) {
    auto it = series_.find(topic);
    if (it != series_.end()) {
      next.emplace(std::move(topic), std::move(it->second));
    } else {
      next.emplace(std::move(topic), Series(options_.points * kTopicFields, std::nanf("")));
    }
  }
  series_ = std::move(next);
}

void DashboardHistory::Add(const HistorySample& s) {
  base::MutexLock lock(mu_);
  const double dt = have_prev_ ? static_cast<double>((s.at - prev_at_).count()) / 1000.0 : 0;
  const bool rates = have_prev_ && dt > 0;
  // The average's weight per sample: a half-life of one minute.
  const double alpha = 1 - std::pow(0.5, static_cast<double>(options_.interval.count()) / 60'000.0);

  // Counters: per label rates, and the totals over every label (_other included).
  Map<Counts> counts;
  std::array<double, metrics::kQueueEventCount> total_delta{};
  Map<Latest> latest;
  for (const metrics::TopicCounts& c : s.counts) {
    const auto prev = prev_counts_.find(c.topic);
    const bool known = prev != prev_counts_.end();
    const bool is_other = c.topic == metrics::kOtherTopic;
    Latest l;
    l.dead_letters_total =
        static_cast<int64_t>(c.counts[static_cast<int>(QueueEvent::kDeadLetter)]);
    for (int e = 0; e < metrics::kQueueEventCount; ++e) {
      const uint64_t before = known ? prev->second[e] : 0;
      total_delta[e] += static_cast<double>(c.counts[e] >= before ? c.counts[e] - before : 0);
    }
    if (rates) {
      auto rate = [&](QueueEvent e) {
        const uint64_t before = known ? prev->second[static_cast<int>(e)] : 0;
        const uint64_t v = c.counts[static_cast<int>(e)];
        return static_cast<double>(v >= before ? v - before : 0) / dt;
      };
      l.sends = rate(QueueEvent::kSend);
      l.deliveries = rate(QueueEvent::kDelivery);
      l.dead_letters = rate(QueueEvent::kDeadLetter);
    }
    if (!is_other) latest.emplace(c.topic, l);
    counts.emplace(c.topic, c.counts);
  }

  // Depth, and the activity average of every present topic.
  Map<int64_t> depth;
  int64_t waiting = 0, ready = 0, consuming = 0;
  for (const core::TopicInfo& t : s.topics) {
    depth[t.topic] = t.waiting + t.ready + t.consuming;
    waiting += t.waiting;
    ready += t.ready;
    consuming += t.consuming;
    latest.try_emplace(t.topic);  // a topic without a label of its own: rates unknown
  }
  Map<double> activity;
  for (const auto& [topic, l] : latest) {
    const double now_rate =
        std::isnan(l.sends) ? 0 : l.sends + (std::isnan(l.deliveries) ? 0 : l.deliveries);
    auto a = activity_.find(topic);
    const double before = a == activity_.end() ? 0 : a->second;
    activity.emplace(topic, before + alpha * (now_rate - before));
    depth.try_emplace(topic, 0);
  }
  activity_ = std::move(activity);
  latest_ = std::move(latest);
  Retrack(depth, s.at);

  // The new point.
  const size_t slot = next_;
  times_[slot] = ToEpochMs(s.at);
  for (const auto& [field, event] : kRates) {
    Put(total_, field, slot, rates ? total_delta[static_cast<int>(event)] / dt : kUnknown);
  }
  Put(total_, kWaiting, slot, s.depth_ok ? static_cast<double>(waiting) : kUnknown);
  Put(total_, kReady, slot, s.depth_ok ? static_cast<double>(ready) : kUnknown);
  Put(total_, kConsuming, slot, s.depth_ok ? static_cast<double>(consuming) : kUnknown);
  Put(total_, kLatenessP99, slot, rates ? P99Millis(prev_lateness_, s.lateness) : kUnknown);
  Put(total_, kTopics, slot, s.depth_ok ? static_cast<double>(s.topics.size()) : kUnknown);
  Map<const core::TopicInfo*> info;
  for (const core::TopicInfo& t : s.topics) info.emplace(t.topic, &t);
  for (auto& [topic, series] : series_) {
    auto l = latest_.find(topic);
    const Latest none;
    const Latest& r = l == latest_.end() ? none : l->second;
    Put(series, kSends, slot, r.sends);
    Put(series, kDeliveries, slot, r.deliveries);
    Put(series, kAcks, slot, kUnknown);
    if (rates && l != latest_.end() && !std::isnan(r.sends)) {
      const auto c = counts.find(topic);
      const auto p = prev_counts_.find(topic);
      const int ack = static_cast<int>(QueueEvent::kAck);
      const uint64_t before = p == prev_counts_.end() ? 0 : p->second[ack];
      Put(series, kAcks, slot, static_cast<double>(c->second[ack] - before) / dt);
    }
    Put(series, kDeadLetters, slot, r.dead_letters);
    auto t = info.find(topic);
    // A listed topic's depth; one not listed has none (an unknown topic is all zero).
    const bool known = s.depth_ok;
    Put(series, kWaiting, slot,
        !known            ? kUnknown
        : t == info.end() ? 0
                          : static_cast<double>(t->second->waiting));
    Put(series, kReady, slot,
        !known            ? kUnknown
        : t == info.end() ? 0
                          : static_cast<double>(t->second->ready));
    Put(series, kConsuming, slot,
        !known            ? kUnknown
        : t == info.end() ? 0
                          : static_cast<double>(t->second->consuming));
  }
  next_ = (next_ + 1) % options_.points;
  size_ = std::min(size_ + 1, options_.points);

  have_prev_ = true;
  prev_at_ = s.at;
  prev_counts_ = std::move(counts);
  prev_lateness_ = s.lateness;
}

void DashboardHistory::WriteHistory(JsonWriter& w, std::string_view topic, bool totals) const {
  base::MutexLock lock(mu_);
  const std::vector<size_t> slots = Slots();
  const size_t n = options_.points;
  w.Num("intervalMillis", options_.interval.count());
  w.Key("times").BeginArray();
  for (size_t slot : slots) w.Int(times_[slot]);
  w.EndArray();
  auto write_series = [&](const Series& s, int fields) {
    w.BeginObject();
    for (int f = 0; f < fields; ++f) {
      w.Key(kFieldNames[f]).BeginArray();
      for (size_t slot : slots) WriteNumber(w, s[static_cast<size_t>(f) * n + slot]);
      w.EndArray();
    }
    w.EndObject();
  };
  w.Key("total");
  if (totals) {
    write_series(total_, kTotalFields);
  } else {
    w.Null();
  }
  auto it = topic.empty() ? series_.end() : series_.find(topic);
  w.Key("tracked").Bool(it != series_.end());
  w.Key("series");
  if (it == series_.end()) {
    w.Null();
  } else {
    write_series(it->second, kTopicFields);
  }
}

void DashboardHistory::Annotate(std::vector<TopicRow>& rows) const {
  base::MutexLock lock(mu_);
  for (TopicRow& r : rows) {
    auto it = latest_.find(r.topic);
    if (it != latest_.end()) {
      r.sends = it->second.sends;
      r.deliveries = it->second.deliveries;
      r.dead_letters = it->second.dead_letters;
      r.dead_letters_total = it->second.dead_letters_total;
    }
    r.tracked = series_.contains(r.topic);
  }
}

std::vector<double> DashboardHistory::Activity(std::string_view topic, size_t buckets) const {
  base::MutexLock lock(mu_);
  auto it = series_.find(topic);
  if (it == series_.end() || buckets == 0) return {};
  const std::vector<size_t> slots = Slots();
  const size_t n = options_.points;
  const size_t per = std::max<size_t>(1, (slots.size() + buckets - 1) / buckets);
  std::vector<double> out;
  for (size_t i = 0; i < slots.size(); i += per) {
    double sum = 0;
    size_t known = 0;
    for (size_t j = i; j < std::min(i + per, slots.size()); ++j) {
      const float s = it->second[kSends * n + slots[j]];
      const float d = it->second[kDeliveries * n + slots[j]];
      if (std::isnan(s)) continue;
      sum += s + (std::isnan(d) ? 0 : d);
      ++known;
    }
    out.push_back(known == 0 ? kUnknown : sum / static_cast<double>(known));
  }
  return out;
}

size_t DashboardHistory::samples() const {
  base::MutexLock lock(mu_);
  return size_;
}

size_t DashboardHistory::tracked_topics() const {
  base::MutexLock lock(mu_);
  return series_.size();
}

}  // namespace chronoq::http
