// A soak's dips: the pair readings of every interval held against the run's own steady
// level, and each dip named as a node or a link with when it began and ended.
//
// The rule (docs/validate.md, "Soak runs"), chosen to be robust, not tuned:
//   - steady level: the median of every pair reading of the run (or the site file's pair
//     figure), since most readings of a soak are healthy;
//   - spread: 1.4826 x the median absolute deviation of the readings' logarithms (a
//     normal distribution's standard deviation, read without the dips themselves; in
//     logarithms because both a fabric's scatter and a throttled link's loss are ratios);
//   - a reading is low when it is below the steady level by more than `spread_limit`
//     spreads (as a ratio: level x e^-(limit x spread)) and by more than `least_depth` of
//     the level: the first keeps a noisy fabric's ordinary scatter out, the second a very
//     quiet fabric's harmless wobble;
//   - a reading counts for the time it covers: one interval, or, where it lasted 3
//     cadences (the median time between intervals' starts) or more, its length in
//     cadences. A fault makes fewer readings the worse it is (a round held up by a
//     throttled link for 15 s is one reading), so an event is a stretch of time below
//     the level, and such a reading's start and end are the dip's;
//   - a node event is a run of low readings in a row of one node's series (the readings of
//     the pairs it was in, interval by interval) covering at least `least_node_readings`
//     intervals, at least two of them with partners other than the one it was low with
//     most (a slow link drags the pair beside it down now and then, not every time). The node with the most is named
//     first; its readings then explain its partners' low readings with it, which no longer count for a node event of
//     their own (a slow node drags each partner's reading down);
//   - a link event is a run of low readings of one pair covering at least
//     `least_link_readings` intervals, in
//     a row of that pair's series, that no node event explains, taken while no node event
//     lasts (a slow node slows the pairs beside it now and then);
//   - one reading that is not low between two low ones does not end a run (a dip's readings
//     scatter around the line too); two do. A shorter run is no event: on a shared or busy
//     host one process stalled for a second reads as deep as a throttled link;
//   - an event fails (exit 1) when its lowest reading is below `fraction` of the steady
//     level; a shallower one is reported and passes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commbench/validate/validation_plan.hpp"

namespace commbench {

// One pair's figure in one interval of the soak.
struct SoakReading {
  int interval = 0;
  double start_s = 0, end_s = 0;  // seconds since the soak began
  int first = 0, second = 0;      // node indices, first < second
  double gbps = 0;
};

// What changed on a node during an interval besides its figures: a NIC's error counter
// that stepped, a port's state or rate, a GPU's throttle reasons ("mlx5_0:1
// symbol_error +12").
struct SoakChange {
  int interval = 0;
  int node = 0;
  std::string what;
};

struct SoakRule {
  double fraction = 0.75;             // an event below this fraction of the steady level fails
  double least_depth = 0.1;           // a reading is never low when less than this far below
  double spread_limit = 4;            // ...nor when within this many spreads of the level
  int least_node_readings = 3;        // a node event's low readings (in intervals of time), at least
  int least_link_readings = 2;        // a link event's low readings (meetings of its two ends, in time), at least
  std::optional<double> steady_gbps;  // given (--expect); else the median of the run
};

struct SoakLevels {
  double steady_gbps = 0;
  double spread = 0;          // of the readings' natural logarithms (0.1: about 10 % scatter)
  double low_below_gbps = 0;  // a reading below this is low
  bool given = false;         // the steady level came from the site file
};

struct SoakEvent {
  FaultKind kind = FaultKind::node;  // node or link
  std::vector<int> nodes;            // the node; the link's two ends, ascending
  int first_interval = 0, last_interval = 0;
  double start_s = 0, end_s = 0;  // from the first low reading's start to the last one's end
  int low_readings = 0;
  // Its low readings weighted by the time they cover, in intervals (soak cadences): one
  // each, or a reading's length in cadences where it lasted 3 cadences or more.
  double low_weight = 0;
  std::vector<int> partners;  // node events: the partners it was low with
  double lowest_gbps = 0;
  double median_low_gbps = 0;  // the median of its low readings: how deep it is throughout
  double depth = 0;            // 1 - lowest / steady
  bool fails = false;
  std::vector<std::string> changes;  // on the event's nodes, from one interval before to one after
};

SoakLevels soak_levels(const std::vector<SoakReading>& readings, const SoakRule& rule);
SoakLevels soak_levels(const std::vector<double>& values, const SoakRule& rule);

// The rule's runs of low values in one series (a collective case's busbw, interval by
// interval): indices of the first and last low value, how many were low, the lowest.
struct Dip {
  std::size_t first = 0, last = 0;
  int low = 0;
  double lowest = 0;
};
std::vector<Dip> dips_in(const std::vector<double>& series, double low_below);

// The soak's cadence: the median time from one interval's start to the next (`starts`,
// one per reading, in any order; repeats are one interval). 0 with fewer than two.
double soak_cadence(const std::vector<double>& starts);
// How many intervals' worth of time a reading of `length_s` stands for: 1, or, where it
// lasted 3 cadences or more, its length in cadences (its whole length is then the dip's).
double reading_weight(double length_s, double cadence_s);

// The events in order of their start. `readings` in the order measured.
std::vector<SoakEvent> find_soak_events(const std::vector<SoakReading>& readings,
                                        const std::vector<SoakChange>& changes, const SoakLevels& levels,
                                        const SoakRule& rule);

}  // namespace commbench
