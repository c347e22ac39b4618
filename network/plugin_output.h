// What a failed CNI plugin said: its CNI error object, or its plain output.
#pragma once

#include <string>

namespace berth::cni {

// s without leading and trailing whitespace (plugins end their output with newlines).
std::string trim(std::string s);

// The CNI error object ({code, msg, details}) a failed plugin printed on stdout, exactly as it
// printed it (surrounding whitespace aside); empty when stdout holds none.
std::string cni_error_json(const std::string& out);

// A failed plugin's words when it printed no CNI error: its output, then its stderr.
std::string plugin_output_text(const std::string& out, const std::string& err);

}  // namespace berth::cni
