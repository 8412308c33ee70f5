// Prometheus text exposition format 0.0.4: a writer for metric families and their samples, and the
// escaping of HELP text and label values. Every family is written as one block: HELP, TYPE, then
// its samples (a name must not appear twice in one scrape).
//
// Thread-safety: a TextWriter is used by one thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace chronoq::metrics {

inline constexpr std::string_view kExpositionContentType =
    "text/plain; version=0.0.4; charset=utf-8";

enum class MetricType { kCounter, kGauge, kHistogram };

struct Label {
  std::string_view name;
  std::string_view value;
};

// A label value with backslash, double quote and newline escaped (\\, \", \n), and the
// namespace separator of topic names (0x1F) shown as '/'.
std::string EscapeLabelValue(std::string_view v);
// HELP text with backslash and newline escaped.
std::string EscapeHelp(std::string_view v);
// A sample value: integers without a fraction, +Inf/-Inf/NaN spelled as Prometheus does.
std::string FormatValue(double v);

class HistogramData;

class TextWriter {
 public:
  // Starts a family: "# HELP name help" and "# TYPE name type".
  void Family(std::string_view name, std::string_view help, MetricType type);
  void Sample(std::string_view name, std::span<const Label> labels, double value);
  void Sample(std::string_view name, std::initializer_list<Label> labels, double value) {
    Sample(name, std::span<const Label>(labels.begin(), labels.size()), value);
  }
  // The _bucket (cumulative, with le), _sum and _count samples of histogram `name`.
  void Histogram(std::string_view name, std::span<const Label> labels, const HistogramData& h);

  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void Line(std::string_view name, std::span<const Label> labels, std::string_view extra_name,
            std::string_view extra_value, double value);
  std::string out_;
};

}  // namespace chronoq::metrics
