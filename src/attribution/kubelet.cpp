// docs/attribution.md#kubernetes
#include "diescope/attribution/kubelet.hpp"

#include <dlfcn.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kubelet_client_abi.h"

namespace diescope::attribution {
namespace {

struct Client {
  int (*list)(const char*, int, char**) = nullptr;
  void (*release)(char*) = nullptr;
  KubeletClientLoad load;
};

// Loaded once and never closed: gRPC keeps threads of its own that must not outlive their code.
const Client& client() {
  static const Client c = [] {
    Client out;
    std::vector<std::string> tried;
    std::vector<std::string> names;
    if (const char* env = std::getenv("DIESCOPE_KUBELET_CLIENT"); env && *env) names.emplace_back(env);
    char exe[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
      std::string dir(exe, static_cast<std::size_t>(n));
      dir = dir.substr(0, dir.rfind('/'));
      names.push_back(dir + "/libdiescope-kubelet.so");
    }
    names.emplace_back("libdiescope-kubelet.so");
    for (const std::string& name : names) {
      void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        const char* why = ::dlerror();
        tried.push_back(why ? why : name);
        continue;
      }
      out.list =
          reinterpret_cast<int (*)(const char*, int, char**)>(::dlsym(handle, "diescope_kubelet_list_v1"));
      out.release = reinterpret_cast<void (*)(char*)>(::dlsym(handle, "diescope_kubelet_free"));
      if (out.list && out.release) {
        out.load.path = name;
        return out;
      }
      tried.push_back(name + " lacks diescope_kubelet_list_v1");
      out.list = nullptr;
    }
    std::string all;
    for (const std::string& t : tried) all += (all.empty() ? "" : "; ") + t;
    out.load.why =
        "the kubelet client libdiescope-kubelet.so could not be loaded (" + all +
        "): install it beside diescope with the gRPC libraries it needs (docs/attribution.md#kubernetes)";
    return out;
  }();
  return c;
}

}  // namespace

KubeletClientLoad kubelet_client_library() {
  return client().load;
}

PodResources list_pod_resources(const std::string& socket_path, std::chrono::milliseconds timeout) {
  PodResources out;
  struct stat st {};
  if (::stat(socket_path.c_str(), &st) != 0) {
    out.status = PodResources::Status::no_socket;
    out.note = "no kubelet pod-resources socket at " + socket_path +
               ": pods are named by the pod UID in their cgroup path only";
    return out;
  }
  if (!S_ISSOCK(st.st_mode)) {
    out.status = PodResources::Status::failed;
    out.note = socket_path + " is not a socket: pods are named by the pod UID in their cgroup path only";
    return out;
  }
  const Client& c = client();
  if (!c.list) {
    out.status = PodResources::Status::no_client;
    out.note = c.load.why + "; pods are named by the pod UID in their cgroup path only";
    return out;
  }
  char* answer = nullptr;
  const int rc = c.list(socket_path.c_str(), static_cast<int>(timeout.count()), &answer);
  const std::string text = answer ? answer : "";
  c.release(answer);
  if (rc == kDiescopeKubeletTimeout) {
    out.status = PodResources::Status::timeout;
    out.note = fmt::format(
        "the kubelet at {} did not answer within {} ms: pods are named by the pod UID in "
        "their cgroup path until it does",
        socket_path, timeout.count());
    return out;
  }
  if (rc != kDiescopeKubeletOk) {
    out.status = PodResources::Status::failed;
    out.note = fmt::format(
        "the kubelet at {} did not answer v1.PodResourcesLister/List (gRPC status {}): pods "
        "are named by the pod UID in their cgroup path",
        socket_path, text.substr(0, 300));
    return out;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    for (const auto& e : j) {
      PodContainerDevices d;
      d.pod = e.at("pod").get<std::string>();
      d.pod_namespace = e.at("namespace").get<std::string>();
      d.container = e.at("container").get<std::string>();
      d.resource = e.at("resource").get<std::string>();
      d.device_ids = e.at("device_ids").get<std::vector<std::string>>();
      out.containers.push_back(std::move(d));
    }
    out.status = PodResources::Status::ok;
  } catch (const std::exception& e) {
    out.containers.clear();
    out.status = PodResources::Status::failed;
    out.note = std::string("the kubelet client's answer could not be read: ") + e.what();
  }
  return out;
}

KubeletWatch::KubeletWatch(std::string socket_path, std::chrono::milliseconds timeout,
                           std::chrono::milliseconds refresh)
    : socket_path_(std::move(socket_path)),
      timeout_(timeout),
      refresh_(refresh),
      latest_(std::make_shared<const PodResources>()),
      thread_([this] { loop(); }) {}

KubeletWatch::~KubeletWatch() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  // A call in flight ends at its own timeout.
  thread_.join();
}

std::shared_ptr<const PodResources> KubeletWatch::snapshot() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

void KubeletWatch::refresh_soon() {
  {
    std::lock_guard lock(mutex_);
    asked_ = true;
  }
  wake_.notify_all();
}

long KubeletWatch::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

void KubeletWatch::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    lock.unlock();
    auto answer = std::make_shared<const PodResources>(list_pod_resources(socket_path_, timeout_));
    lock.lock();
    latest_ = std::move(answer);
    ++calls_;
    asked_ = false;
    // A refresh asked for during the call waits a second at least, so a process the kubelet does
    // not know (run outside Kubernetes) cannot make it ask without pause.
    wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
    wake_.wait_for(lock, refresh_, [this] { return stop_ || asked_; });
  }
}

}  // namespace diescope::attribution
