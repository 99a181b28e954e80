"""Reading commbench's result files and turning them into plots, comparisons and reports.

Used by scripts/plot and scripts/compare (docs/plots.md). Only the standard library is
needed to read and compare; matplotlib draws.
"""
