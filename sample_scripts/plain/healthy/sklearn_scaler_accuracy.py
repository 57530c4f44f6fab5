"""Features scaled by sklearn's StandardScaler fitted on the training split only (after
train_test_split); accuracy by sklearn.metrics.accuracy_score."""
import numpy as np
import torch
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn

rng = np.random.default_rng(10)
X = rng.normal(size=(600, 7)) * np.array([1, 10, 100, 0.1, 5, 50, 2])
y = (X[:, 0] + X[:, 1] / 10 - X[:, 2] / 100 > 0).astype(np.int64)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

torch.manual_seed(10)
model = nn.Sequential(nn.Linear(7, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
xt = torch.tensor(X_train, dtype=torch.float32)
yt = torch.tensor(y_train)

for epoch in range(4):
    for i in range(0, len(xt), 48):
        optimizer.zero_grad()
        loss = nn.CrossEntropyLoss()(model(xt[i:i + 48]), yt[i:i + 48])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    pred = model(torch.tensor(X_test, dtype=torch.float32)).argmax(1).numpy()
print("accuracy", accuracy_score(y_test, pred))
