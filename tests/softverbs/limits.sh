#!/bin/sh
# SPDX-License-Identifier: MIT
# The softverbs limits (QPs, MRs, send and receive queue depth, MTU, RC)
# changed through the environment: runs the unit test in its "limits" mode.
exec "$top_builddir/tests/softverbs/test_softverbs" limits
