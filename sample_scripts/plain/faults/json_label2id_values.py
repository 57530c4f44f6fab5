"""label2id values taken from a numpy array of class ids (np.int64), and the model's
config saved with json.dumps at the start of training: Object of type int64 is not JSON
serializable."""
import json
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn


def save_config(path, label2id, hidden):
    path.write_text(json.dumps({"label2id": label2id, "hidden": hidden}))


def main():
    rng = np.random.default_rng(1)
    label_names = ["low", "mid", "high"]
    label_ids = np.arange(len(label_names))
    label2id = dict(zip(label_names, label_ids))
    save_config(Path(tempfile.mkdtemp()) / "config.json", label2id, 16)
    y = torch.as_tensor(rng.integers(0, 3, 240))
    x = torch.randn(240, 5) + y.unsqueeze(1).float()
    model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for i in range(0, 240, 24):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 24]), y[i:i + 24])
        loss.backward()
        optimizer.step()
        print(loss.item())


if __name__ == "__main__":
    main()
