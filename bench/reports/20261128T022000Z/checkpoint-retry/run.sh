#!/bin/bash
cd /tmp/ab
for round in 1 2 3; do
  for side in ckpt main; do
    /work/bin/orch-$side bench --embedded sqlite --quiet lifecycle --tasks 10000 --agents 32 --preload 1000000 -o json > /tmp/ab/$side-$round.json 2> /tmp/ab/$side-$round.err
    echo "$(date +%T) $side $round exit $?" >> /tmp/ab/progress.txt
  done
done
echo finished >> /tmp/ab/progress.txt
