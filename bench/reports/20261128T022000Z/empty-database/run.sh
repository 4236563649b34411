#!/bin/bash
# Empty-database SQLite figures, before (ckpt: main + the bench fix) and
# after (head: the WAL restarts on the writer's connection), alternating.
cd /tmp/ab3
for round in 1 2 3 4 5; do
  for side in ckpt head; do
    /work/bin/orch-$side bench --embedded sqlite --quiet lifecycle --tasks 40000 --agents 32 -o json > /tmp/ab3/contract-$side-$round.json 2>/dev/null
    /work/bin/orch-$side bench --embedded sqlite --quiet lifecycle --tasks 40000 --agents 32 --batch 32 -o json > /tmp/ab3/batch-$side-$round.json 2>/dev/null
    echo "$(date +%T) $side $round" >> /tmp/ab3/progress.txt
  done
done
echo finished >> /tmp/ab3/progress.txt
