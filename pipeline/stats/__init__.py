"""Statistics kernels shared by the stages: paired tests and intervals, non-inferiority."""
