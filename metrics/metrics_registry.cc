// Prometheus text exposition: "# HELP", "# TYPE", then one sample per line; label values escape
// backslash, double quote and newline; histograms as cumulative _bucket{le=…}, _sum and _count.
#include "berth/metrics_registry.h"
#include "berth/mutex.h"

#include <charconv>
#include <cmath>

namespace berth {

namespace {

std::string format_number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : "0";
}

void append_escaped(std::string& out, const std::string& s, bool quote_too) {
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quote_too)
      out += "\\\"";
    else
      out += c;
  }
}

void append_header(std::string& out, const std::string& name, const std::string& help, const char* type) {
  out += "# HELP " + name + " ";
  append_escaped(out, help, false);
  out += "\n# TYPE " + name + " " + type + "\n";
}

// {a="x",b="y"} plus an optional extra label (le for buckets); nothing when there are no labels.
void append_labels(std::string& out, const std::vector<std::string>& names, const LabelValues& values,
                   const char* extra_name = nullptr, const std::string& extra_value = {}) {
  if (names.empty() && !extra_name) return;
  out += '{';
  bool first = true;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!first) out += ',';
    first = false;
    out += names[i] + "=\"";
    append_escaped(out, i < values.size() ? values[i] : std::string(), true);
    out += '"';
  }
  if (extra_name) {
    if (!first) out += ',';
    out += std::string(extra_name) + "=\"" + extra_value + "\"";
  }
  out += '}';
}

}  // namespace

CounterFamily::CounterFamily(std::string name, std::string help, std::vector<std::string> labels)
    : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)) {}

void CounterFamily::add(const LabelValues& values, double amount) {
  if (amount < 0) return;  // counters only go up
  MutexLock lock(mu_);
  values_[values] += amount;
}

double CounterFamily::value(const LabelValues& values) const {
  MutexLock lock(mu_);
  auto it = values_.find(values);
  return it == values_.end() ? 0 : it->second;
}

void CounterFamily::render(std::string& out) const {
  append_header(out, name_, help_, "counter");
  MutexLock lock(mu_);
  for (const auto& [labels, v] : values_) {
    out += name_;
    append_labels(out, labels_, labels);
    out += ' ' + format_number(v) + '\n';
  }
}

CallbackGauge::CallbackGauge(std::string name, std::string help, std::function<double()> read)
    : name_(std::move(name)), help_(std::move(help)), read_(std::move(read)) {}

void CallbackGauge::render(std::string& out) const {
  append_header(out, name_, help_, "gauge");
  out += name_ + ' ' + format_number(read_()) + '\n';
}

CallbackGaugeFamily::CallbackGaugeFamily(std::string name, std::string help, std::vector<std::string> labels, Read read)
    : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)), read_(std::move(read)) {}

void CallbackGaugeFamily::render(std::string& out) const {
  append_header(out, name_, help_, "gauge");
  for (const auto& [values, v] : read_()) {
    out += name_;
    append_labels(out, labels_, values);
    out += ' ' + format_number(v) + '\n';
  }
}

HistogramFamily::HistogramFamily(std::string name, std::string help, std::vector<std::string> labels,
                                 std::vector<double> upper_bounds)
    : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)), bounds_(std::move(upper_bounds)) {}

void HistogramFamily::observe(const LabelValues& values, double v) {
  MutexLock lock(mu_);
  Series& s = series_[values];
  if (s.buckets.empty()) s.buckets.assign(bounds_.size() + 1, 0);
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  s.buckets[i]++;
  s.sum += v;
  s.count++;
}

uint64_t HistogramFamily::count(const LabelValues& values) const {
  MutexLock lock(mu_);
  auto it = series_.find(values);
  return it == series_.end() ? 0 : it->second.count;
}

void HistogramFamily::render(std::string& out) const {
  append_header(out, name_, help_, "histogram");
  MutexLock lock(mu_);
  for (const auto& [labels, s] : series_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      cumulative += s.buckets[i];
      out += name_ + "_bucket";
      append_labels(out, labels_, labels, "le", i < bounds_.size() ? format_number(bounds_[i]) : "+Inf");
      out += ' ' + std::to_string(cumulative) + '\n';
    }
    out += name_ + "_sum";
    append_labels(out, labels_, labels);
    out += ' ' + format_number(s.sum) + '\n';
    out += name_ + "_count";
    append_labels(out, labels_, labels);
    out += ' ' + std::to_string(s.count) + '\n';
  }
}

CounterFamily& MetricsRegistry::counter(const std::string& name, const std::string& help,
                                        std::vector<std::string> labels) {
  auto f = std::make_unique<CounterFamily>(name, help, std::move(labels));
  auto& ref = *f;
  MutexLock lock(mu_);
  families_.push_back(std::move(f));
  return ref;
}

HistogramFamily& MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                            std::vector<std::string> labels, std::vector<double> upper_bounds) {
  auto f = std::make_unique<HistogramFamily>(name, help, std::move(labels), std::move(upper_bounds));
  auto& ref = *f;
  MutexLock lock(mu_);
  families_.push_back(std::move(f));
  return ref;
}

void MetricsRegistry::gauge(const std::string& name, const std::string& help, std::function<double()> read) {
  MutexLock lock(mu_);
  families_.push_back(std::make_unique<CallbackGauge>(name, help, std::move(read)));
}

void MetricsRegistry::gauges(const std::string& name, const std::string& help, std::vector<std::string> labels,
                             CallbackGaugeFamily::Read read) {
  MutexLock lock(mu_);
  families_.push_back(std::make_unique<CallbackGaugeFamily>(name, help, std::move(labels), std::move(read)));
}

std::string MetricsRegistry::render() const {
  std::string out;
  MutexLock lock(mu_);
  for (const auto& f : families_) f->render(out);
  return out;
}

std::vector<double> MetricsRegistry::latency_buckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

}  // namespace berth
