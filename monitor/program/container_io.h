// The container's stdio as the monitor holds it: pipes (or the pty master) created for the
// runtime's create, the output streams cut into CRI log records and copied to attach sessions,
// and the stdin relay. Persists only through LogFile.
#pragma once

#include <stddef.h>

#include "../cri_log_line.h"
#include "berth/unique_fd.h"
#include "log_file.h"
#include "runtime_create.h"

namespace berth::monitor {

class ControlServer;

enum Stream { kStdout = 0, kStderr = 1 };

class ContainerIo {
 public:
  // Makes the pipes the runtime's create gets. Returns 0 or an errno.
  int prepare(bool tty, bool open_stdin, size_t line_max, LogFile* log, ControlServer* sessions);
  RuntimeStdio runtime_stdio() const;
  // After a successful create: drops the child ends (the container init holds its own copies)
  // and, for a tty, takes the pty master as both output and stdin.
  void start(UniqueFd console_master);

  bool tty() const { return tty_; }
  // The container has a stdin the relay can still write to.
  bool has_stdin() const { return stdin_fd_.valid() && !stdin_ending_; }

  int output_fd(Stream s) const { return out_[s].fd.get(); }
  void read_output(Stream s);
  // The container has exited: reads what is left without waiting, then writes pending fragments.
  void drain_outputs();

  // Stdin relay: bytes from attach sessions go through one small buffer.
  size_t stdin_room() const { return has_stdin() && stdin_len_ == 0 ? sizeof stdin_buf_ : 0; }
  void push_stdin(const char* data, size_t n);
  int stdin_poll_fd() const { return stdin_len_ > 0 ? stdin_fd_.get() : -1; }
  void write_stdin();
  // Ends the container's stdin once buffered bytes are out (stdin_once). For a tty, whose master
  // also carries the output, this sends the terminal's end-of-file character instead.
  void end_stdin();
  int resize(unsigned rows, unsigned cols);

 private:
  struct Output {
    UniqueFd fd;
    UniqueFd child_end;
    CriLineSplitter splitter{nullptr, 0, nullptr, nullptr};
    const char* name = nullptr;
    ContainerIo* io = nullptr;
  };
  static void emit_record(void* ctx, bool partial, const char* data, size_t len);
  bool read_once(Stream s);
  void close_output(Stream s);
  void finish_stdin();

  bool tty_ = false;
  size_t line_max_ = 0;
  LogFile* log_ = nullptr;
  ControlServer* sessions_ = nullptr;
  Output out_[2];
  UniqueFd stdin_fd_;  // pipe write end, or the pty master
  UniqueFd stdin_child_end_;
  UniqueFd null_fd_;     // runtime stdin when the container has none
  UniqueFd error_text_;  // tty: the runtime's stderr, which no container stream carries
  UniqueFd error_text_child_;
  bool stdin_wanted_ = false;
  bool stdin_ending_ = false;
  char stdin_buf_[4096];
  size_t stdin_len_ = 0;
  size_t stdin_off_ = 0;
};

}  // namespace berth::monitor
