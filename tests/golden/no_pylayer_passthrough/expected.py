#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""A file without PyLayer comes back byte for byte."""
import os, sys
from typing import Any


def apply(x: Any) -> Any:
	return x.apply(lambda v: v)  # tabs kept


class Frame:
    def apply(self, fn):
        return fn(self)


if __name__ == "__main__":
    print(Frame().apply(apply), os.sep, sys.argv, "é ünïcode")
