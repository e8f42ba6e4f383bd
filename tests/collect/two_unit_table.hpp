// A unit table of two made-up units (A, B) on a made-up chip, for the session and agent tests that run the
// fake sampler: its columns match what diescope_sampler_fake writes.
#pragma once

#include "diescope/collect/unit_tables.hpp"
#include "diescope/recording/records.hpp"

namespace diescope::test {

inline const collect::UnitTable& two_unit_table() {
  static const collect::UnitTable table = [] {
    collect::UnitTable t;
    t.name = "test-two-units";
    t.chips = {"FAKE"};
    t.compute_capabilities = {90};
    recording::ColumnDef a;
    a.key = "a";
    a.label = "A";
    a.metric = "m_a";
    a.recipe.counters = {"m_a"};
    recording::ColumnDef b = a;
    b.key = "b";
    b.label = "B";
    b.metric = "m_b";
    b.recipe.counters = {"m_b"};
    t.units = {a, b};
    return t;
  }();
  return table;
}

// The identity every NVML stand-in of the live-session tests reports: one GPU, compute capability 9.0.
inline recording::GpuIdentity fake_gpu_identity() {
  recording::GpuIdentity id;
  id.index = 0;
  id.uuid = "GPU-fake-0";
  id.model = "diescope fake GPU";
  id.compute_capability = 90;
  return id;
}

}  // namespace diescope::test
