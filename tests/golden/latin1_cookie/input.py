#!/usr/bin/env python
# -*- coding: latin-1 -*-
x = 1
