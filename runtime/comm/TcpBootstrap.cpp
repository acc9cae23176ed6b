//===- TcpBootstrap.cpp - Rank 0's bytes to every rank over TCP ----------===//

#include "runtime/comm/TcpBootstrap.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace tcc::rt {

namespace {

using Clock = std::chrono::steady_clock;

/// Sent before the bytes, so a stray connection is not taken for rank 0.
constexpr char kMagic[8] = {'t', 'c', 'c', '-', 'i', 'd', '0', '1'};

/// Closes a socket when it goes out of scope.
struct Socket {
  int fd = -1;
  ~Socket() {
    if (fd >= 0)
      ::close(fd);
  }
};

int millisecondsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

/// Waits until fd is ready for `events` or the deadline passes.
bool ready(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    int n = ::poll(&p, 1, millisecondsLeft(deadline));
    if (n > 0)
      return true;
    if (n == 0 || errno != EINTR)
      return false;
  }
}

bool sendAll(int fd, const char *data, size_t bytes, Clock::time_point deadline) {
  while (bytes > 0) {
    if (!ready(fd, POLLOUT, deadline))
      return false;
    ssize_t n = ::send(fd, data, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    bytes -= size_t(n);
  }
  return true;
}

bool receiveAll(int fd, char *data, size_t bytes, Clock::time_point deadline) {
  while (bytes > 0) {
    if (!ready(fd, POLLIN, deadline))
      return false;
    ssize_t n = ::recv(fd, data, bytes, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    bytes -= size_t(n);
  }
  return true;
}

std::string where(const BootstrapAddress &a) { return a.host + ":" + std::to_string(a.port); }

bool serve(int size, const BootstrapAddress &address, const void *data, size_t bytes,
           Clock::time_point deadline, std::string &error) {
  Socket listener{::socket(AF_INET, SOCK_STREAM, 0)};
  int yes = 1;
  ::setsockopt(listener.fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  any.sin_port = htons(static_cast<uint16_t>(address.port));
  if (listener.fd < 0 || ::bind(listener.fd, reinterpret_cast<sockaddr *>(&any), sizeof any) ||
      ::listen(listener.fd, size)) {
    error = "rank 0 cannot listen on port " + std::to_string(address.port) + " (" +
            std::strerror(errno) + "); set TCC_BOOTSTRAP_PORT to a free port";
    return false;
  }
  for (int served = 1; served < size; ++served) {
    if (!ready(listener.fd, POLLIN, deadline)) {
      error = "rank 0 waited for " + std::to_string(size - served) + " of the " +
              std::to_string(size - 1) + " other ranks to connect to port " +
              std::to_string(address.port) + " in vain; are they started, with MASTER_ADDR "
              "naming rank 0's host?";
      return false;
    }
    Socket peer{::accept(listener.fd, nullptr, nullptr)};
    if (peer.fd < 0 || !sendAll(peer.fd, kMagic, sizeof kMagic, deadline) ||
        !sendAll(peer.fd, static_cast<const char *>(data), bytes, deadline)) {
      error = "rank 0 could not send the job's id to a rank: " + std::string(std::strerror(errno));
      return false;
    }
  }
  return true;
}

bool fetch(const BootstrapAddress &address, void *data, size_t bytes, Clock::time_point deadline,
           std::string &error) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (::getaddrinfo(address.host.c_str(), std::to_string(address.port).c_str(), &hints,
                    &found) != 0 || !found) {
    error = "cannot resolve MASTER_ADDR '" + address.host + "'";
    return false;
  }
  sockaddr_storage target{};
  std::memcpy(&target, found->ai_addr, found->ai_addrlen);
  socklen_t length = found->ai_addrlen;
  ::freeaddrinfo(found);
  // Rank 0 may not listen yet: retry until the deadline.
  for (;;) {
    Socket s{::socket(AF_INET, SOCK_STREAM, 0)};
    if (s.fd >= 0 && ::connect(s.fd, reinterpret_cast<sockaddr *>(&target), length) == 0) {
      char magic[sizeof kMagic];
      if (receiveAll(s.fd, magic, sizeof magic, deadline) &&
          std::memcmp(magic, kMagic, sizeof kMagic) == 0 &&
          receiveAll(s.fd, static_cast<char *>(data), bytes, deadline))
        return true;
      error = "what " + where(address) + " sent is not rank 0's job id; is another program "
              "listening there? Set TCC_BOOTSTRAP_PORT to a free port";
      return false;
    }
    if (millisecondsLeft(deadline) == 0) {
      error = "no rank 0 answered at " + where(address) + "; is it started, and does "
              "MASTER_ADDR name its host?";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

bool readPort(const char *name, int offset, BootstrapAddress &address, std::string &error) {
  const char *text = std::getenv(name);
  if (!text)
    return false;
  char *end = nullptr;
  long port = std::strtol(text, &end, 10) + offset;
  if (end == text || *end != '\0' || port < 1 || port > 65535) {
    error = std::string(name) + "='" + text + "' is not a port" +
            (offset ? " (TCC's bootstrap takes the port after it)" : "");
    return true;
  }
  address.port = static_cast<int>(port);
  return true;
}

} // namespace

bool bootstrapAddress(BootstrapAddress &address, std::string &error) {
  address = BootstrapAddress();
  if (const char *host = std::getenv("MASTER_ADDR"); host && *host)
    address.host = host;
  error.clear();
  if (!readPort("TCC_BOOTSTRAP_PORT", 0, address, error))
    readPort("MASTER_PORT", 1, address, error);
  return error.empty();
}

bool tcpBroadcast(int rank, int size, const BootstrapAddress &address, void *data,
                  size_t bytes, int timeoutSeconds, std::string &error) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(timeoutSeconds);
  if (size <= 1)
    return true;
  return rank == 0 ? serve(size, address, data, bytes, deadline, error)
                   : fetch(address, data, bytes, deadline, error);
}

} // namespace tcc::rt
