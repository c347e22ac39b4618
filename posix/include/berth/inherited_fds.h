// The second wall behind close-on-exec: a program berth starts gets only the descriptors it is
// handed on purpose, and berth's own programs drop at their start whatever reached them by
// accident (a library's descriptor without close-on-exec, a parent's leak). Both work from a
// descriptor number up, so what is passed on purpose sits below it (stdio, then the numbered
// extras).
#pragma once

namespace berth {

// Closes every descriptor from `first` up but `except` (-1: none; a program exec'd through its
// own descriptor, /proc/self/fd/N, needs N until the exec). Async-signal-safe (system calls only,
// no allocation), for a child between fork or clone and exec. Returns 0 or an errno.
int close_descriptors_from(int first, int except = -1) noexcept;

// Marks every descriptor from `first` up close-on-exec: for a program's start, where a descriptor
// it did not open must not reach what it execs, while libraries that opened theirs since (a
// sanitizer's, glibc's) keep them. Async-signal-safe too. Returns 0 or an errno.
int mark_descriptors_cloexec_from(int first) noexcept;

}  // namespace berth
