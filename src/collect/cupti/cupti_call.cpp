#include "cupti_call.hpp"

#include <fmt/format.h>

#include <string_view>

namespace diescope::collect::cupti {

namespace {

std::string cause_of(CUptiResult result, const std::string& call, const std::string& location) {
  return fmt::format("{} failed at {}: {}", call, location, result_text(result));
}

std::string file_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

CuptiError::CuptiError(CUptiResult result, std::string call, std::string location)
    : DeviceError(cause_of(result, call, location), fix_for(result)),
      result_(result),
      call_(std::move(call)),
      location_(std::move(location)),
      result_name_(cupti::result_name(result)) {}

std::string result_name(CUptiResult result) {
  const char* name = nullptr;
  if (cuptiGetResultString(result, &name) == CUPTI_SUCCESS && name && *name) return name;
  return fmt::format("CUPTI result {}", static_cast<int>(result));
}

std::string result_text(CUptiResult result) {
  std::string text = result_name(result);
  const char* message = nullptr;
  if (cuptiGetErrorMessage(result, &message) != CUPTI_SUCCESS || !message) return text;
  // One line (CUPTI ends some with a newline), and nothing when it only repeats the name.
  std::string sentence = message;
  for (char& c : sentence)
    if (c == '\n' || c == '\r') c = ' ';
  sentence.erase(sentence.find_last_not_of(' ') + 1);
  if (!sentence.empty() && sentence != text) text += fmt::format(" ({})", sentence);
  return text;
}

std::string fix_for(CUptiResult result) {
  switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "run as root, or let users read GPU counters (NVreg_RestrictProfilingToAdminUsers=0 in the "
             "nvidia "
             "module's options, then reload the driver)";
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return "another profiler (Nsight Compute or Systems, DCGM) holds the counters: stop it and run again";
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      return "use a chip name from `diescope-cupti list-chips`, e.g. GH100";
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      return "check the metric names against `diescope-cupti list-metrics --chip CHIP`";
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_INVALID_DEVICE:
      return "check that nvidia-smi lists the GPU and that its driver is loaded";
    default:
      return "check the chip and metric names (diescope-cupti list-chips, diescope-cupti list-metrics --chip "
             "CHIP) "
             "and that the driver is as new as the CUDA toolkit whose CUPTI diescope-cupti links";
  }
}

void check(CUptiResult result, const char* call, const char* file, int line) {
  if (result == CUPTI_SUCCESS) return;
  throw CuptiError(result, call, fmt::format("{}:{}", file_name(file), line));
}

std::vector<std::uint8_t> config_image(CUpti_Profiler_Host_Object* host) {
  auto size = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  size.pHostObject = host;
  DIESCOPE_CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
  std::vector<std::uint8_t> image(size.configImageSize);
  auto get = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  get.pHostObject = host;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  DIESCOPE_CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&get));
  return image;
}

std::size_t pass_count(std::vector<std::uint8_t>& image) {
  auto passes = DIESCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  passes.configImageSize = image.size();
  passes.pConfigImage = image.data();
  DIESCOPE_CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&passes));
  return passes.numOfPasses;
}

}  // namespace diescope::collect::cupti
