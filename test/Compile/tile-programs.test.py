"""Prints the id of a DMA instr that carries halo rows in tile-programs.test.

Reads the sched text of conv_chain on the tiny target: the transfer into
the second convolution sends each tile's rows to its own tile and to the
tiles above and below it (their halos). Prints the first such DMA instr
(kernel -1, writing buffers on three tiles), so that dropping it leaves two
tiles without a halo row."""
import re
import sys

text = open(sys.argv[1]).read()
tile_of = {int(m.group(1)): int(m.group(2))
           for m in re.finditer(r"sched\.buffer (\d+) \S+ tile (\d+)", text)}
for m in re.finditer(r'sched\.instr (\d+) "dma"\[(\d+)\].* kernel -1 .*'
                     r"writes \[([0-9, ]*)\]", text):
    writes = [int(w) for w in m.group(3).split(",") if w.strip()]
    tiles = {tile_of[w] for w in writes}
    if len(tiles) == 3:
        print(m.group(1))
        sys.exit(0)
sys.exit("no DMA instr sends halo rows to two neighbours")
