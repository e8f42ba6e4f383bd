/* The C interface of libdiescope-kubelet.so (docs/attribution.md#kubernetes). */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

enum { kDiescopeKubeletOk = 0, kDiescopeKubeletTimeout = 1, kDiescopeKubeletFailed = 2 };

/* One List call on the unix socket, bounded by timeout_ms. *answer (free with diescope_kubelet_free):
 * a JSON array of {pod, namespace, container, resource, device_ids} when it returns kDiescopeKubeletOk,
 * else "<gRPC status code> <message>". */
int diescope_kubelet_list_v1(const char* socket_path, int timeout_ms, char** answer);
void diescope_kubelet_free(char* text);

#ifdef __cplusplus
}
#endif
