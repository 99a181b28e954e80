// bare-mpi-loop: the reference bench-collectives is compared with end to end
// (bench/compare_with_bare_loop.py). It times one MPI collective the plainest way: a
// warm-up, a barrier, N calls back to back between two MPI_Wtime readings, and prints
// the slowest rank's mean time per call in microseconds, the figure bench-collectives
// prints as time_us. Sizes mean what they mean in bench-collectives (float elements):
// the whole buffer for allreduce and broadcast, the gathered buffer for allgather, the
// input buffer for reducescatter. With the argument `page`, both buffers start on a page
// boundary, as bench-collectives' host buffers do (by default they are std::vector's).
// With `repeat=K` the warm-up, barrier and timed loop run K times in the one process and
// each time is printed: on small messages, identical loops one after another can settle
// in different steady states (docs/methodology.md, "Two steady states of one loop").
// With `oneway=K` rank 1 sends K messages to rank 0 before each loop's warm-up, each of
// `oneway-bytes=B` bytes (default 4): one-way traffic like a harness's set-up broadcasts,
// which decides the state Open MPI's shared-memory fast boxes leave the pair in.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Every rank refuses alike; rank 0 alone says why, in one line naming the argument and
// ending with the usage. It says so before MPI_Finalize: a rank that exits non-zero first makes
// mpirun end the others.
int usage(int rank, const std::string& why) {
  if (rank == 0)
    std::fprintf(stderr,
                 "bare-mpi-loop: %s (usage: bare-mpi-loop allreduce|allgather|reducescatter|broadcast BYTES "
                 "ITERATIONS [page] [repeat=K] [oneway=K] [oneway-bytes=B])\n",
                 why.c_str());
  return 2;
}

constexpr std::size_t kPageFloats = 4096 / sizeof(float);

// The first page boundary inside `storage` (which has a page to spare).
float* page_start(std::vector<float>& storage) {
  const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
  return reinterpret_cast<float*>((address + 4095) & ~std::uintptr_t{4095});
}

// The number after `prefix` in `extra` ("repeat=3" -> 3) when it is one whole number from
// `lowest` to `highest`; otherwise the reason, naming the argument.
std::string whole_number_after(const std::string& extra, const char* prefix, long lowest, long highest, long& value) {
  const char* digits = extra.c_str() + std::strlen(prefix);
  char* end = nullptr;
  errno = 0;
  value = std::strtol(digits, &end, 10);
  if (end == digits || *end != '\0' || errno == ERANGE || value < lowest || value > highest)
    return "'" + extra + "': " + prefix + " takes a whole number from " + std::to_string(lowest) + " to " +
           std::to_string(highest);
  return "";
}

// BYTES or ITERATIONS: digits only, from 1 to `highest`; otherwise the reason.
std::string positive_whole(const char* text, const char* name, long highest, long& value) {
  const std::string digits = text;
  errno = 0;
  value = digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos
              ? 0
              : std::strtol(digits.c_str(), nullptr, 10);
  if (errno == ERANGE || value < 1 || value > highest)
    return std::string(name) + " '" + digits + "' is not a positive whole number up to " + std::to_string(highest);
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  bool page_aligned = false;
  long repeats = 1;
  long oneway_messages = 0;
  long oneway_bytes = 4;
  bool oneway_bytes_given = false;
  std::string why = argc >= 4 ? "" : "an operation, BYTES and ITERATIONS are needed";
  for (int i = 4; i < argc && why.empty(); ++i) {
    const std::string extra = argv[i];
    if (extra == "page")
      page_aligned = true;
    else if (extra.rfind("repeat=", 0) == 0)
      why = whole_number_after(extra, "repeat=", 1, 1000, repeats);
    else if (extra.rfind("oneway=", 0) == 0)
      why = whole_number_after(extra, "oneway=", 0, 1000000, oneway_messages);
    else if (extra.rfind("oneway-bytes=", 0) == 0) {
      // A message of 0 bytes would still be a header.
      why = whole_number_after(extra, "oneway-bytes=", 1, 1 << 20, oneway_bytes);
      oneway_bytes_given = true;
    } else {
      why = "'" + extra + "' is not an option";
    }
  }
  if (why.empty() && oneway_bytes_given && oneway_messages == 0) why = "oneway-bytes= needs oneway=K with K >= 1";
  if (why.empty() && oneway_messages > 0 && ranks < 2) why = "oneway= sends from rank 1 to rank 0: it needs 2 ranks";
  if (!why.empty()) {
    const int code = usage(rank, why);
    MPI_Finalize();
    return code;
  }
  const std::string op = argv[1];
  long bytes = 0, iterations = 0;
  // BYTES up to 4 GiB keeps every count inside MPI's int; a billion calls is days of loop.
  why = positive_whole(argv[2], "BYTES", 1L << 32, bytes);
  if (why.empty()) why = positive_whole(argv[3], "ITERATIONS", 1000000000L, iterations);
  if (why.empty() && op != "allreduce" && op != "allgather" && op != "reducescatter" && op != "broadcast")
    why = "'" + op + "' is not one of the four operations";
  if (!why.empty()) {
    const int code = usage(rank, why);
    MPI_Finalize();
    return code;
  }
  const bool chunked = op == "allgather" || op == "reducescatter";
  const int count = static_cast<int>(std::max(1L, bytes / 4 / (chunked ? ranks : 1)));  // per rank (per chunk)
  std::vector<float> send_storage(static_cast<std::size_t>(count) * (op == "reducescatter" ? ranks : 1) +
                                  (page_aligned ? kPageFloats : 0));
  std::vector<float> recv_storage(static_cast<std::size_t>(count) * (op == "allgather" ? ranks : 1) +
                                  (page_aligned ? kPageFloats : 0));
  float* send_data = page_aligned ? page_start(send_storage) : send_storage.data();
  float* recv_data = page_aligned ? page_start(recv_storage) : recv_storage.data();
  std::fill(send_data, send_storage.data() + send_storage.size(), 1.0f);
  struct {
    float* data() const { return pointer; }
    float* pointer;
  } send{send_data}, recv{recv_data};
  auto call = [&] {
    if (op == "allreduce") return MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (op == "allgather")
      return MPI_Allgather(send.data(), count, MPI_FLOAT, recv.data(), count, MPI_FLOAT, MPI_COMM_WORLD);
    if (op == "reducescatter")
      return MPI_Reduce_scatter_block(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (op == "broadcast") return MPI_Bcast(send.data(), count, MPI_FLOAT, 0, MPI_COMM_WORLD);
    return MPI_ERR_OP;
  };
  if (call() != MPI_SUCCESS) {
    if (rank == 0) std::fprintf(stderr, "bare-mpi-loop: the first %s failed\n", op.c_str());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  std::string times;
  std::vector<char> oneway_payload(static_cast<std::size_t>(oneway_bytes));
  long oneway_received = 0, oneway_bytes_received = 0;  // rank 0's count, said on stderr
  for (long repeat = 0; repeat < repeats; ++repeat) {
    for (long k = 0; k < oneway_messages; ++k) {
      constexpr int kOnewayTag = 99;
      if (rank == 1)
        MPI_Send(oneway_payload.data(), static_cast<int>(oneway_bytes), MPI_CHAR, 0, kOnewayTag, MPI_COMM_WORLD);
      if (rank == 0) {
        MPI_Status status;
        MPI_Recv(oneway_payload.data(), static_cast<int>(oneway_bytes), MPI_CHAR, 1, kOnewayTag, MPI_COMM_WORLD,
                 &status);
        int received = 0;
        MPI_Get_count(&status, MPI_CHAR, &received);
        ++oneway_received;
        oneway_bytes_received += received;
      }
    }
    for (int warm = 0; warm < 10; ++warm) call();
    MPI_Barrier(MPI_COMM_WORLD);
    const double started = MPI_Wtime();
    for (long i = 0; i < iterations; ++i) call();
    const double mean = (MPI_Wtime() - started) / static_cast<double>(iterations);
    double slowest = 0;
    MPI_Reduce(&mean, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    char text[32];
    std::snprintf(text, sizeof text, "%s%.4f", repeat == 0 ? "" : " ", slowest * 1e6);
    times += text;
  }
  if (rank == 0) std::printf("%s %ld B: %s us\n", op.c_str(), bytes, times.c_str());
  // What rank 0 received one way, over all loops: what the tests check oneway= by.
  if (rank == 0 && oneway_messages > 0)
    std::fprintf(stderr, "bare-mpi-loop: rank 0 received %ld one-way messages, %ld bytes\n", oneway_received,
                 oneway_bytes_received);
  MPI_Finalize();
  return 0;
}
