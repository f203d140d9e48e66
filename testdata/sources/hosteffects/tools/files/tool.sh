#!/bin/sh
# A tool zarf writes on the deploying host (testdata/sources/hosteffects).
echo "tool 1.0.0"
