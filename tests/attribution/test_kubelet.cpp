// A kubelet for the tests: serves the pod-resources v1 API (the same proto the client is built from)
// on a unix socket, answering List from a file of "namespace pod container device_id[,device_id...]"
// lines. --delay-ms N answers late (the client's timeout); --garbage accepts connections on the socket
// and writes bytes that are not HTTP/2, as a broken or foreign server would.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include "podresources_v1.grpc.pb.h"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) {
  g_stop = true;
}

class Lister final : public v1::PodResourcesLister::Service {
 public:
  Lister(std::string pods_file, int delay_ms) : pods_file_(std::move(pods_file)), delay_ms_(delay_ms) {}
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    // Read at every call, so a test can change the pods while the kubelet runs.
    std::ifstream in(pods_file_);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string ns, pod, container, ids;
      if (!(fields >> ns >> pod >> container >> ids)) continue;
      v1::PodResources* p = response->add_pod_resources();
      p->set_name(pod);
      p->set_namespace_(ns);
      v1::ContainerResources* c = p->add_containers();
      c->set_name(container);
      v1::ContainerDevices* d = c->add_devices();
      d->set_resource_name("nvidia.com/gpu");
      std::istringstream list(ids);
      std::string id;
      while (std::getline(list, id, ',')) d->add_device_ids(id);
      c->add_cpu_ids(0);
    }
    return grpc::Status::OK;
  }

 private:
  std::string pods_file_;
  int delay_ms_;
};

int serve_garbage(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ::unlink(path.c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 8) != 0) {
    std::perror("test kubelet: bind");
    return 1;
  }
  std::printf("listening\n");
  std::fflush(stdout);
  while (!g_stop) {
    const int client = ::accept(fd, nullptr, nullptr);
    if (client < 0) continue;
    const char junk[] = "HTTP/1.1 418 I'm a teapot\r\n\r\n\x01\x02\x03 not gRPC";
    (void)!::write(client, junk, sizeof junk);
    ::close(client);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket, pods;
  int delay_ms = 0;
  bool garbage = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--socket" && i + 1 < argc)
      socket = argv[++i];
    else if (a == "--pods" && i + 1 < argc)
      pods = argv[++i];
    else if (a == "--delay-ms" && i + 1 < argc)
      delay_ms = std::stoi(argv[++i]);
    else if (a == "--garbage")
      garbage = true;
  }
  if (socket.empty()) {
    std::fprintf(stderr,
                 "usage: diescope-test-kubelet --socket PATH [--pods FILE] [--delay-ms N] [--garbage]\n");
    return 2;
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  if (garbage) return serve_garbage(socket);
  ::unlink(socket.c_str());
  Lister service(pods, delay_ms);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "test kubelet: cannot listen on %s\n", socket.c_str());
    return 1;
  }
  std::printf("listening\n");
  std::fflush(stdout);
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  ::unlink(socket.c_str());
  return 0;
}
