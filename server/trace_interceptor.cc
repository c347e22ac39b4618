// See trace_interceptor.h.
#include "trace_interceptor.h"

#include <string_view>

namespace berth {

namespace {

thread_local std::optional<TraceContext> t_caller;

class TraceparentInterceptor final : public grpc::experimental::Interceptor {
 public:
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      t_caller.reset();
      if (auto* md = methods->GetRecvInitialMetadata()) {
        auto it = md->find("traceparent");
        if (it != md->end()) t_caller = parse_traceparent(std::string_view(it->second.data(), it->second.size()));
      }
    }
    methods->Proceed();
  }
};

class Factory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo*) override {
    return new TraceparentInterceptor();
  }
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> make_traceparent_interceptor_factory() {
  return std::make_unique<Factory>();
}

std::optional<TraceContext> take_caller_trace() {
  std::optional<TraceContext> out = std::move(t_caller);
  t_caller.reset();
  return out;
}

}  // namespace berth
