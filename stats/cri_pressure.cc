// PSI figures into CRI messages; see cri_pressure.h.
#include "berth/cri_pressure.h"

#include <cstdint>

namespace berth {

uint64_t psi_total_ns(uint64_t total_us) { return total_us > UINT64_MAX / 1000 ? UINT64_MAX : total_us * 1000; }

static void psi_data_to_cri(const PsiFigures& f, runtime::v1::PsiData* out) {
  out->set_total(psi_total_ns(f.total_us));
  out->set_avg10(f.avg10);
  out->set_avg60(f.avg60);
  out->set_avg300(f.avg300);
}

void pressure_to_cri(const Pressure& p, runtime::v1::PsiStats* out) {
  if (p.some) psi_data_to_cri(*p.some, out->mutable_some());
  if (p.full) psi_data_to_cri(*p.full, out->mutable_full());
}

}  // namespace berth
