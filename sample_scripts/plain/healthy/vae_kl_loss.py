"""A small variational autoencoder: reconstruction MSE plus the KL term (reduced to a
scalar per batch), the reparameterisation trick, evaluated on held-out rows at the end."""
import torch
from torch import nn


class VAE(nn.Module):
    def __init__(self, dim=16, latent=2):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(dim, 32), nn.ReLU())
        self.mu, self.logvar = nn.Linear(32, latent), nn.Linear(32, latent)
        self.dec = nn.Sequential(nn.Linear(latent, 32), nn.ReLU(), nn.Linear(32, dim))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return self.dec(z), mu, logvar


def loss_fn(recon, x, mu, logvar):
    kl = -0.5 * torch.mean(torch.sum(1 + logvar - mu ** 2 - logvar.exp(), dim=1))
    return nn.functional.mse_loss(recon, x) + 0.01 * kl


torch.manual_seed(22)
data = torch.randn(600, 2) @ torch.randn(2, 16)
vae = VAE()
optimizer = torch.optim.Adam(vae.parameters(), lr=5e-3)
for epoch in range(4):
    for i in range(0, 500, 50):
        batch = data[i:i + 50]
        recon, mu, logvar = vae(batch)
        loss = loss_fn(recon, batch, mu, logvar)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
vae.eval()
with torch.no_grad():
    recon, mu, logvar = vae(data[500:])
print(f"held-out loss {loss_fn(recon, data[500:], mu, logvar).item():.4f}")
