// The duty schedule of the live session (docs/live-collection.md#duty-phases): counters on for the first
// on_ms of every period_ms counted from the schedule's start, off for the rest. `run --duty` and the
// agent share it; DutyPhase names the two phases in one place.
#pragma once

#include <optional>
#include <string_view>

#include "diescope/recording/records.hpp"

namespace diescope::collect {

enum class DutyPhase { on, off };

constexpr std::string_view duty_phase_name(DutyPhase phase) {
  return phase == DutyPhase::on ? "on" : "off";
}

constexpr std::optional<DutyPhase> duty_phase_from_name(std::string_view name) {
  for (DutyPhase phase : {DutyPhase::on, DutyPhase::off})
    if (duty_phase_name(phase) == name) return phase;
  return std::nullopt;
}

struct DutyCycle {
  double on_ms = 0;
  double period_ms = 0;

  // Whether the counters go off at all: both 0, or on at least the period, is always on.
  bool cycles() const { return on_ms > 0 && period_ms > on_ms; }
  recording::TimeNs on_ns() const { return static_cast<recording::TimeNs>(on_ms * 1e6); }
  recording::TimeNs period_ns() const { return static_cast<recording::TimeNs>(period_ms * 1e6); }
  // The period `since_ns` after the start falls in (0 for the first); 0 when it does not cycle.
  long period_at(recording::TimeNs since_ns) const {
    return cycles() && since_ns > 0 ? static_cast<long>(since_ns / period_ns()) : 0;
  }
  // The phase `since_ns` after the start; on throughout when it does not cycle.
  DutyPhase phase_at(recording::TimeNs since_ns) const {
    if (!cycles()) return DutyPhase::on;
    const recording::TimeNs into = since_ns > 0 ? since_ns % period_ns() : 0;
    return into < on_ns() ? DutyPhase::on : DutyPhase::off;
  }
};

}  // namespace diescope::collect
