"""A running loss total kept as a Python float (loss.item()) and averaged per epoch; the
label names and ids written to a JSON config as Python ints after training."""
import json
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

torch.manual_seed(17)
names = np.array(["cat", "dog", "fox"])
raw_labels = np.random.default_rng(17).choice(names, size=480)
classes, label_ids = np.unique(raw_labels, return_inverse=True)
centres = torch.randn(3, 6) * 2
y = torch.as_tensor(label_ids)
x = centres[y] + torch.randn(480, 6)

model = nn.Linear(6, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-2)
for epoch in range(3):
    running = 0.0
    for i in range(0, 480, 32):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
        loss.backward()
        optimizer.step()
        running += loss.item()
    print(f"epoch {epoch} mean loss {running / 15:.4f}")

config = {"id2label": {int(i): str(name) for i, name in enumerate(classes)},
          "label2id": {str(name): int(i) for i, name in enumerate(classes)},
          "num_labels": int(len(classes))}
out = Path(tempfile.mkdtemp()) / "config.json"
out.write_text(json.dumps(config, indent=2))
print("wrote", out)
