"""What the closed-loop proof concludes from its runs (docs/closed-loop.md), apart from running
them so that it can be checked without a cluster or PyTorch.

Each side (the start settings, commbench's recommendation, the real search's best) has the
median steps of its interleaved runs. A side is faster than another *beyond the spread* when
its slowest run is faster than the other's fastest: their ranges do not overlap. The
verdicts follow the acceptance the harness was built for:
- the recommendation is faster than the start beyond the spread (or, where the search's
  best gains nothing beyond the spread, commbench kept the start's settings);
- it reaches at least 80 % of the search's best gain;
- in at most a tenth of the search's cluster time.
"""
import random
import statistics

SHARE_OF_BEST_GAIN = 0.8
SHARE_OF_SEARCH_TIME = 0.1


def side_figures(run_medians):
    """The runs' median, fastest and slowest step, seconds."""
    if not run_medians:
        raise ValueError("a side with no runs")
    return {"runs": list(run_medians), "median": statistics.median(run_medians), "fastest": min(run_medians),
            "slowest": max(run_medians)}


def beyond_spread(faster, slower):
    """Whether every run of `faster` beat every run of `slower`."""
    return faster["slowest"] < slower["fastest"]


def gain(start, other):
    """The seconds a side saves against the start, median against median."""
    return start["median"] - other["median"]


def verdicts(start, recommended, best, recommendation_changes, tune_seconds, search_seconds):
    """The acceptance, point by point: each a dict of `met` (bool) and `why` (one line)."""
    best_gains = beyond_spread(best, start)
    saved, best_saved = gain(start, recommended), gain(start, best)
    result = {}
    if best_gains:
        result["faster_than_start"] = {
            "met": beyond_spread(recommended, start),
            "why": f"recommendation {recommended['slowest']:.3f} s at worst against the start's best "
                   f"{start['fastest']:.3f} s"}
        result["share_of_best_gain"] = {
            "met": saved >= SHARE_OF_BEST_GAIN * best_saved,
            "why": f"saves {saved:.3f} s of the search's {best_saved:.3f} s "
                   f"({100 * saved / best_saved:.0f} %, at least {100 * SHARE_OF_BEST_GAIN:.0f} % asked)"}
    else:
        result["no_gain_said"] = {
            "met": not recommendation_changes,
            "why": "the search's best is not faster than the start beyond the runs' spread; commbench "
                   + ("kept the start's settings" if not recommendation_changes else "recommended a change")}
    result["cluster_time"] = {
        "met": tune_seconds <= SHARE_OF_SEARCH_TIME * search_seconds,
        "why": f"{tune_seconds:.0f} s of cluster time against the search's {search_seconds:.0f} s "
               f"({100 * tune_seconds / search_seconds:.1f} %, at most {100 * SHARE_OF_SEARCH_TIME:.0f} % asked)"}
    return result


def search_plan(space, trials, seed=0):
    """The settings of each real trial: every combination of the knobs' candidates in turn
    (a grid, repeated) while the grid is no larger than `trials`, else combinations drawn at
    random. `space`: {knob: [values]} in the order the knobs are set."""
    knobs = list(space)
    grid_size = 1
    for knob in knobs:
        grid_size *= len(space[knob])
    if grid_size <= trials:
        plan = []
        while len(plan) < trials:
            for index in range(grid_size):
                choice, rest = {}, index
                for knob in knobs:
                    choice[knob] = space[knob][rest % len(space[knob])]
                    rest //= len(space[knob])
                plan.append(choice)
        return plan[:trials]
    draw = random.Random(seed)
    return [{knob: draw.choice(space[knob]) for knob in knobs} for _ in range(trials)]


def interleaved_order(sides, rounds):
    """Each round runs every side once, the order turning each round, so that a machine
    that drifts favours no side: A B C, B C A, C A B, ..."""
    order = []
    for round_index in range(rounds):
        shift = round_index % len(sides)
        order.extend(sides[shift:] + sides[:shift])
    return order
