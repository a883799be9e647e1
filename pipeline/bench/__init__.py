"""bench: interleaved speed measurement of the baseline and every served variant."""
