// ListMetricDescriptors: the cAdvisor-named metrics ListPodSandboxMetrics reports, with their
// label keys, so kubelet can describe them on its /metrics/cadvisor endpoint. The list is the same
// on every host (CRI wants it fixed from startup); the PSI and block IO metrics a kernel does not
// give are described but never reported.
#include "berth/cadvisor_metrics.h"
#include "rpc_scope.h"
#include "services.h"

namespace berth {

grpc::Status RuntimeServiceImpl::ListMetricDescriptors(grpc::ServerContext*, const v1::ListMetricDescriptorsRequest*,
                                                       v1::ListMetricDescriptorsResponse* resp) {
  RpcScope scope("ListMetricDescriptors");
  for (const CadvisorMetric& m : cadvisor_metrics()) {
    v1::MetricDescriptor* d = resp->add_descriptors();
    d->set_name(m.name);
    d->set_help(m.help);
    for (auto& key : cadvisor_label_keys(m)) d->add_label_keys(std::move(key));
  }
  return scope.done(ok_status());
}

}  // namespace berth
