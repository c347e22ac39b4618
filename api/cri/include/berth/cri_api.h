// The CRI v1 gRPC services and their messages: for server/ (which serves them) and CRI clients
// (tests, benchmarks). Modules that only build or read messages include cri_messages.h, which
// does not bring gRPC along.
#pragma once

#include "berth/cri_messages.h"
#include "cri/api.grpc.pb.h"
