// Whose registry a pull's credentials are for, and a key that tells two callers' credentials apart
// without keeping anything derived from them past berthd's life. Credentials go only where they
// were given (AuthConfig.server_address, else the image's own registry), and a pull made with one
// caller's secret is never shared with a caller who does not hold the same.
#pragma once

#include <string>

#include "berth/image_reference.h"
#include "berth/registry_settings.h"

namespace berth {

// Whether `creds` belong to the registry of `ref`: no server_address, or one naming that registry
// (a host, with or without a scheme and a path; Docker Hub's several names count as one).
bool credentials_are_for(const RegistryCredentials& creds, const ImageReference& ref);

// Equal for equal credentials, different for others; "" for none. A digest under a key drawn once
// per process, so it cannot be matched against guesses or outlive berthd.
std::string credentials_key(const RegistryCredentials& creds);

}  // namespace berth
