"""Label ids from np.unique used as the keys of id2label, written with json.dump:
keys must be str, int, float, bool or None, not int64."""
import json
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(0)
names = rng.choice(["red", "green", "blue"], size=300)
classes, ids = np.unique(names, return_inverse=True)
x = torch.randn(300, 4) + torch.as_tensor(ids, dtype=torch.float32).unsqueeze(1)
y = torch.as_tensor(ids)
model = nn.Linear(4, len(classes))
optimizer = torch.optim.Adam(model.parameters(), lr=5e-2)
for i in range(0, 300, 30):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x[i:i + 30]), y[i:i + 30])
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.4f}")

id2label = {label_id: str(name) for label_id, name in zip(np.arange(len(classes)), classes)}
out = Path(tempfile.mkdtemp()) / "config.json"
with open(out, "w") as f:
    json.dump({"id2label": id2label, "num_labels": len(classes)}, f)
