// The control plane of a group of ranks: who is where, and agreement between ranks.
// Every stop decision, every cross-rank statistic and every "did anyone fail?" goes
// through here, so ranks take the same branch and never wait on each other forever.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace commbench {

struct RankValue {
  double value = 0;
  int rank = 0;
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  Bootstrap() = default;
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;  // rank among the group's ranks on this node
  virtual int local_size() const = 0;
  virtual int node_count() const = 0;
  // Host name of every rank of the group, indexed by group rank.
  virtual const std::vector<std::string>& hostnames() const = 0;
  const std::string& hostname() const { return hostnames()[static_cast<std::size_t>(rank())]; }

  virtual void barrier() = 0;
  virtual bool any(bool value) = 0;      // true on every rank when true on some rank
  virtual int bitwise_or(int bits) = 0;  // several "any" answers in one round trip
  virtual int max(int value) = 0;
  virtual double max(double value) = 0;
  virtual double min(double value) = 0;
  virtual double sum(double value) = 0;
  virtual std::uint64_t sum(std::uint64_t value) = 0;
  virtual RankValue max_with_rank(double value) = 0;  // ties go to the lowest rank
  // Lowest rank for which `value` is true, or -1 when it is false everywhere.
  virtual int first_rank_where(bool value) = 0;
  virtual std::string broadcast(const std::string& text, int root) = 0;
  // Every rank's `text`, indexed by rank, on every rank.
  virtual std::vector<std::string> all_gather(const std::string& text) = 0;

  // Sub-groups: ranks passing the same colour form one group, ordered by key.
  virtual std::unique_ptr<Bootstrap> split(int color, int key) = 0;
};

}  // namespace commbench
