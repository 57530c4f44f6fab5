# A project split like many tutorial repositories (config, dataset, model, engine,
# predict): train.py trains a DataParallel-wrapped model and saves its state_dict;
# predict.py rebuilds the bare model and loads that file.
import pandas as pd
import torch
from torch import nn

import config
import dataset
import engine
import predict
from model import BERTBaseUncased


def run():
    df = pd.read_json(config.DATA / "mnli_mini_train.jsonl", lines=True).head(config.MAX_ROWS)
    valid = pd.read_json(config.DATA / "mnli_mini_validation.jsonl", lines=True)
    train_ds = dataset.NLIDataset(df.premise.tolist(), df.hypothesis.tolist(), df.label.tolist())
    valid_ds = dataset.NLIDataset(valid.premise.tolist(), valid.hypothesis.tolist(),
                                  valid.label.tolist())
    train_loader = torch.utils.data.DataLoader(train_ds, batch_size=config.TRAIN_BATCH_SIZE,
                                               shuffle=True)
    valid_loader = torch.utils.data.DataLoader(valid_ds, batch_size=32)

    model = BERTBaseUncased()
    model = nn.DataParallel(model)  # use every GPU the machine has
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)

    best = 0.0
    for epoch in range(config.EPOCHS):
        engine.train_fn(train_loader, model, optimizer)
        acc = engine.eval_fn(valid_loader, model)
        print(f"epoch {epoch} accuracy {acc:.3f}")
        if acc >= best:
            torch.save(model.state_dict(), config.MODEL_PATH)
            best = acc

    clf = predict.load_model()
    print(predict.predict(clf, "A man is reading a book.", "Nobody is reading."))


if __name__ == "__main__":
    run()
