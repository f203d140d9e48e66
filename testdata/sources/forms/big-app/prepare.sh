#!/usr/bin/env bash
# A 2.5 MB incompressible payload, the same bytes every time, so zarf must
# split the package into several 1 MB parts.
python3 -c 'import random,sys; r=random.Random(20261130); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(2_500_000)))' > payload.bin
