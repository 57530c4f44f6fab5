# Hostile submission: allocates memory without end (safety cap 3 GiB in case no limit holds).
chunks = []
try:
    while len(chunks) < 96:
        chunks.append(bytearray(32 * 1024 * 1024))
except MemoryError:
    print(f"allocated {len(chunks) * 32} MiB then MemoryError")
else:
    print(f"allocated {len(chunks) * 32} MiB without a limit")
