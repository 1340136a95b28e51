"""Prints the id of a DMA instr to drop in tile-programs.test.

Usage: tile-programs.test.py SCHED_TEXT halo|partials

halo: in conv_chain on the tiny target, the transfer into the second
convolution sends each tile's rows to its own tile and to the tiles above
and below it (their halos); the first such DMA instr (kernel -1, writing
buffers on three tiles), so that dropping it leaves two tiles without a
halo row.
partials: in deep_matmul, the K split's partial products move to the tiles
that sum them; the first DMA instr of that transfer, so that dropping it
loses one tile's partial sums."""
import re
import sys

text = open(sys.argv[1]).read()
mode = sys.argv[2]
tile_of = {int(m.group(1)): int(m.group(2))
           for m in re.finditer(r"sched\.buffer (\d+) \S+ tile (\d+)", text)}
for m in re.finditer(r'sched\.instr (\d+) "dma"\[(\d+)\].* kernel -1 .*'
                     r"writes \[([0-9, ]*)\]", text):
    writes = [int(w) for w in m.group(3).split(",") if w.strip()]
    tiles = {tile_of[w] for w in writes}
    if mode == "partials" or len(tiles) == 3:
        print(m.group(1))
        sys.exit(0)
sys.exit("no DMA instr to drop for " + mode)
