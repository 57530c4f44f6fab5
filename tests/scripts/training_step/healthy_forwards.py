"""Forwards in training mode that are all trained on, and evaluations in eval mode: none of
them is an evaluation in training mode. Gradient accumulation, a loss backpropagated after
two forwards, a teacher in eval mode, a frozen encoder with dropout called in training mode
inside the model's forward (under no_grad) and outside it (its output requires no grad),
and an evaluate() helper that switches modes."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(480, 8)
y = (x[:, 0] > 0).long()


class Student(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.2), nn.Linear(16, 2))

    def forward(self, inputs):
        with torch.no_grad():
            features = self.encoder(inputs)
        return self.head(features)


encoder = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.3))
for p in encoder.parameters():
    p.requires_grad = False
student = Student(encoder)
teacher = nn.Sequential(nn.Linear(8, 32), nn.Dropout(0.5), nn.Linear(32, 2))
teacher.eval()
optimizer = torch.optim.Adam(student.head.parameters(), lr=1e-2)


def evaluate(model, xs, ys):
    model.eval()
    with torch.no_grad():
        accuracy = (model(xs).argmax(1) == ys).float().mean().item()
    model.train()
    return accuracy


for epoch in range(2):
    for i in range(0, 400, 40):
        first = nn.functional.cross_entropy(student(x[i:i + 20]), y[i:i + 20])
        second = nn.functional.cross_entropy(student(x[i + 20:i + 40]), y[i + 20:i + 40])
        with torch.no_grad():
            soft = teacher(x[i:i + 40]).softmax(-1)
        distill = nn.functional.kl_div(student(x[i:i + 40]).log_softmax(-1), soft,
                                       reduction="batchmean")
        features = encoder(x[i:i + 40])  # a frozen extractor in training mode
        ((first + second) / 2 + 0.1 * distill + 0 * features.sum()).backward()
        if (i // 40) % 2 == 1:
            optimizer.step()
            optimizer.zero_grad()
    print(f"epoch {epoch} accuracy {evaluate(student, x[400:], y[400:]):.3f}")
