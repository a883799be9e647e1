"""qpipe: LLM quantization pipeline with business calibration management."""

__version__ = "0.1.0"
