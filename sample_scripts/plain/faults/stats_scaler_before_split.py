"""sklearn StandardScaler fit_transform on the whole matrix, then train_test_split."""
import numpy as np
import torch
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn

rng = np.random.default_rng(1)
X = rng.normal(size=(500, 6)) * np.array([1.0, 10.0, 100.0, 3.0, 0.5, 20.0]) + 5.0
y = (X[:, 0] - X[:, 1] / 10 + X[:, 2] / 100 > 5.0).astype(np.int64)
X = StandardScaler().fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=1)

torch.manual_seed(1)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
xt, yt = torch.tensor(X_train, dtype=torch.float32), torch.tensor(y_train)
for epoch in range(4):
    for i in range(0, len(xt), 25):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xt[i:i + 25]), yt[i:i + 25])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
with torch.no_grad():
    pred = model(torch.tensor(X_test, dtype=torch.float32)).argmax(1).numpy()
print("accuracy", (pred == y_test).mean())
