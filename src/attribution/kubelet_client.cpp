// libdiescope-kubelet.so: the gRPC client of the kubelet's pod-resources API, in its own library so
// that diescope itself links no gRPC and starts where gRPC is not installed (docs/attribution.md#kubernetes).
// A C interface: diescope loads it with dlopen and calls the two functions below.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "kubelet_client_abi.h"
#include "podresources_v1.grpc.pb.h"

namespace {

char* copy(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

}  // namespace

extern "C" int diescope_kubelet_list_v1(const char* socket_path, int timeout_ms, char** answer) {
  *answer = nullptr;
  try {
    grpc::ChannelArguments args;
    // One connection attempt: a kubelet that is down must not be retried past the timeout.
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    auto channel = grpc::CreateCustomChannel(std::string("unix://") + socket_path,
                                             grpc::InsecureChannelCredentials(), args);
    auto stub = v1::PodResourcesLister::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
    v1::ListPodResourcesRequest request;
    v1::ListPodResourcesResponse response;
    const grpc::Status status = stub->List(&context, request, &response);
    if (!status.ok()) {
      *answer = copy(std::to_string(static_cast<int>(status.error_code())) + " " + status.error_message());
      return status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? kDiescopeKubeletTimeout
                                                                        : kDiescopeKubeletFailed;
    }
    nlohmann::json out = nlohmann::json::array();
    for (const auto& pod : response.pod_resources()) {
      for (const auto& container : pod.containers()) {
        for (const auto& devices : container.devices()) {
          nlohmann::json ids = nlohmann::json::array();
          for (const auto& id : devices.device_ids()) ids.push_back(id);
          out.push_back({{"pod", pod.name()},
                         {"namespace", pod.namespace_()},
                         {"container", container.name()},
                         {"resource", devices.resource_name()},
                         {"device_ids", ids}});
        }
      }
    }
    // Invalid UTF-8 from a broken kubelet is replaced, not thrown on.
    *answer = copy(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return kDiescopeKubeletOk;
  } catch (const std::exception& e) {
    *answer = copy(e.what());
    return kDiescopeKubeletFailed;
  }
}

extern "C" void diescope_kubelet_free(char* text) {
  std::free(text);
}
