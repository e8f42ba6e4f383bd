// Writing figures into the report under its invariant: a figure that is not available is null,
// with "<key>_reason" beside it saying why.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace diescope::report {

inline void put_null(nlohmann::json& o, const std::string& key, std::string_view reason) {
  o[key] = nullptr;
  o[key + "_reason"] = reason.empty() ? std::string("not available") : std::string(reason);
}

inline void put_number(nlohmann::json& o, const std::string& key, double value, std::string_view reason) {
  if (std::isfinite(value))
    o[key] = value;
  else
    put_null(o, key, reason);
}

template <typename Int>
inline void put_int(nlohmann::json& o, const std::string& key, Int value, bool known,
                    std::string_view reason) {
  if (known)
    o[key] = value;
  else
    put_null(o, key, reason);
}

// Headline figures are whole tenths; the file shows them as points with one decimal.
inline void put_tenths(nlohmann::json& o, const std::string& key, const std::optional<int>& tenths,
                       std::string_view reason) {
  if (tenths)
    o[key] = static_cast<double>(*tenths) / 10.0;
  else
    put_null(o, key, reason);
}

}  // namespace diescope::report
