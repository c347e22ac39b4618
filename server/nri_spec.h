// Between berth's containers and NRI's view of them: a container's OCI spec as NRI's Container
// (what plugins see), resources both ways between the CRI, the OCI spec and NRI, and a plugins'
// merged adjustment written into the spec berth is about to hand the runtime.
#pragma once

#include <map>
#include <string>

#include "berth/cri_messages.h"
#include "berth/nri_adjustment.h"
#include "berth/oci_spec.h"
#include "berth/status.h"

namespace berth {

class CdiRegistry;

namespace nri_api = ::nri::pkg::api::v1alpha1;

// The parts of the container's spec NRI shows a plugin (args, env, mounts, hooks, rlimits, Linux
// namespaces, devices, resources, cgroups path, OOM score) beside what the caller fills.
void fill_nri_container(const oci::Spec& spec, nri_api::Container& out);

nri_api::LinuxResources nri_resources(const oci::Resources& r);
nri_api::LinuxResources nri_resources(const runtime::v1::LinuxContainerResources& r);
runtime::v1::LinuxContainerResources cri_resources(const nri_api::LinuxResources& r);

// Writes the merged adjustment into `spec`. What berth cannot apply is refused naming the field
// (a plugin's change must not be dropped without a word), as is what the CRI keeps from plugins
// (a container's namespaces are its pod's). CDI devices are resolved with `cdi`.
Status apply_nri_adjustment(const nri_api::ContainerAdjustment& a, CdiRegistry* cdi, oci::Spec& spec);

}  // namespace berth
