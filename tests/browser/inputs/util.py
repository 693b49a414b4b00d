"""Small helpers."""

import math


def clamp(x: float, lo: float, hi: float) -> float:
    """Keep x within [lo, hi]."""
    return max(lo, min(hi, x))


class Vector:
    """A 2-D vector."""

    def __init__(self, x: float, y: float) -> None:
        self.x = x
        self.y = y

    def length(self) -> float:
        return math.hypot(self.x, self.y)
