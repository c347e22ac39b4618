// Container stdio plumbing for berth-monitor; see container_io.h.
#include "container_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "control_server.h"

namespace berth::monitor {
namespace {

int make_pipe(UniqueFd* read_end, UniqueFd* write_end) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return errno;
  read_end->reset(p[0]);
  write_end->reset(p[1]);
  return 0;
}

void set_nonblocking(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

// A container that keeps writing after its init died (a daemonized child in the host pid
// namespace) must not keep the monitor from reporting the exit.
constexpr int kMaxDrainReads = 4096;

}  // namespace

int ContainerIo::prepare(bool tty, bool open_stdin, size_t line_max, LogFile* log, ControlServer* sessions) {
  tty_ = tty;
  line_max_ = line_max;
  log_ = log;
  sessions_ = sessions;
  null_fd_.reset(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!null_fd_) return errno;
  out_[kStdout].name = "stdout";
  out_[kStderr].name = "stderr";
  for (auto& o : out_) {
    char* storage = static_cast<char*>(malloc(CriLineSplitter::storage_size(line_max)));
    if (!storage) return ENOMEM;
    o.splitter = CriLineSplitter(storage, line_max, &ContainerIo::emit_record, &o);
    o.io = this;
  }
  int err = 0;
  if (tty) {
    err = make_pipe(&error_text_, &error_text_child_);
    if (!err) set_nonblocking(error_text_.get());
    stdin_wanted_ = open_stdin;
    return err;
  }
  for (auto& o : out_) {
    if ((err = make_pipe(&o.fd, &o.child_end)) != 0) return err;
    set_nonblocking(o.fd.get());
  }
  if (open_stdin) {
    if ((err = make_pipe(&stdin_child_end_, &stdin_fd_)) != 0) return err;
    set_nonblocking(stdin_fd_.get());
  }
  return 0;
}

RuntimeStdio ContainerIo::runtime_stdio() const {
  RuntimeStdio s;
  if (tty_) {
    s.in = null_fd_.get();
    s.out = s.err = error_text_child_.get();
    s.error_text = error_text_.get();
    return s;
  }
  s.in = stdin_child_end_ ? stdin_child_end_.get() : null_fd_.get();
  s.out = out_[kStdout].child_end.get();
  s.err = out_[kStderr].child_end.get();
  s.error_text = out_[kStderr].fd.get();  // the runtime's own errors land on the container's stderr
  return s;
}

void ContainerIo::start(UniqueFd console_master) {
  for (auto& o : out_) o.child_end.reset();
  stdin_child_end_.reset();
  error_text_child_.reset();
  error_text_.reset();
  null_fd_.reset();
  if (!tty_) return;
  set_nonblocking(console_master.get());
  if (stdin_wanted_) stdin_fd_.reset(fcntl(console_master.get(), F_DUPFD_CLOEXEC, 3));
  out_[kStdout].fd = std::move(console_master);
}

void ContainerIo::emit_record(void* ctx, bool partial, const char* data, size_t len) {
  auto* o = static_cast<Output*>(ctx);
  o->io->log_->write_record(o->name, partial, data, len);
  monitor_protocol::LogLoss loss;
  if (o->io->log_->take_loss_change(&loss) && !o->io->sessions_->report_log_loss(loss)) o->io->log_->report_again();
}

bool ContainerIo::read_once(Stream s) {
  Output& o = out_[s];
  if (!o.fd) return false;
  size_t room;
  char* dst = o.splitter.space(&room);
  ssize_t n = read(o.fd.get(), dst, room);
  if (n > 0) {
    sessions_->copy_output(s, dst, static_cast<size_t>(n));
    o.splitter.commit(static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && errno == EINTR) return true;
  if (n < 0 && errno == EAGAIN) return false;
  close_output(s);  // end of file, or EIO from a pty master whose slave side is gone
  return false;
}

void ContainerIo::read_output(Stream s) { read_once(s); }

void ContainerIo::close_output(Stream s) {
  out_[s].splitter.finish();
  out_[s].fd.reset();
  sessions_->end_output(s);
}

void ContainerIo::drain_outputs() {
  for (Stream s : {kStdout, kStderr}) {
    for (int i = 0; i < kMaxDrainReads && read_once(s); ++i) {
    }
    if (out_[s].fd) close_output(s);
  }
}

void ContainerIo::push_stdin(const char* data, size_t n) {
  if (n > sizeof stdin_buf_ || stdin_len_ != 0) return;
  memcpy(stdin_buf_, data, n);
  stdin_len_ = n;
  stdin_off_ = 0;
  write_stdin();
}

void ContainerIo::write_stdin() {
  while (stdin_off_ < stdin_len_ && stdin_fd_) {
    ssize_t w = write(stdin_fd_.get(), stdin_buf_ + stdin_off_, stdin_len_ - stdin_off_);
    if (w > 0) {
      stdin_off_ += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) return;
    stdin_fd_.reset();  // EPIPE: nobody in the container reads stdin any more
  }
  stdin_len_ = stdin_off_ = 0;
  if (stdin_ending_) finish_stdin();
}

void ContainerIo::end_stdin() {
  if (!stdin_fd_ || stdin_ending_) return;
  stdin_ending_ = true;
  if (stdin_len_ == 0) finish_stdin();
}

void ContainerIo::finish_stdin() {
  if (tty_ && stdin_fd_) {
    termios t;
    char eof = 4;  // ^D unless the terminal says otherwise
    if (tcgetattr(stdin_fd_.get(), &t) == 0 && t.c_cc[VEOF]) eof = static_cast<char>(t.c_cc[VEOF]);
    if (write(stdin_fd_.get(), &eof, 1) < 0) {
    }
  }
  stdin_fd_.reset();
}

int ContainerIo::resize(unsigned rows, unsigned cols) {
  if (!tty_) return ENOTTY;
  int fd = out_[kStdout].fd ? out_[kStdout].fd.get() : stdin_fd_.get();
  winsize ws{static_cast<unsigned short>(rows), static_cast<unsigned short>(cols), 0, 0};
  return ioctl(fd, TIOCSWINSZ, &ws) == 0 ? 0 : errno;
}

}  // namespace berth::monitor
