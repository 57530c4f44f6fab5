"""Binary classifier trained with zero_grad(set_to_none=True) after the step, gradient norm
clipping and a cosine schedule; BCEWithLogits on a single output, evaluation in inference mode."""
import torch
from torch import nn

torch.manual_seed(8)
x = torch.randn(640, 8)
y = ((x[:, 0] * x[:, 1] + x[:, 2]) > 0).float()
x_tr, y_tr, x_te, y_te = x[:512], y[:512], x[512:], y[512:]

net = nn.Sequential(nn.Linear(8, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 1))
opt = torch.optim.AdamW(net.parameters(), lr=5e-3, weight_decay=0.01)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=48)

for step in range(48):
    idx = torch.randint(0, 512, (64,))
    logits = net(x_tr[idx]).squeeze(-1)
    loss = nn.functional.binary_cross_entropy_with_logits(logits, y_tr[idx])
    loss.backward()
    nn.utils.clip_grad_norm_(net.parameters(), max_norm=2.0)
    opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)
    if step % 8 == 0:
        print(f"step {step} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.5f}")

net.eval()
with torch.inference_mode():
    acc = ((net(x_te).squeeze(-1) > 0).float() == y_te).float().mean()
print(f"accuracy {acc.item():.3f}")
