import torch

device = torch.device("cuda")
print("device", device)
