#include "metrics/exposition.h"

#include <fmt/format.h>

#include <cmath>

#include "metrics/instruments.h"

namespace chronoq::metrics {
namespace {

std::string_view TypeName(MetricType t) {
  switch (t) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

std::string Escape(std::string_view v, bool quote) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else if (c == '\x1F' && quote) {
      // The namespace separator of an internal topic name (core/scope.h: "shop\x1Forders"):
      // shown as "shop/orders". No other label value holds a control character.
      out += '/';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string EscapeLabelValue(std::string_view v) { return Escape(v, true); }
std::string EscapeHelp(std::string_view v) { return Escape(v, false); }

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

void TextWriter::Family(std::string_view name, std::string_view help, MetricType type) {
  fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, EscapeHelp(help),
                 name, TypeName(type));
}

void TextWriter::Line(std::string_view name, std::span<const Label> labels,
                      std::string_view extra_name, std::string_view extra_value, double value) {
  out_ += name;
  if (!labels.empty() || !extra_name.empty()) {
    out_ += '{';
    bool first = true;
    auto add = [&](std::string_view k, std::string_view v) {
      if (!first) out_ += ',';
      first = false;
      out_ += k;
      out_ += "=\"";
      out_ += EscapeLabelValue(v);
      out_ += '"';
    };
    for (const Label& l : labels) add(l.name, l.value);
    if (!extra_name.empty()) add(extra_name, extra_value);
    out_ += '}';
  }
  out_ += ' ';
  out_ += FormatValue(value);
  out_ += '\n';
}

void TextWriter::Sample(std::string_view name, std::span<const Label> labels, double value) {
  Line(name, labels, {}, {}, value);
}

void TextWriter::Histogram(std::string_view name, std::span<const Label> labels,
                           const HistogramData& h) {
  const std::string bucket = fmt::format("{}_bucket", name);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.counts.size(); ++i) {
    cumulative += h.counts[i];
    std::string le = i < h.bounds_seconds.size() ? FormatValue(h.bounds_seconds[i]) : "+Inf";
    Line(bucket, labels, "le", le, static_cast<double>(cumulative));
  }
  Line(fmt::format("{}_sum", name), labels, {}, {}, h.sum_seconds);
  Line(fmt::format("{}_count", name), labels, {}, {}, static_cast<double>(cumulative));
}

}  // namespace chronoq::metrics
