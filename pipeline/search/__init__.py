"""Mixed-precision search: per-part sensitivity on the business calibration set
(sensitivity.py) and the candidates it proposes under a size budget (front.py)."""
