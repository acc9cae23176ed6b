//===- TcpBootstrap.h - Rank 0's bytes to every rank over TCP ---*- C++ -*-===//
//
// How the ranks of an NCCL job agree on its unique id without MPI (the GPU
// machines may have no MPI; torchrun starts processes without it): rank 0
// listens, the others connect and read the id, as llm.c's tcp init does.
// The address is MASTER_ADDR's; the port TCC_BOOTSTRAP_PORT, else
// MASTER_PORT + 1 (torchrun's own store listens on MASTER_PORT), else 29501
// (docs/distributed.md).
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_COMM_TCPBOOTSTRAP_H
#define TCC_RUNTIME_COMM_TCPBOOTSTRAP_H

#include <cstddef>
#include <string>

namespace tcc::rt {

struct BootstrapAddress {
  std::string host = "127.0.0.1";
  int port = 29501;
};

/// The address from the environment (above), or false with `error`.
bool bootstrapAddress(BootstrapAddress &address, std::string &error);

/// Rank 0's `bytes` bytes at `data` copied to `data` of every other rank
/// of `size`: rank 0 accepts size - 1 connections on address.port, the
/// others connect to address.host (retrying while rank 0 starts). Each
/// waits at most `timeoutSeconds`. false with `error` one line.
bool tcpBroadcast(int rank, int size, const BootstrapAddress &address, void *data,
                  size_t bytes, int timeoutSeconds, std::string &error);

} // namespace tcc::rt

#endif // TCC_RUNTIME_COMM_TCPBOOTSTRAP_H
