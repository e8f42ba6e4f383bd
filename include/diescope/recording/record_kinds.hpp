// Every record kind, listed once. The code that treats all kinds alike goes over these lists
// instead of naming each kind: a sink's write(), a source's streams, the memory recording, the
// agent's batch, and the writer's and reader's dispatch by kind. Adding a kind means adding it here
// plus its own code (docs/recording-format.md#adding-a-record-kind).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "diescope/recording/records.hpp"

namespace diescope::recording {

template <typename... Ts>
struct TypeList {
  static constexpr std::size_t size = sizeof...(Ts);
};

// The high-rate kinds: each is read through a cursor of its own (Recording::stream<R>()).
using StreamKinds = TypeList<ChipSample, UtilSample, ClockReading, ThrottleReading, PowerLimitReading,
                             EngineReading, ProcessReading, HostSample>;
// The low-rate kinds: loaded whole when a recording is opened (SideRecords).
using SideKinds = TypeList<Mark, CountersEvent, Note, ClockJump, HostStream, HostTask, GpuHolder, RunEnd>;

namespace kinds_detail {
template <typename A, typename B>
struct Concat;
template <typename... As, typename... Bs>
struct Concat<TypeList<As...>, TypeList<Bs...>> {
  using type = TypeList<As..., Bs...>;
};

template <typename T, typename List>
struct IndexOf;
template <typename T, typename... Ts>
struct IndexOf<T, TypeList<Ts...>> {
  // The first place T holds in the list; the list's size when it is not there.
  static constexpr std::size_t value = [] {
    constexpr std::array<bool, sizeof...(Ts)> same = {std::is_same_v<T, Ts>...};
    for (std::size_t i = 0; i < same.size(); ++i)
      if (same[i]) return i;
    return same.size();
  }();
};

template <template <typename...> class Outer, template <typename> class Per, typename List>
struct PerKind;
template <template <typename...> class Outer, template <typename> class Per, typename... Rs>
struct PerKind<Outer, Per, TypeList<Rs...>> {
  using type = Outer<Per<Rs>...>;
};
}  // namespace kinds_detail

// Every kind, in the order of docs/recording-format.md, the streams first. A kind's index is its
// place here.
using RecordKinds = kinds_detail::Concat<StreamKinds, SideKinds>::type;
inline constexpr std::size_t kKindCount = RecordKinds::size;

template <typename R, typename List = RecordKinds>
inline constexpr std::size_t kind_index = kinds_detail::IndexOf<R, List>::value;
template <typename R>
inline constexpr bool is_record_kind = kind_index<R> < kKindCount;
template <typename R>
inline constexpr bool is_stream_kind = kind_index<R, StreamKinds> < StreamKinds::size;

// Outer<Per<R>...> over the kinds of List, e.g. a std::variant with one alternative per stream kind:
// PerKind<std::variant, std::type_identity, StreamKinds>.
template <template <typename...> class Outer, template <typename> class Per, typename List>
using PerKind = typename kinds_detail::PerKind<Outer, Per, List>::type;

// Calls f(std::type_identity<R>{}) for each kind R of List, in order.
template <typename List, typename F>
constexpr void for_each_kind(F&& f) {
  [&]<typename... Rs>(TypeList<Rs...>) { (f(std::type_identity<Rs>{}), ...); }(List{});
}

// Calls f(std::type_identity<R>{}) for the kind R at `index` of List; nothing when index is past it.
template <typename List, typename F>
constexpr void with_kind_at(std::size_t index, F&& f) {
  [&]<typename... Rs>(TypeList<Rs...>) {
    std::size_t i = 0;
    (void)((i++ == index ? (f(std::type_identity<Rs>{}), true) : false) || ...);
  }(List{});
}

// Each kind's first word on a recording line, by kind index: "chip", "util", ...
inline constexpr std::array<std::string_view, kKindCount> kKindWords = []<typename... Rs>(TypeList<Rs...>) {
  return std::array<std::string_view, kKindCount>{Rs::kKindWord...};
}(RecordKinds{});

// ---- owning forms --------------------------------------------------------------------------------
// A kind whose record holds views (ChipSample, EngineReading) is stored as an owning copy; every
// other kind is its own owning form.

template <typename R>
struct OwnedFormOf {
  using type = R;
};
template <>
struct OwnedFormOf<ChipSample> {
  using type = OwnedChipSample;
};
template <>
struct OwnedFormOf<EngineReading> {
  using type = OwnedEngineReading;
};
template <>
struct OwnedFormOf<HostSample> {
  using type = OwnedHostSample;
};
template <typename R>
using Owned = typename OwnedFormOf<R>::type;

// The owning copy of a record, and the record (with views into the copy) back.
template <typename R>
const R& owned_copy(const R& record) {
  return record;
}
inline OwnedChipSample owned_copy(const ChipSample& s) {
  return OwnedChipSample{s.start_ns,
                         s.end_ns,
                         {s.units.begin(), s.units.end()},
                         {s.diagnostics.begin(), s.diagnostics.end()},
                         {s.counts.begin(), s.counts.end()}};
}
inline OwnedEngineReading owned_copy(const EngineReading& r) {
  return OwnedEngineReading{r.ts_ns, {r.values.begin(), r.values.end()}};
}
inline OwnedHostSample owned_copy(const HostSample& s) {
  return OwnedHostSample{s.ts_ns, {s.values.begin(), s.values.end()}};
}
template <typename R>
const R& view_of(const R& record) {
  return record;
}
inline ChipSample view_of(const OwnedChipSample& s) {
  return ChipSample{s.start_ns, s.end_ns, s.units, s.diagnostics, s.counts};
}
inline EngineReading view_of(const OwnedEngineReading& r) {
  return EngineReading{r.ts_ns, r.values};
}
inline HostSample view_of(const OwnedHostSample& s) {
  return HostSample{s.ts_ns, s.values};
}

// ---- times ---------------------------------------------------------------------------------------

// The time that orders a kind's records (docs/recording-format.md, "Order"): a chip sample's start.
template <typename R>
TimeNs order_time(const R& record) {
  return record.ts_ns;
}
inline TimeNs order_time(const ChipSample& s) {
  return s.start_ns;
}
inline TimeNs order_time(const OwnedChipSample& s) {
  return s.start_ns;
}

// The latest time a record reaches, which a recording's last time follows: a chip sample's end.
template <typename R>
TimeNs last_time(const R& record) {
  return record.ts_ns;
}
inline TimeNs last_time(const ChipSample& s) {
  return s.end_ns;
}
inline TimeNs last_time(const OwnedChipSample& s) {
  return s.end_ns;
}

}  // namespace diescope::recording
