// A cgroup's PSI as CRI's PsiStats: the kernel counts stall time in microseconds, CRI's
// PsiData.Total is nanoseconds (as the CRI proto says and containerd sends).
#pragma once

#include "berth/cgroup_pressure.h"
#include "berth/cri_messages.h"

namespace berth {

// Sets Some and Full for the lines the kernel gave; a missing line leaves its field unset.
void pressure_to_cri(const Pressure& p, runtime::v1::PsiStats* out);

// Kernel microseconds as CRI nanoseconds, stopping at the top rather than wrapping.
uint64_t psi_total_ns(uint64_t total_us);

}  // namespace berth
