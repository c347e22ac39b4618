// MetricsRegistry: berthd's Prometheus counters, gauges and histograms (rpc counts and latency,
// image pull bytes and durations, sandbox start latency, CNI exec durations and ETXTBSY retries,
// running containers and sandboxes), rendered in the Prometheus text format 0.0.4.
// Written by hand: Debian has no prometheus-cpp, and the text format is a page long.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <string>
#include <vector>

#include "berth/mutex.h"

namespace berth {

using LabelValues = std::vector<std::string>;

class MetricFamily {
 public:
  virtual ~MetricFamily() = default;
  virtual void render(std::string& out) const = 0;
};

class CounterFamily final : public MetricFamily {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> labels);
  void add(const LabelValues& values, double amount = 1);
  double value(const LabelValues& values) const;
  void render(std::string& out) const override;

 private:
  std::string name_, help_;
  std::vector<std::string> labels_;
  mutable Mutex mu_;
  std::map<LabelValues, double> values_ BERTH_GUARDED_BY(mu_);
};

// A gauge whose value is read when scraped (running containers, sandboxes).
class CallbackGauge final : public MetricFamily {
 public:
  CallbackGauge(std::string name, std::string help, std::function<double()> read);
  void render(std::string& out) const override;

 private:
  std::string name_, help_;
  std::function<double()> read_;
};

// Gauges with labels, every series read when scraped (the pulls running now): a series the read
// no longer returns is gone from the output.
class CallbackGaugeFamily final : public MetricFamily {
 public:
  using Read = std::function<std::vector<std::pair<LabelValues, double>>()>;
  CallbackGaugeFamily(std::string name, std::string help, std::vector<std::string> labels, Read read);
  void render(std::string& out) const override;

 private:
  std::string name_, help_;
  std::vector<std::string> labels_;
  Read read_;
};

class HistogramFamily final : public MetricFamily {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> labels,
                  std::vector<double> upper_bounds);
  void observe(const LabelValues& values, double v);
  uint64_t count(const LabelValues& values) const;
  void render(std::string& out) const override;

 private:
  struct Series {
    std::vector<uint64_t> buckets;  // per bound, not cumulative; the last one is +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  std::string name_, help_;
  std::vector<std::string> labels_;
  std::vector<double> bounds_;
  mutable Mutex mu_;
  std::map<LabelValues, Series> series_ BERTH_GUARDED_BY(mu_);
};

class MetricsRegistry {
 public:
  CounterFamily& counter(const std::string& name, const std::string& help, std::vector<std::string> labels);
  HistogramFamily& histogram(const std::string& name, const std::string& help, std::vector<std::string> labels,
                             std::vector<double> upper_bounds);
  void gauge(const std::string& name, const std::string& help, std::function<double()> read);
  void gauges(const std::string& name, const std::string& help, std::vector<std::string> labels,
              CallbackGaugeFamily::Read read);
  std::string render() const;

  // Latency buckets in seconds suited to rpcs and plugin execs (0.5 ms .. 60 s).
  static std::vector<double> latency_buckets();

 private:
  mutable Mutex mu_;
  std::vector<std::unique_ptr<MetricFamily>> families_ BERTH_GUARDED_BY(mu_);  // registration order = output order
};

}  // namespace berth
