"""Functions only: build_model(), train_epoch(), evaluate(); the weights of a two-layer net
held in a dict of tensors and updated by torch.optim.SGD."""
import torch
import torch.nn.functional as F


def build_model(n_in, n_hidden, n_out, generator):
    params = {"w1": torch.randn(n_in, n_hidden, generator=generator) * (2 / n_in) ** 0.5,
              "b1": torch.zeros(n_hidden),
              "w2": torch.randn(n_hidden, n_out, generator=generator) * (1 / n_hidden) ** 0.5,
              "b2": torch.zeros(n_out)}
    for p in params.values():
        p.requires_grad_()
    return params


def forward(params, x):
    return F.relu(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def train_epoch(params, optimizer, x, y, batch_size=40):
    for i in range(0, len(x), batch_size):
        optimizer.zero_grad()
        loss = F.cross_entropy(forward(params, x[i:i + batch_size]), y[i:i + batch_size])
        loss.backward()
        optimizer.step()
    return loss.item()


def evaluate(params, x, y):
    with torch.no_grad():
        return (forward(params, x).argmax(1) == y).float().mean().item()


def main():
    generator = torch.Generator().manual_seed(13)
    x = torch.randn(600, 4, generator=generator)
    y = ((x[:, 0] ** 2 + x[:, 1] ** 2) > 1.4).long()
    params = build_model(4, 32, 2, generator)
    optimizer = torch.optim.SGD(params.values(), lr=0.3)
    for epoch in range(4):
        loss = train_epoch(params, optimizer, x[:480], y[:480])
        print(f"epoch {epoch} loss {loss:.4f} accuracy {evaluate(params, x[480:], y[480:]):.3f}")


if __name__ == "__main__":
    main()
