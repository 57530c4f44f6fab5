"""A dense autoencoder compressing 20-dim points that lie near a 3-dim subspace; MSE
reconstruction loss, reconstruction error measured on held-out rows at the end."""
import torch
from torch import nn

torch.manual_seed(0)
latent = torch.randn(600, 3)
data = latent @ torch.randn(3, 20) + 0.05 * torch.randn(600, 20)
train, test = data[:500], data[500:]

encoder = nn.Sequential(nn.Linear(20, 16), nn.Tanh(), nn.Linear(16, 3))
decoder = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 20))
params = list(encoder.parameters()) + list(decoder.parameters())
optimizer = torch.optim.Adam(params, lr=1e-2)

for epoch in range(4):
    perm = torch.randperm(500)
    for i in range(0, 500, 50):
        batch = train[perm[i:i + 50]]
        loss = nn.functional.mse_loss(decoder(encoder(batch)), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} reconstruction loss {loss.item():.4f}")

with torch.no_grad():
    error = nn.functional.mse_loss(decoder(encoder(test)), test).item()
print(f"held-out reconstruction error {error:.4f}")
