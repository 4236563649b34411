#!/bin/bash
cd /tmp/ab2
for round in 1 2 3; do
  for side in xp wrs; do
    /work/bin/orch-$side bench --embedded sqlite --quiet lifecycle --tasks 10000 --agents 32 --preload 1000000 -o json > /tmp/ab2/$side-$round.json 2> /tmp/ab2/$side-$round.err
    echo "$(date +%T) $side $round exit $?" >> /tmp/ab2/progress.txt
  done
done
echo finished >> /tmp/ab2/progress.txt
