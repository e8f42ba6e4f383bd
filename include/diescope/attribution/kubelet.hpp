// The kubelet's pod-resources API (docs/attribution.md#kubernetes): `v1.PodResourcesLister/List` on
// its unix socket names, per pod and container, the device IDs of each resource (nvidia.com/gpu: GPU
// or MIG UUIDs). The gRPC client lives in libdiescope-kubelet.so beside diescope, loaded at run time,
// so diescope starts where gRPC is not installed and says so.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace diescope::attribution {

inline constexpr const char* kKubeletSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";
inline constexpr std::chrono::milliseconds kKubeletTimeout{1000};
inline constexpr std::chrono::milliseconds kKubeletRefresh{30000};

struct PodContainerDevices {
  std::string pod;
  std::string pod_namespace;
  std::string container;
  std::string resource;  // "nvidia.com/gpu"
  std::vector<std::string> device_ids;
};

struct PodResources {
  enum class Status {
    not_asked,  // no answer yet
    ok,
    no_socket,  // nothing at the socket path: not a Kubernetes node, or the kubelet is down
    no_client,  // libdiescope-kubelet.so (or the gRPC libraries it needs) could not be loaded
    timeout,    // no answer within the timeout
    failed,     // the call failed (refused, reset, not gRPC, not this API)
  };
  Status status = Status::not_asked;
  std::vector<PodContainerDevices> containers;
  std::string note;  // for every status but ok: what happened and what it means for the labels
};

// One List call, bounded by `timeout`. Never throws.
PodResources list_pod_resources(const std::string& socket_path, std::chrono::milliseconds timeout);
// The client library's path, or why it could not be loaded (empty `why` when loaded).
struct KubeletClientLoad {
  std::string path;
  std::string why;
};
KubeletClientLoad kubelet_client_library();

// Asks the kubelet on its own thread, every `refresh` and whenever asked, so that a slow or missing
// kubelet never holds up whoever reads the answer: snapshot() returns the latest answer at once.
class KubeletWatch {
 public:
  KubeletWatch(std::string socket_path, std::chrono::milliseconds timeout, std::chrono::milliseconds refresh);
  ~KubeletWatch();
  KubeletWatch(const KubeletWatch&) = delete;
  KubeletWatch& operator=(const KubeletWatch&) = delete;

  std::shared_ptr<const PodResources> snapshot() const;
  // Asks again soon (a process appeared that the latest answer does not name). Never waits.
  void refresh_soon();
  long calls() const;

 private:
  void loop();
  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds refresh_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<const PodResources> latest_;
  bool stop_ = false;
  bool asked_ = false;
  long calls_ = 0;
  std::thread thread_;
};

}  // namespace diescope::attribution
