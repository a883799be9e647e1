"""Running the DVC pipeline: stages side by side (`qpipe repro --jobs N`)."""
