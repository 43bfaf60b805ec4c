// Linux epoll for Wire's EventPoller. glibc provides the functions; Swift's
// Glibc module does not import <sys/epoll.h>. `struct epoll_event` is packed
// on x86-64 (12 bytes), so it is built and indexed here, in C, never by
// Swift's own layout.
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <errno.h>
#include <sys/prctl.h>
#include <unistd.h>

/// The events every socket is registered for: input, output, peer half-close, edge-triggered.
static const uint32_t intact_epoll_socket_events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
/// Bits that mean "read now" (input, half-close, hang-up, error).
static const uint32_t intact_epoll_input_events = EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR;
/// Bits that mean the peer half-closed, hung up or failed: input may end
/// in EOF or an error, so reading goes on until the socket says so.
static const uint32_t intact_epoll_hangup_events = EPOLLRDHUP | EPOLLHUP | EPOLLERR;
/// Bits that mean "write now" (room, hang-up, error).
static const uint32_t intact_epoll_output_events = EPOLLOUT | EPOLLHUP | EPOLLERR;

/// The size of one event, for allocating a batch.
static inline size_t intact_epoll_event_size(void) { return sizeof(struct epoll_event); }

/// epoll_ctl(ADD) with `events` and `token` as the event's data.
static inline int intact_epoll_add(int epoll, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event = { .events = events, .data = { .u64 = token } };
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

/// epoll_ctl(DEL).
static inline int intact_epoll_delete(int epoll, int fd) {
    struct epoll_event unused = { 0 };
    return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &unused);
}

/// epoll_wait into a batch allocated with `intact_epoll_event_size` bytes per event.
static inline int intact_epoll_wait(int epoll, void *batch, int capacity, int timeout) {
    return epoll_wait(epoll, (struct epoll_event *)batch, capacity, timeout);
}

/// The event bits and the token of event `index` of a batch.
static inline uint32_t intact_epoll_events_at(const void *batch, int index) {
    return ((const struct epoll_event *)batch)[index].events;
}
static inline uint64_t intact_epoll_token_at(const void *batch, int index) {
    return ((const struct epoll_event *)batch)[index].data.u64;
}

/// A non-blocking, close-on-exec eventfd registered level-triggered for input
/// with `token`: the poller thread's wake-up; -1 with errno set on failure.
static inline int intact_epoll_add_wake(int epoll, uint64_t token) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) return -1;
    struct epoll_event event = { .events = EPOLLIN, .data = { .u64 = token } };
    if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/// Makes an eventfd from `intact_epoll_add_wake` readable.
static inline int intact_eventfd_signal(int fd) {
    return eventfd_write(fd, 1);
}

/// Names the calling thread (the kernel keeps 15 bytes), for `top -H` and perf.
static inline int intact_thread_set_name(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}
