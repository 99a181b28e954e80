// scratch experiment: does one-way traffic in either direction set the 8 B loop's state?
#include <mpi.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
struct Pre { int from; int bytes; };
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<Pre> pre;
  const char* op = argc > 1 ? argv[1] : "allgather";
  for (int i = 2; i < argc; ++i) { Pre p; sscanf(argv[i], "%d:%d", &p.from, &p.bytes); pre.push_back(p); }
  char send[8] = {1}, recv[16];
  std::vector<char> big(1 << 20);
  auto call = [&] {
    if (!strcmp(op, "allgather")) MPI_Allgather(send, 8, MPI_CHAR, recv, 8, MPI_CHAR, MPI_COMM_WORLD);
    else MPI_Allreduce(send, recv, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  };
  std::string line;
  for (int loop = 0; loop < 6; ++loop) {
    for (int w = 0; w < 20000; ++w) call();
    MPI_Barrier(MPI_COMM_WORLD);
    for (auto& p : pre) {
      if (rank == p.from) MPI_Send(big.data(), p.bytes, MPI_CHAR, 1 - rank, 5, MPI_COMM_WORLD);
      else MPI_Recv(big.data(), p.bytes, MPI_CHAR, 1 - rank, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const int n = 1000000;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) call();
    double mean = (MPI_Wtime() - t0) / n * 1e6, worst;
    MPI_Allreduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    char text[32]; snprintf(text, sizeof text, " %.3f", worst); line += text;
  }
  if (rank == 0) printf("%s\n", line.c_str());
  MPI_Finalize();
}
