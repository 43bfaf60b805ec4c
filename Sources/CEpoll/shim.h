// Linux epoll for Wire's EventPoller. glibc provides the functions; Swift's
// Glibc module does not import <sys/epoll.h>. `struct epoll_event` is packed
// on x86-64 (12 bytes), so it is built and indexed here, in C, never by
// Swift's own layout.
#include <stdint.h>
#include <sys/epoll.h>

/// The events every socket is registered for: input, output, peer half-close, edge-triggered.
static const uint32_t intact_epoll_socket_events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
/// Bits that mean "read now" (input, half-close, hang-up, error).
static const uint32_t intact_epoll_input_events = EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR;
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
