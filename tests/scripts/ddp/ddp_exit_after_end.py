# Two gloo ranks that train nothing and end cleanly; then rank 1's process fails at exit,
# after the script's code returned (what gloo's teardown does now and then when a peer
# closes its sockets first: an abort with no Python traceback).
import atexit
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
total = torch.ones(1)
dist.all_reduce(total)
print(f"rank {dist.get_rank()}: sum {int(total.item())}")
if dist.get_rank() == 1:
    atexit.register(os._exit, 134)
