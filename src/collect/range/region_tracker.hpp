// Which NVTX region is current, from the push/pop and start/end events the injection library sees
// (docs/roofline.md#the-range-profiler). Pure and header-only: the injection library (which runs
// inside the profiled program and links nothing of diescope's static parts) and the CPU tests share
// it.
//
// The rule: the current region is the innermost push/pop range of the thread that sent the latest
// NVTX event, else the latest start/end range still open, else none. Each push or start opens a new
// occurrence of its name, numbered from 1 per name, so the runs of several pass groups merge by name
// and number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace diescope::collect::range {

// The name of one CUPTI counter range: the region's (or "(outside)") and a number of its own. CUPTI's
// range profiler keeps one node per range name, so a name pushed again (a region's next occurrence, a
// second segment of the same one) would fold into the earlier node, and the last range in the buffer
// would be another one's: every range gets a name no other has (docs/roofline.md#the-range-profiler).
inline std::string cupti_range_name(const std::string& region, std::uint64_t serial) {
  return (region.empty() ? std::string("(outside)") : region) + " #" + std::to_string(serial);
}

struct Occurrence {
  std::string name;
  long number = 0;  // 1 for the first time this name opened, 2 for the second, ...
  bool open = true;
};

// What one NVTX event did.
struct Change {
  std::optional<std::size_t> before;  // the current occurrence before the event
  std::optional<std::size_t> after;   // and after it
  std::vector<std::size_t> ended;     // occurrences the event closed
  bool unmatched = false;             // a pop with nothing pushed, an end of an unknown id
  bool changed() const { return before != after; }
};

class RegionTracker {
 public:
  Change push(std::uint64_t thread, const std::string& name) {
    return apply(thread, [&](Change&) { stacks_[thread].push_back(open(name)); });
  }
  Change pop(std::uint64_t thread) {
    return apply(thread, [&](Change& c) {
      auto& stack = stacks_[thread];
      if (stack.empty()) {
        c.unmatched = true;
        return;
      }
      close(stack.back(), c);
      stack.pop_back();
    });
  }
  Change start(std::uint64_t thread, std::uint64_t id, const std::string& name) {
    return apply(thread, [&](Change&) { started_.emplace_back(id, open(name)); });
  }
  Change end(std::uint64_t thread, std::uint64_t id) {
    return apply(thread, [&](Change& c) {
      for (auto it = started_.begin(); it != started_.end(); ++it) {
        if (it->first != id) continue;
        close(it->second, c);
        started_.erase(it);
        return;
      }
      c.unmatched = true;
    });
  }

  std::optional<std::size_t> current() const {
    const auto it = stacks_.find(last_thread_);
    if (it != stacks_.end() && !it->second.empty()) return it->second.back();
    if (!started_.empty()) return started_.back().second;
    return std::nullopt;
  }
  const Occurrence& occurrence(std::size_t i) const { return occurrences_[i]; }
  std::size_t size() const { return occurrences_.size(); }
  // Occurrences still open, in the order they opened.
  std::vector<std::size_t> still_open() const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < occurrences_.size(); ++i)
      if (occurrences_[i].open) out.push_back(i);
    return out;
  }

 private:
  template <class F>
  Change apply(std::uint64_t thread, F&& f) {
    Change c;
    c.before = current();
    last_thread_ = thread;
    f(c);
    c.after = current();
    return c;
  }
  std::size_t open(const std::string& name) {
    occurrences_.push_back(Occurrence{name, ++counts_[name], true});
    return occurrences_.size() - 1;
  }
  void close(std::size_t i, Change& c) {
    occurrences_[i].open = false;
    c.ended.push_back(i);
  }

  std::vector<Occurrence> occurrences_;
  std::map<std::string, long> counts_;
  std::map<std::uint64_t, std::vector<std::size_t>> stacks_;
  std::vector<std::pair<std::uint64_t, std::size_t>> started_;  // start/end ranges, in start order
  std::uint64_t last_thread_ = 0;
};

}  // namespace diescope::collect::range
