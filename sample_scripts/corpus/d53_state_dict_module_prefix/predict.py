import torch

import config
from dataset import TOKENIZER
from model import BERTBaseUncased

LABELS = ["entailment", "neutral", "contradiction"]


def load_model():
    model = BERTBaseUncased()
    model.load_state_dict(torch.load(config.MODEL_PATH, map_location="cpu"))
    model.eval()
    return model


def predict(model, premise, hypothesis):
    enc = TOKENIZER(premise, hypothesis, truncation=True, max_length=config.MAX_LEN,
                    return_tensors="pt")
    with torch.no_grad():
        logits = model(ids=enc["input_ids"], mask=enc["attention_mask"],
                       token_type_ids=enc["token_type_ids"])
    return LABELS[int(logits.argmax(-1))]
