// Calling CUPTI, the one way every part that does uses: the PM sampler (src/collect/pmsampling), the
// host API of diescope-cupti (src/collect/cupti_host) and the harness's range collector
// (src/harness/cuda). A parameter struct is made zeroed with its size set; a call is checked with
// DIESCOPE_CUPTI_CHECK, which throws CuptiError naming the call as written, its file:line and
// CUPTI's name for the result. Private to the project: CUPTI's headers stay out of include/.
#pragma once

#include <cupti_profiler_host.h>
#include <cupti_result.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "diescope/core/error.hpp"

namespace diescope::collect::cupti {

// A CUPTI call that did not return CUPTI_SUCCESS. The cause reads
// "cuptiProfilerInitialize(&params) failed at cupti_sampler.cpp:241: CUPTI_ERROR_... (CUPTI's text)";
// the fix follows from the result (permission, a busy counter unit, a chip or metric name, ...).
class CuptiError : public core::DeviceError {
 public:
  CuptiError(CUptiResult result, std::string call, std::string location);
  CUptiResult result() const { return result_; }
  const std::string& call() const { return call_; }
  const std::string& location() const { return location_; }  // "file.cpp:123", the file without its folder
  const std::string& result_name() const { return result_name_; }

 private:
  CUptiResult result_;
  std::string call_;
  std::string location_;
  std::string result_name_;
};

// CUPTI's name for a result, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; "CUPTI result N" when it has none.
std::string result_name(CUptiResult result);
// The name and CUPTI's own sentence for it, when it has one.
std::string result_text(CUptiResult result);
// What to do about a failed call, by its result.
std::string fix_for(CUptiResult result);

// Throws CuptiError unless `result` is CUPTI_SUCCESS. Call through DIESCOPE_CUPTI_CHECK.
void check(CUptiResult result, const char* call, const char* file, int line);

// Every CUPTI parameter struct starts with its size, which CUPTI reads to tell versions apart.
template <typename Params>
Params make_params(std::size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}

// The configuration image of the metrics added to `host` so far. Throws CuptiError.
std::vector<std::uint8_t> config_image(CUpti_Profiler_Host_Object* host);
// The hardware passes a configuration image needs. Throws CuptiError.
std::size_t pass_count(std::vector<std::uint8_t>& image);

}  // namespace diescope::collect::cupti

#define DIESCOPE_CUPTI_CHECK(call) ::diescope::collect::cupti::check((call), #call, __FILE__, __LINE__)
// A zeroed `type` (e.g. CUpti_Profiler_Initialize_Params) with its structSize set.
#define DIESCOPE_CUPTI_PARAMS(type) ::diescope::collect::cupti::make_params<type>(type##_STRUCT_SIZE)
