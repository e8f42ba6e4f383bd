// A group of benchmarks that share one context and one measurement domain (docs/harness.md#groups):
// the context (a stream, device buffers, a library handle) is made once, when the group's first
// benchmark first needs it, and every member runs in the group's domain with a backend the group
// makes from that context (events on the context's stream, for instance).
//
//   Group<Gpu> g("copies", [] { return std::make_unique<Gpu>(); });
//   g.domain(MeasurementDomain::gpu).backend([](Gpu& gpu) { return make_event_backend(gpu.stream); });
//   g.add("kernel", [](Gpu& gpu, State& s) { ... });
//   g.add_sampled("memcpy", [](Gpu& gpu, State& s) { ...; return SampleResult::of_operations(n); });
//   return bench_main(argc, argv, g.benchmarks());
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "diescope/harness/backend.hpp"
#include "diescope/harness/benchmark.hpp"
#include "diescope/harness/domain.hpp"

namespace diescope::harness {

template <typename Context>
class Group {
 public:
  using ContextFactory = std::function<std::unique_ptr<Context>()>;
  using ContextBackend = std::function<std::unique_ptr<MeasurementBackend>(Context&)>;

  Group(std::string name, ContextFactory make_context)
      : name_(std::move(name)), shared_(std::make_shared<Shared>(std::move(make_context))) {}

  // The domain and backend of every member, set before or after adding them.
  Group& domain(MeasurementDomain domain) {
    domain_ = domain;
    for (Benchmark& b : members_) b.domain(domain);
    return *this;
  }
  Group& backend(ContextBackend make_backend) {
    backend_ = std::move(make_backend);
    for (Benchmark& b : members_) apply_backend(b);
    return *this;
  }

  // A member named "<group>/<name>"; the returned benchmark can be configured further.
  Benchmark& add(std::string name, std::function<void(Context&, State&)> function) {
    std::shared_ptr<Shared> shared = shared_;
    members_.emplace_back(name_ + "/" + name,
                          [shared, function = std::move(function)](State& s) { function(shared->get(), s); });
    return configure(members_.back());
  }
  Benchmark& add_sampled(std::string name, std::function<SampleResult(Context&, State&)> function) {
    std::shared_ptr<Shared> shared = shared_;
    members_.push_back(Benchmark::sampled(
        name_ + "/" + name,
        [shared, function = std::move(function)](State& s) { return function(shared->get(), s); }));
    return configure(members_.back());
  }

  // The members, for bench_main or run_benchmarks.
  std::vector<Benchmark> benchmarks() const { return {members_.begin(), members_.end()}; }
  // The shared context, made on first use (tests and examples read it back).
  Context& context() { return shared_->get(); }
  bool context_made() const { return shared_->made(); }

 private:
  // Made once, on first use, whichever member (or worker thread) asks first.
  struct Shared {
    explicit Shared(ContextFactory f) : factory(std::move(f)) {}
    Context& get() {
      std::call_once(once, [this] { context = factory(); });
      return *context;
    }
    bool made() const { return context != nullptr; }
    ContextFactory factory;
    std::once_flag once;
    std::unique_ptr<Context> context;
  };

  Benchmark& configure(Benchmark& b) {
    b.domain(domain_);
    if (backend_) apply_backend(b);
    return b;
  }
  void apply_backend(Benchmark& b) {
    std::shared_ptr<Shared> shared = shared_;
    ContextBackend make = backend_;
    b.backend([shared, make] { return make(shared->get()); });
  }

  std::string name_;
  std::shared_ptr<Shared> shared_;
  MeasurementDomain domain_ = MeasurementDomain::cpu;
  ContextBackend backend_;
  std::deque<Benchmark> members_;  // a deque: add() hands out references that later adds keep valid
};

}  // namespace diescope::harness
